import Foundation
import CourierTestSupport
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

    // MARK: - Back-pressure

    /// A delegate queue whose serial queue is suspended (the callback thread has fallen behind),
    /// and a thread of its own adding `count` blocks to it, as URLSession's work queue would.
    private struct HeldQueue {
        let target: DispatchQueue
        let queue: DelegateQueue
        let trace = Trace()
        /// The `addOperation` calls that returned.
        let added = Counter()
        let done: XCTestExpectation
    }

    private func heldQueue(adding count: Int, highWater: Int, longestWait: TimeInterval) -> HeldQueue {
        let target = DispatchQueue(label: "test.held")
        target.suspend()
        let held = HeldQueue(
            target: target,
            queue: DelegateQueue(target: target, name: "test", highWater: highWater, longestWait: longestWait),
            done: expectation(description: "all ran"))
        held.done.expectedFulfillmentCount = count
        Thread {
            for value in 0..<count {
                held.queue.addOperation { held.trace.run(value, busyFor: 0, held.done) }
                held.added.increment()
            }
        }.start()
        return held
    }

    func testTheThreadAddingIsHeldWhileTooManyCallbacksWait() {
        let held = heldQueue(adding: 40, highWater: 8, longestWait: 30)
        waitUntil { held.added.count == 8 }
        Thread.sleep(forTimeInterval: 0.2)
        XCTAssertEqual(held.added.count, 8, "the ninth callback waits while eight are waiting already")
        let released = Date()
        held.target.resume()
        wait(for: [held.done], timeout: 20)
        // The adding thread counts a callback after adding it, so the last count may trail `done`.
        waitUntil { held.added.count == 40 }
        XCTAssertLessThan(Date().timeIntervalSince(released), 15, "woken as the backlog halved, not by the time limit")
        XCTAssertEqual(held.trace.order, Array(0..<40))
        XCTAssertLessThanOrEqual(held.queue.peakBacklog, 9)
    }

    func testTheWaitIsBoundedWhenTheCallbackQueueIsHeldUp() {
        // Held up for long, e.g. by a completion handler that takes its time on the default queue.
        let held = heldQueue(adding: 20, highWater: 4, longestWait: 0.01)
        waitUntil { held.added.count == 20 }  // URLSession slowed down, never stopped
        XCTAssertTrue(held.trace.order.isEmpty, "nothing ran while the queue was held up")
        held.target.resume()
        wait(for: [held.done], timeout: 20)
        XCTAssertEqual(held.trace.order, Array(0..<20))
    }

    func testACallbackThatAddsAnotherNeverWaits() {
        let queue = DelegateQueue(
            target: DispatchQueue(label: "test.nested", target: .global()), name: "test", highWater: 1, longestWait: 30)
        let trace = Trace()
        let done = expectation(description: "all ran")
        done.expectedFulfillmentCount = 11
        let started = Date()
        queue.addOperation {
            // Over the mark at once: waiting here would wait for this very callback to end.
            for value in 1...10 { queue.addOperation { trace.run(value, busyFor: 0, done) } }
            trace.run(0, busyFor: 0, done)
        }
        wait(for: [done], timeout: 20)
        XCTAssertLessThan(Date().timeIntervalSince(started), 15)
        XCTAssertEqual(trace.order, Array(0...10))
    }

    private func waitUntil(_ condition: () -> Bool) {
        let deadline = Date().addingTimeInterval(10)
        while !condition(), Date() < deadline { Thread.sleep(forTimeInterval: 0.002) }
        XCTAssertTrue(condition())
    }
}
