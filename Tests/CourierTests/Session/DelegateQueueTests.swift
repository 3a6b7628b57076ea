import Foundation
import XCTest

@testable import Courier

/// The delegate queue URLSession calls back on: one at a time, in the order added.
final class DelegateQueueTests: XCTestCase {
    /// Records the order blocks ran in and whether two ever overlapped.
    private final class Trace: @unchecked Sendable {  // every field is touched under `lock`
        let lock = NSLock()
        var order: [Int] = []
        var running = 0
        var overlapped = false

        func enter(_ value: Int) {
            lock.withLock {
                running += 1
                if running > 1 { overlapped = true }
                order.append(value)
            }
        }

        func leave() { lock.withLock { running -= 1 } }

        /// One callback: noted, busy for `micros`, then done.
        func run(_ value: Int, busyFor micros: useconds_t, _ done: XCTestExpectation) {
            enter(value)
            if micros > 0 { usleep(micros) }
            leave()
            done.fulfill()
        }
    }

    private func makeQueue() -> DelegateQueue {
        DelegateQueue(target: DispatchQueue(label: "test.delegate", target: .global()), name: "test")
    }

    func testBlocksRunOneAtATimeInTheOrderAdded() {
        let queue = makeQueue()
        let trace = Trace()
        let done = expectation(description: "all ran")
        done.expectedFulfillmentCount = 2000
        for value in 0..<2000 {
            // Now and then a slow callback: the next one must still wait for it.
            queue.addOperation { trace.run(value, busyFor: value % 100 == 0 ? 200 : 0, done) }
        }
        wait(for: [done], timeout: 20)
        XCTAssertEqual(trace.order, Array(0..<2000))
        XCTAssertFalse(trace.overlapped)
    }

    func testOperationObjectsShareTheSameSerialQueue() {
        let queue = makeQueue()
        let trace = Trace()
        let done = expectation(description: "all ran")
        done.expectedFulfillmentCount = 400
        for value in 0..<200 {
            queue.addOperation { trace.run(value, busyFor: 50, done) }
            queue.addOperation(BlockOperation { trace.run(-value, busyFor: 50, done) })
        }
        wait(for: [done], timeout: 20)
        XCTAssertEqual(trace.order.filter { $0 > 0 }, Array(1..<200), "blocks in order")
        XCTAssertFalse(trace.overlapped, "an Operation never runs beside a block")
    }
}
