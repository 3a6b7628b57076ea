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

    // MARK: - Back-pressure

    /// Adds `count` blocks from a thread of its own (as URLSession's work queue would), each
    /// recording its value; `added` counts the `addOperation` calls that returned.
    private func produce(
        _ count: Int, on queue: DelegateQueue, into trace: Trace, added: Counter, done: XCTestExpectation
    ) -> Thread {
        let producer = Thread {
            for value in 0..<count {
                queue.addOperation { trace.run(value, busyFor: 0, done) }
                added.increment()
            }
        }
        producer.start()
        return producer
    }

    func testTheThreadAddingIsHeldWhileTooManyCallbacksWait() {
        let target = DispatchQueue(label: "test.held")
        target.suspend()  // the callback thread has fallen behind
        let queue = DelegateQueue(target: target, name: "test", highWater: 8, longestWait: 30)
        let trace = Trace()
        let added = Counter()
        let done = expectation(description: "all ran")
        done.expectedFulfillmentCount = 40
        _ = produce(40, on: queue, into: trace, added: added, done: done)
        waitUntil { added.count == 8 }
        Thread.sleep(forTimeInterval: 0.2)
        XCTAssertEqual(added.count, 8, "the ninth callback waits while eight are waiting already")
        let released = Date()
        target.resume()
        wait(for: [done], timeout: 20)
        XCTAssertEqual(added.count, 40)
        XCTAssertLessThan(Date().timeIntervalSince(released), 15, "woken as the backlog halved, not by the time limit")
        XCTAssertEqual(trace.order, Array(0..<40))
        XCTAssertLessThanOrEqual(queue.peakBacklog, 9)
    }

    func testTheWaitIsBoundedWhenTheCallbackQueueIsHeldUp() {
        let target = DispatchQueue(label: "test.stuck")
        target.suspend()  // e.g. a completion handler that takes its time on the default queue
        let queue = DelegateQueue(target: target, name: "test", highWater: 4, longestWait: 0.01)
        let trace = Trace()
        let added = Counter()
        let done = expectation(description: "all ran")
        done.expectedFulfillmentCount = 20
        _ = produce(20, on: queue, into: trace, added: added, done: done)
        waitUntil { added.count == 20 }  // URLSession slowed down, never stopped
        XCTAssertTrue(trace.order.isEmpty, "nothing ran while the queue was held up")
        target.resume()
        wait(for: [done], timeout: 20)
        XCTAssertEqual(trace.order, Array(0..<20))
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
