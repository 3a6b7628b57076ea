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
    }

    func testBlocksRunOneAtATimeInTheOrderAdded() {
        let queue = DelegateQueue(target: DispatchQueue(label: "test.delegate", target: .global()), name: "test")
        let trace = Trace()
        let done = expectation(description: "all ran")
        done.expectedFulfillmentCount = 2000
        for value in 0..<2000 {
            queue.addOperation {
                trace.enter(value)
                if value % 100 == 0 { usleep(200) }  // a slow callback must not let the next one start
                trace.leave()
                done.fulfill()
            }
        }
        wait(for: [done], timeout: 20)
        XCTAssertEqual(trace.order, Array(0..<2000))
        XCTAssertFalse(trace.overlapped)
    }

    func testOperationObjectsShareTheSameSerialQueue() {
        let queue = DelegateQueue(target: DispatchQueue(label: "test.delegate", target: .global()), name: "test")
        let trace = Trace()
        let done = expectation(description: "all ran")
        done.expectedFulfillmentCount = 400
        for value in 0..<200 {
            queue.addOperation {
                trace.enter(value)
                usleep(50)
                trace.leave()
                done.fulfill()
            }
            queue.addOperation(BlockOperation {
                trace.enter(-value)
                usleep(50)
                trace.leave()
                done.fulfill()
            })
        }
        wait(for: [done], timeout: 20)
        XCTAssertEqual(trace.order.filter { $0 > 0 }, Array(1..<200), "blocks in order")
        XCTAssertFalse(trace.overlapped, "an Operation never runs beside a block")
    }
}
