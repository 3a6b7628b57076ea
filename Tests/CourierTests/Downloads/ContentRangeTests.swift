import XCTest
@testable import Courier

final class ContentRangeTests: XCTestCase {
    func testParsesSatisfiedRange() throws {
        let range = try XCTUnwrap(ContentRange("bytes 100-199/1000"))
        XCTAssertEqual(range.first, 100)
        XCTAssertEqual(range.last, 199)
        XCTAssertEqual(range.completeLength, 1000)
        XCTAssertEqual(range.length, 100)
    }

    func testParsesUnknownCompleteLengthAndUnsatisfiedForm() throws {
        XCTAssertNil(try XCTUnwrap(ContentRange("bytes 0-9/*")).completeLength)
        let unsatisfied = try XCTUnwrap(ContentRange("bytes */4096"))
        XCTAssertNil(unsatisfied.first)
        XCTAssertEqual(unsatisfied.completeLength, 4096)
        XCTAssertNil(unsatisfied.length)
    }

    func testRejectsMalformedAndHostileValuesWithoutTrapping() {
        let bad = [
            "", "bytes", "bytes 1-2", "items 0-1/2", "bytes 5-4/10", "bytes 0-10/10", "bytes -1-5/10",
            "bytes +1-5/10", "bytes 0-5/-10", "bytes */*", "bytes 0-99999999999999999999/100",
            "bytes 0-1/99999999999999999999", "bytes a-b/c", "bytes 0-1-2/5", "bytes 0 - 1/5",
            // An end of Int64.max (only possible with an unknown total) has no representable length.
            "bytes 0-9223372036854775807/*", "bytes 5-9223372036854775807/*",
        ]
        for value in bad { XCTAssertNil(ContentRange(value), value) }
    }

    func testLargestRepresentableRangeHasNoOverflow() throws {
        let range = try XCTUnwrap(ContentRange("bytes 0-9223372036854775806/9223372036854775807"))
        XCTAssertEqual(range.length, Int64.max)
    }
}

final class RangeContinuationTests: XCTestCase {
    private typealias Row = (
        offset: Int64, total: Int64?, status: Int, range: String?, length: Int64?, etag: String?,
        expected: RangeContinuation
    )

    func testDecisionTable() {
        let v1 = "\"v1\""
        let restart = RangeContinuation.restartWithoutRange("")
        let invalid = RangeContinuation.invalid("")
        let rows: [Row] = [
            (100, 1000, 206, "bytes 100-999/1000", 900, v1, .append(end: 1000)),
            (100, nil, 206, "bytes 100-999/1000", nil, nil, .append(end: 1000)),
            (100, 1000, 206, "bytes 100-999/*", 900, v1, .append(end: 1000)),
            // A truthful short 206 (RFC 9110 §14.2): append up to its end; the rest is asked for later.
            (100, 1000, 206, "bytes 100-499/1000", 400, v1, .append(end: 500)),
            (100, 1000, 206, "bytes 0-999/1000", 1000, v1, restart),
            (100, 1000, 206, "bytes 101-999/1000", 899, v1, restart),
            (100, 1000, 206, "bytes 100-1999/2000", 1900, v1, restart),
            // Another version at the right offset (a cache that ignores If-Range).
            (100, 1000, 206, "bytes 100-999/1000", 900, "\"v2\"", restart),
            (100, 1000, 206, "bytes 100-999/1000", 900, "W/\"v1\"", restart),
            // A Content-Length that is not the range's length: the body would overrun or fall short.
            (100, 1000, 206, "bytes 100-999/1000", 1900, v1, invalid),
            (100, 1000, 206, "bytes 100-999/1000", 10, v1, invalid),
            (100, 1000, 206, nil, 900, v1, invalid),
            (100, 1000, 206, "garbage", 900, v1, invalid),
            (100, 1000, 206, "bytes 100-0x3e7/1000", nil, v1, invalid),
            (100, 1000, 200, nil, 1000, v1, .replace),
            (100, 1000, 404, nil, nil, nil, .replace),
            (100, 1000, 500, nil, nil, nil, .replace),
            (1000, 1000, 416, "bytes */1000", nil, nil, .alreadyComplete),
            (1000, nil, 416, "bytes */1000", nil, nil, .alreadyComplete),
            // A 416 that contradicts the total announced before, or the bytes held: start over.
            (1000, 4000, 416, "bytes */1000", nil, nil, restart),
            (500, 1000, 416, "bytes */1000", nil, nil, restart),
            (500, 1000, 416, nil, nil, nil, restart),
        ]
        for row in rows {
            let decision = RangeContinuation.decide(
                offset: row.offset, knownTotal: row.total, validator: v1,
                answer: .init(status: row.status, contentRange: row.range, contentLength: row.length, etag: row.etag))
            XCTAssertEqual(Self.kind(decision), Self.kind(row.expected), "\(row) gave \(decision)")
        }
    }

    func testLastModifiedValidatorMustMatchTheAnswers() {
        let sent = "Tue, 24 Nov 2026 10:00:00 GMT"
        func decide(_ lastModified: String?) -> RangeContinuation {
            RangeContinuation.decide(
                offset: 10, knownTotal: 20, validator: sent,
                answer: .init(status: 206, contentRange: "bytes 10-19/20", contentLength: 10, lastModified: lastModified))
        }
        XCTAssertEqual(decide(sent), .append(end: 20))
        XCTAssertEqual(decide(nil), .append(end: 20), "no validator in the answer: nothing contradicts the one sent")
        XCTAssertEqual(Self.kind(decide("Wed, 25 Nov 2026 10:00:00 GMT")), "restart")
    }

    func testContentLengthIsPlainDigitsOnly() {
        XCTAssertEqual(ContentLength.parse(nil), .absent)
        XCTAssertEqual(ContentLength.parse("0"), .length(0))
        XCTAssertEqual(ContentLength.parse("12345"), .length(12345))
        XCTAssertEqual(ContentLength.parse("7, 7"), .length(7), "a repeated header with one value")
        XCTAssertEqual(ContentLength.parse("9223372036854775295"), .length(Int64.max - 512))
        // From 2^63 - 512 up, no file's length (and the platform kit's "unknown"): a broken answer
        XCTAssertEqual(ContentLength.parse("9223372036854775296"), .impossible("9223372036854775296"))
        XCTAssertEqual(ContentLength.parse("9223372036854775807"), .impossible("9223372036854775807"))
        XCTAssertEqual(
            ContentLength.parse("9223372036854775807, 9223372036854775807"),
            .impossible("9223372036854775807, 9223372036854775807"))
        for bad in ["0x5", "+5", "-1", "5 5", "5, 6", "", " ", "1e3", "٣", "99999999999999999999", "9223372036854775808", "5;"] {
            XCTAssertEqual(ContentLength.parse(bad), .malformed(bad), bad)
        }
    }

    /// The case without its message, so rows need not spell out every reason.
    private static func kind(_ decision: RangeContinuation) -> String {
        switch decision {
        case .append(let end): "append(\(end))"
        case .replace: "replace"
        case .alreadyComplete: "alreadyComplete"
        case .restartWithoutRange: "restart"
        case .invalid: "invalid"
        }
    }
}
