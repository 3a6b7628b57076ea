import XCTest

@testable import Courier

/// Every answer rule of a segmented download (SegmentAnswerCheck.swift), row by row, without sockets.
final class SegmentAnswerCheckTests: XCTestCase {
    private typealias Answer = SegmentAnswerCheck.Answer
    private let date = "Wed, 21 Oct 2015 07:28:00 GMT"

    func testEachSegmentAnswerIsWrittenOnlyWhenItProvesTheAskedBytesOfTheSameVersion() {
        let asked: Range<Int64> = 500..<750
        func decide(_ answer: Answer, validator: String = "\"v1\"") -> SegmentAnswerCheck.Segment {
            SegmentAnswerCheck.segment(asked: asked, length: 1000, validator: validator, answer)
        }
        func ok(
            _ range: String = "bytes 500-749/1000", length: Int64? = 250, etag: String? = "\"v1\"", encoding: String? = nil
        )
            -> Answer
        {
            Answer(status: 206, contentRange: range, contentLength: length, etag: etag, contentEncoding: encoding)
        }
        XCTAssertEqual(decide(ok()), .write(end: 750))
        XCTAssertEqual(decide(ok(encoding: "identity")), .write(end: 750))
        XCTAssertEqual(decide(ok(length: nil)), .write(end: 750))
        XCTAssertEqual(
            decide(Answer(status: 206, contentRange: "bytes 500-749/1000", contentLength: 250, lastModified: date), validator: date),
            .write(end: 750))

        let restarts: [(String, Answer)] = [
            ("another start", ok("bytes 400-649/1000")),
            ("another end", ok("bytes 500-699/1000", length: 200)),
            ("a longer range", ok("bytes 500-799/1000", length: 300)),
            ("another total (the resource changed)", ok("bytes 500-749/2000")),
            ("another ETag (a cache ignoring If-Range)", ok(etag: "\"v2\"")),
            ("a weak ETag back", ok(etag: "W/\"v1\"")),
            ("a 200 after parallel work began", Answer(status: 200, contentRange: nil, contentLength: 1000, etag: "\"v1\"")),
            ("a 416", Answer(status: 416, contentRange: "bytes */900", contentLength: nil)),
            ("a 412 to If-Match", Answer(status: 412, contentRange: nil, contentLength: nil)),
        ]
        for (name, answer) in restarts {
            guard case .restart = decide(answer) else { return XCTFail("\(name): \(decide(answer))") }
        }
        let failures: [(String, Answer)] = [
            ("gzip on a ranged answer", ok(encoding: "gzip")),
            ("no validator on the 206", ok(etag: nil)),
            ("an unknown total", ok("bytes 500-749/*")),
            ("another unit", ok("items 500-749/1000")),
            ("a malformed Content-Range", ok("bytes 749-500/1000")),
            ("no Content-Range", ok("")),
            ("a Content-Length other than the range's", ok(length: 100)),
        ]
        for (name, answer) in failures {
            guard case .fail = decide(answer) else { return XCTFail("\(name): \(decide(answer))") }
        }
        for status in [429, 503, 500, 403] {
            XCTAssertEqual(decide(Answer(status: status, contentRange: nil, contentLength: 0)), .notBytes(status: status))
        }
    }

    func testAValidatorsCounterpartIsTheETagForATagAndLastModifiedForADate() {
        XCTAssertEqual(StrongValidator.counterpart(of: "\"v1\"", etag: "\"v2\"", lastModified: date), "\"v2\"")
        XCTAssertEqual(StrongValidator.counterpart(of: date, etag: "\"v2\"", lastModified: date), date)
        XCTAssertNil(StrongValidator.counterpart(of: "v1", etag: nil, lastModified: date))
        // Only an entity tag binds a split download's ranges: a date survives a same-size replacement
        XCTAssertTrue(StrongValidator.bindsSegments("\"v1\""))
        XCTAssertTrue(StrongValidator.bindsSegments("v1"))
        XCTAssertFalse(StrongValidator.bindsSegments(date))
    }
}
