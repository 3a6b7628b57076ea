import XCTest

@testable import Courier

/// The segment map's operations and invariants (SegmentMap.swift, SegmentMap+Changes.swift),
/// without sockets.
final class SegmentMapTests: XCTestCase {
    private let url = URL(string: "http://127.0.0.1:8/big.bin")!
    private let a = ConnectionID(1)
    private let b = ConnectionID(2)
    private let c = ConnectionID(3)

    private func map(length: Int64 = 1000) -> SegmentMap {
        SegmentMap(url: url, validator: "\"v1\"", length: length)
    }

    private func ranges(_ map: SegmentMap) -> [[Int64]] {
        map.segments.map { [$0.start, $0.end, $0.written] }
    }

    func testANewMapIsOneIdleSegmentOverTheWholeFile() {
        // Given / When
        let fresh = map()
        // Then
        XCTAssertEqual(ranges(fresh), [[0, 1000, 0]])
        XCTAssertNil(fresh.violation())
        XCTAssertFalse(fresh.isComplete)
        XCTAssertEqual(fresh.contiguousPrefix, 0)
    }

    func testAnEmptyFileIsCompleteWithNoSegment() {
        XCTAssertTrue(map(length: 0).isComplete)
        XCTAssertEqual(map(length: 0).segments, [])
    }

    func testUntouchedIdleRangesAfterAConnectionGoBackToItUpToWhereItsAnswerStops() throws {
        // Given `a` streaming the whole file (asked 0-999) but clipped at 250 by `b` (250..<500)
        // and `c` (500..<1000), both refused before writing anything
        var map = map()
        try map.assign(a, range: 0..<1000)
        try map.assign(b, range: 500..<1000)
        try map.assign(c, range: 250..<500)
        _ = try map.advance(a, by: 100)
        map.release(b)
        map.release(c)
        // When `a`'s answer stops at 750, then at the end of the file
        map.extend(a, through: 750)
        // Then only whole untouched ranges up to where its answer stops go back to it
        XCTAssertEqual(ranges(map), [[0, 500, 100], [500, 1000, 0]])
        XCTAssertTrue(map.extend(a, through: 1000))
        XCTAssertEqual(ranges(map), [[0, 1000, 100]])
        XCTAssertEqual(map.position(of: a), 100..<1000)
        XCTAssertNil(map.violation())
        XCTAssertFalse(map.extend(a, through: 1000), "nothing more to give back")
    }

    func testARangeWithBytesWrittenOrARaceIsNotGivenBack() throws {
        // Given `a` clipped at 500 by `b`, which wrote 10 bytes and then failed
        var map = map()
        try map.assign(a, range: 0..<1000)
        try map.assign(b, range: 500..<1000)
        _ = try map.advance(b, by: 10)
        map.release(b)
        // Then `b`'s range keeps its bytes and is not given to `a`
        XCTAssertFalse(map.extend(a, through: 1000))
        XCTAssertEqual(ranges(map), [[0, 500, 0], [500, 1000, 10]])
        // And a range an end game races is never extended (the duplicate's request stops at its end)
        var raced = self.map()
        try raced.assign(a, range: 0..<1000)
        try raced.assign(b, range: 500..<1000)
        raced.release(b)
        try raced.duplicate(c, racing: a)
        XCTAssertFalse(raced.extend(a, through: 1000))
    }

    func testASecondConnectionStartingInsideATailSplitsItAndTheOwnerStopsThere() throws {
        // Given a connection that wrote 100 bytes of the whole file
        var map = map()
        try map.assign(a, range: 0..<1000)
        _ = try map.advance(a, by: 100)
        // When another starts at the middle of the untouched tail
        try map.assign(b, range: 550..<1000)
        // Then the first one's range ends there, its bytes unmoved
        XCTAssertEqual(ranges(map), [[0, 550, 100], [550, 1000, 0]])
        XCTAssertEqual(map.position(of: a), 100..<550)
        XCTAssertEqual(map.position(of: b), 550..<1000)
        XCTAssertNil(map.violation())
    }

    func testWrittenBytesNeverChangeHands() throws {
        // Given
        var map = map()
        try map.assign(a, range: 0..<1000)
        _ = try map.advance(a, by: 100)
        // When / Then: a range starting inside written bytes, or not ending at the segment's end, is refused
        XCTAssertThrowsError(try map.assign(b, range: 50..<1000))
        XCTAssertThrowsError(try map.assign(b, range: 100..<1000), "the owner's next byte is not free")
        XCTAssertThrowsError(try map.assign(b, range: 500..<900))
        XCTAssertThrowsError(try map.assign(a, range: 600..<1000), "one range per connection")
        XCTAssertEqual(ranges(map), [[0, 1000, 100]])
    }

