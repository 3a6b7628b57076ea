import XCTest
@testable import Courier

/// The stream buffer's ring: chunks come out as they went in, across wrap-around and growth.
final class ByteRingTests: XCTestCase {
    func testChunksComeOutWholeAndInOrderAcrossWrapAroundAndGrowth() {
        let ring = ByteRing(expectedMaximum: 200_000)
        var expected: [Data] = []
        var generator = SystemRandomNumberGenerator()
        var next: UInt8 = 0
        func chunk(_ size: Int) -> Data {
            defer { next &+= 1 }
            return Data((0..<size).map { UInt8(truncatingIfNeeded: $0) &+ next })
        }
        // Interleave appends and takes so the ring wraps many times and grows twice.
        for round in 0..<2000 {
            let size = Int.random(in: 1...20_000, using: &generator)
            let data = chunk(size)
            ring.append(data)
            expected.append(data)
            if round % 3 != 0 || ring.count > 150_000 {
                XCTAssertEqual(ring.removeFirst(), expected.removeFirst())
            }
        }
        while let data = ring.removeFirst() { XCTAssertEqual(data, expected.removeFirst()) }
        XCTAssertEqual(expected, [])
        XCTAssertEqual(ring.count, 0)
        XCTAssertTrue(ring.isEmpty)
    }

    func testEmptyChunksAreIgnoredAndReleaseForgetsEverything() {
        let ring = ByteRing(expectedMaximum: 1024)
        ring.append(Data())
        XCTAssertTrue(ring.isEmpty)
        ring.append(Data([1, 2, 3]))
        ring.release()
        XCTAssertTrue(ring.isEmpty)
        XCTAssertNil(ring.removeFirst())
        ring.append(Data([4]))
        XCTAssertEqual(ring.removeFirst(), Data([4]))
    }
}
