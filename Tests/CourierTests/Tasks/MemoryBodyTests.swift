import Foundation
import XCTest

@testable import Courier

/// The in-memory body and its bound as a pure value.
final class MemoryBodyTests: XCTestCase {
    func testChunksWithinTheLimitAreHeldInOrder() {
        var body = MemoryBody(limit: 10)
        XCTAssertEqual(body.append(Data("abc".utf8), received: 0, spanEnd: nil), .appended)
        XCTAssertEqual(body.append(Data("defg".utf8), received: 3, spanEnd: nil), .appended)
        XCTAssertEqual(body.data, Data("abcdefg".utf8))
    }

    func testAChunkThatWouldPassTheLimitIsRefusedAndNotHeld() {
        // Given a body of 8 bytes under a 10-byte limit
        var body = MemoryBody(limit: 10)
        _ = body.append(Data(count: 8), received: 0, spanEnd: nil)
        // When a 3-byte chunk arrives
        let outcome = body.append(Data(count: 3), received: 8, spanEnd: nil)
        // Then it is refused, and the body holds what it held
        XCTAssertEqual(outcome, .tooLarge)
        XCTAssertEqual(body.data.count, 8)
    }

    func testABodyExactlyAtTheLimitIsAccepted() {
        var body = MemoryBody(limit: 4)
        XCTAssertEqual(body.append(Data(count: 4), received: 0, spanEnd: nil), .appended)
    }

    func testBytesEarlierAttemptsBroughtCountTowardsTheLimit() {
        // A body continued with Range: the limit is on the whole body, not this attempt's part.
        var body = MemoryBody(limit: 10)
        XCTAssertEqual(body.append(Data(count: 2), received: 9, spanEnd: nil), .tooLarge)
    }

    func testAChunkPastThe206sRangeIsRefused() {
        var body = MemoryBody(limit: 100)
        XCTAssertEqual(body.append(Data(count: 5), received: 10, spanEnd: 12), .pastRange(end: 12))
        XCTAssertTrue(body.data.isEmpty)
    }

    func testAnAnnouncedLengthOverTheLimitIsRefusedBeforeAnyByte() {
        var body = MemoryBody(limit: 10)
        XCTAssertFalse(body.expect(11))
        XCTAssertTrue(body.expect(10))
        XCTAssertTrue(body.expect(nil), "an unknown length is bounded chunk by chunk")
    }

    func testResetDropsTheBytesAndTakeHandsThemOverOnce() {
        var body = MemoryBody(limit: 10)
        _ = body.append(Data("ab".utf8), received: 0, spanEnd: nil)
        body.reset()
        XCTAssertTrue(body.data.isEmpty)
        _ = body.append(Data("cd".utf8), received: 0, spanEnd: nil)
        XCTAssertEqual(body.take(), Data("cd".utf8))
        XCTAssertTrue(body.take().isEmpty)
    }
}
