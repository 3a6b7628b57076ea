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
        ]
        for value in bad { XCTAssertNil(ContentRange(value), value) }
    }

    func testLargestRepresentableRangeHasNoOverflow() throws {
        let range = try XCTUnwrap(ContentRange("bytes 0-9223372036854775806/9223372036854775807"))
        XCTAssertEqual(range.length, Int64.max)
    }
}

final class RangeContinuationTests: XCTestCase {
    func testDecisionTable() {
        let rows: [(offset: Int64, total: Int64?, status: Int, range: String?, expected: RangeContinuation)] = [
            (100, 1000, 206, "bytes 100-999/1000", .append),
            (100, nil, 206, "bytes 100-999/1000", .append),
            (100, 1000, 206, "bytes 100-999/*", .append),
            (100, 1000, 206, "bytes 0-999/1000", .restartWithoutRange),
            (100, 1000, 206, "bytes 101-999/1000", .restartWithoutRange),
            (100, 1000, 206, "bytes 100-1999/2000", .restartWithoutRange),
            (100, 1000, 206, nil, .restartWithoutRange),
            (100, 1000, 206, "garbage", .restartWithoutRange),
            (100, 1000, 200, nil, .replace),
            (100, 1000, 404, nil, .replace),
            (100, 1000, 500, nil, .replace),
            (1000, 1000, 416, "bytes */1000", .alreadyComplete),
            (500, 1000, 416, "bytes */1000", .replace),
            (500, 1000, 416, nil, .replace),
        ]
        for row in rows {
            XCTAssertEqual(
                RangeContinuation.decide(
                    offset: row.offset, knownTotal: row.total, status: row.status, contentRange: row.range),
                row.expected, "\(row)")
        }
    }
}