    func testAdvanceIsClippedAtTheRangeEndAndCompletingReleasesTheConnection() throws {
        // Given a range shortened by a split while bytes were in flight
        var map = map()
        try map.assign(a, range: 0..<1000)
        try map.assign(b, range: 500..<1000)
        // When the first writes more than its range holds
        let advance = try map.advance(a, by: 700)
        // Then only its range is counted, and it is released
        XCTAssertEqual(advance, SegmentMap.Advance(accepted: 500, completedRange: true, cancel: nil))
        XCTAssertNil(map.index(of: a))
        XCTAssertEqual(map.writtenBytes, 500)
        XCTAssertEqual(map.contiguousPrefix, 500)
    }

    func testCompleteSegmentsMergeIntoTheNextOne() throws {
        // Given
        var map = map()
        try map.assign(a, range: 0..<1000)
        try map.assign(b, range: 500..<1000)
        _ = try map.advance(b, by: 200)
        // When the first range completes
        _ = try map.advance(a, by: 500)
        // Then one segment remains, its written bytes the prefix
        XCTAssertEqual(ranges(map), [[0, 1000, 700]])
        XCTAssertEqual(map.segments.first?.owner, b, "the second range's owner goes on writing")
        XCTAssertEqual(map.position(of: b), 700..<1000)
    }

    func testReleasingAnOwnerLeavesItsRangeIdleWithItsBytes() throws {
        // Given
        var map = map()
        try map.assign(a, range: 0..<1000)
        _ = try map.advance(a, by: 300)
        // When
        map.release(a)
        // Then another connection continues from the next byte
        XCTAssertEqual(ranges(map), [[0, 1000, 300]])
        try map.assign(b, range: 300..<1000)
        XCTAssertEqual(map.position(of: b), 300..<1000)
    }

    func testTheDuplicateWinningTheEndGameCompletesTheRangeAndCancelsTheOwner() throws {
        // Given a slow owner near the end and a duplicate from its next byte
        var map = map(length: 100)
        try map.assign(a, range: 0..<100)
        _ = try map.advance(a, by: 60)
        try map.duplicate(b, racing: a)
        XCTAssertEqual(map.position(of: b), 60..<100)
        _ = try map.advance(a, by: 10)
        // When the duplicate reaches the end first
        let advance = try map.advance(b, by: 40)
        // Then the range is complete, counted once, and the owner is the one to cancel
        XCTAssertEqual(advance, SegmentMap.Advance(accepted: 40, completedRange: true, cancel: a))
        XCTAssertTrue(map.isComplete)
        XCTAssertEqual(map.writtenBytes, 100)
        XCTAssertEqual(map.connections, [])
    }

    func testTheOwnerWinningTheEndGameCancelsTheDuplicate() throws {
        // Given
        var map = map(length: 100)
        try map.assign(a, range: 0..<100)
        _ = try map.advance(a, by: 60)
        try map.duplicate(b, racing: a)
        _ = try map.advance(b, by: 30)
        // When
        let advance = try map.advance(a, by: 40)
        // Then
        XCTAssertEqual(advance.cancel, b)
        XCTAssertTrue(map.isComplete)
        XCTAssertEqual(map.writtenBytes, 100)
    }

    func testReleasingARacedOwnerCancelsItsDuplicateToo() throws {
        // Given
        var map = map(length: 100)
        try map.assign(a, range: 0..<100)
        try map.duplicate(b, racing: a)
        // When / Then
        XCTAssertEqual(map.release(a), b)
        XCTAssertEqual(map.connections, [])
        XCTAssertThrowsError(try map.duplicate(c, racing: a), "no owner left to race")
    }

    func testBrokenTilingsAreRefusedWithTypedErrors() {
        typealias Segment = SegmentMap.Segment
        let rows: [(segments: [Segment], expected: SegmentMapError)] = [
            ([Segment(start: 0, end: 600, written: 0), Segment(start: 500, end: 1000, written: 0)], .overlap(at: 500)),
            ([Segment(start: 0, end: 400, written: 0), Segment(start: 500, end: 1000, written: 0)], .gap(400..<500)),
            ([Segment(start: 0, end: 900, written: 0)], .gap(900..<1000)),
            ([Segment(start: 100, end: 1000, written: 0)], .gap(0..<100)),
        ]
        for row in rows {
            XCTAssertThrowsError(try SegmentMap(url: url, validator: "v", length: 1000, segments: row.segments)) { error in
                XCTAssertEqual(error as? SegmentMapError, row.expected)
            }
        }
        let outOfBounds: [[Segment]] = [
            [Segment(start: 0, end: 1001, written: 0)],
            [Segment(start: 0, end: 1000, written: 1001)],
            [Segment(start: 0, end: 1000, written: -1)],
            [Segment(start: 0, end: 0, written: 0), Segment(start: 0, end: 1000, written: 0)],
        ]
        for segments in outOfBounds {
            XCTAssertThrowsError(try SegmentMap(url: url, validator: "v", length: 1000, segments: segments), "\(segments)")
        }
    }
}
