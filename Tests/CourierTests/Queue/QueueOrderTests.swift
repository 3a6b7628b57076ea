import XCTest
@testable import Courier

/// The queue's run order: priority, then FIFO, per host, under a per-host cap.
final class QueueOrderTests: XCTestCase {
    private func item(_ id: String, host: String = "a", priority: Int = 0, sequence: UInt64) -> DownloadQueue.Item {
        DownloadQueue.Item(
            id: id, url: URL(string: "http://\(host):80/\(id)")!, headers: [:], destination: URL(fileURLWithPath: "/tmp/\(id)"),
            expectedLength: nil, sha256: nil, priority: priority, metadata: nil, state: .queued, sequence: sequence)
    }

    func testHigherPriorityFirstThenFIFOWhateverTheInsertionOrder() {
        var order = QueueOrder()
        order.insert(item("low1", sequence: 1))
        order.insert(item("high2", priority: 5, sequence: 4))
        order.insert(item("low2", sequence: 2))
        order.insert(item("high1", priority: 5, sequence: 3))
        order.insert(item("mid", priority: 1, sequence: 5))
        var popped: [String] = []
        while let id = order.popNext(hasRoom: { _ in true }) { popped.append(id) }
        XCTAssertEqual(popped, ["high1", "high2", "mid", "low1", "low2"])
        XCTAssertEqual(order.count, 0)
    }

    func testAHostWithoutRoomIsSkippedAndRemovedItemsNeverCome() {
        var order = QueueOrder()
        order.insert(item("a1", host: "a", sequence: 1))
        order.insert(item("b1", host: "b", sequence: 2))
        order.insert(item("a2", host: "a", sequence: 3))
        order.remove(item("a2", host: "a", sequence: 3))
        XCTAssertEqual(order.popNext(hasRoom: { $0 != "a:80" }), "b1")
        XCTAssertNil(order.popNext(hasRoom: { $0 != "a:80" }))
        XCTAssertEqual(order.popNext(hasRoom: { _ in true }), "a1")
        XCTAssertNil(order.popNext(hasRoom: { _ in true }))
    }

    func testFiftyThousandItemsOnOneHostGoInAndOutInOrder() {
        // Adding is O(1) per item in the common case (in order) and taking is O(1) amortised:
        // this ran in minutes when each insert copied the host's list.
        var order = QueueOrder()
        for index in 0..<50_000 { order.insert(item("i\(index)", sequence: UInt64(index))) }
        var expected = 0
        while let id = order.popNext(hasRoom: { _ in true }) {
            XCTAssertEqual(id, "i\(expected)")
            expected += 1
        }
        XCTAssertEqual(expected, 50_000)
    }
}
