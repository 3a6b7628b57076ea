import XCTest

@testable import Courier

/// Every answer rule of a segmented download (SegmentAnswerCheck.swift), row by row, without sockets.
final class SegmentAnswerCheckTests: XCTestCase {
    private typealias Answer = SegmentAnswerCheck.Answer
    private let date = "Wed, 21 Oct 2015 07:28:00 GMT"

    func testTheFirstAnswerDecidesWhetherTheFileCanBeSplit() {
        let rows: [(String, Answer, SegmentAnswerCheck.First)] = [
            ("a 206 from 0 with a total and a strong ETag",
             Answer(status: 206, contentRange: "bytes 0-999/1000", contentLength: 1000, etag: "\"v1\""),
             .split(length: 1000, validator: "\"v1\"", end: 1000)),
            ("a shorter 206 still binds the whole length",
             Answer(status: 206, contentRange: "bytes 0-99/1000", contentLength: 100, etag: "\"v1\""),
             .split(length: 1000, validator: "\"v1\"", end: 100)),
            ("Last-Modified binds too",
             Answer(status: 206, contentRange: "bytes 0-999/1000", contentLength: 1000, lastModified: date),
             .split(length: 1000, validator: date, end: 1000)),
            ("a 200: the server ignores Range",
             Answer(status: 200, contentRange: nil, contentLength: 1000, etag: "\"v1\""),
             .sequential("the server ignores Range (200)")),
            ("no complete length",
             Answer(status: 206, contentRange: "bytes 0-999/*", contentLength: 1000, etag: "\"v1\""),
             .sequential("a 206 without the complete length")),
            ("only a weak ETag",
             Answer(status: 206, contentRange: "bytes 0-999/1000", contentLength: 1000, etag: "W/\"v1\""),
             .sequential("no strong validator binds ranges to one version")),
            ("gzip on a ranged answer",
             Answer(status: 206, contentRange: "bytes 0-999/1000", contentLength: 1000, etag: "\"v1\"", contentEncoding: "gzip"),
             .fail("a 206 with Content-Encoding gzip")),
            ("a 206 elsewhere",
             Answer(status: 206, contentRange: "bytes 5-999/1000", contentLength: 995, etag: "\"v1\""),
             .fail("a 206 starting at byte 5, not at 0")),
            ("an error status", Answer(status: 404, contentRange: nil, contentLength: 9), .notBytes(status: 404)),
        ]
        for (name, answer, expected) in rows {
            XCTAssertEqual(SegmentAnswerCheck.first(answer), expected, name)
        }
    }

    func testEachSegmentAnswerIsWrittenOnlyWhenItProvesTheAskedBytesOfTheSameVersion() {
        let asked: Range<Int64> = 500..<750
        func decide(_ answer: Answer, validator: String = "\"v1\"") -> SegmentAnswerCheck.Segment {
            SegmentAnswerCheck.segment(asked: asked, length: 1000, validator: validator, answer)
        }
        func ok(_ range: String = "bytes 500-749/1000", length: Int64? = 250, etag: String? = "\"v1\"", encoding: String? = nil)
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
    }
}
