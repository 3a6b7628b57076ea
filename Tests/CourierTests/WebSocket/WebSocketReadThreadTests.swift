import Foundation
import XCTest
@testable import Courier
import CourierTestServer

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The connection's reader: its own thread (``WebSocketReadThread``) while the process has a
/// slot, a dispatch read source past the limit; both over real sockets.
final class WebSocketReadThreadTests: WebSocketTaskTestCase {
    private func readsOnItsOwnThread(_ task: WebSocketTask) -> Bool {
        task.driver.queue.sync { task.driver.io.readsOnItsOwnThread }
    }

    /// Runs `body` with the process's reader-thread limit set to `limit`, then puts it back.
    private func withThreadLimit(_ limit: Int, _ body: () async throws -> Void) async rethrows {
        let old = WebSocketReadThread.slots.withLock { slots -> Int in
            defer { slots.limit = limit }
            return slots.limit
        }
        defer { WebSocketReadThread.slots.withLock { $0.limit = old } }
        try await body()
    }

    func testAConnectionReadsOnItsOwnThreadAndGivesTheSlotBackAtTheEnd() async throws {
        // Given the echo endpoint and the slots in use before
        let server = try TestServer()
        let before = WebSocketReadThread.slots.withLock { $0.used }
        let task = manager.webSocketTask(with: echoURL(server))
        task.resume()

        // When a message goes there and back
        try await task.send(.string("one"))
        let echoed = try await task.receive()
        XCTAssertEqual(text(echoed), "one")

        // Then its reader is a thread of its own, whose slot is given back once the task ends
        XCTAssertTrue(readsOnItsOwnThread(task))
        task.cancel(with: .normalClosure, reason: nil)
        let completion = await waitForCompletion(of: task)
        XCTAssertNil(completion?.error)
        let deadline = ContinuousClock.now + .seconds(5)
        while WebSocketReadThread.slots.withLock({ $0.used }) > before, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        XCTAssertLessThanOrEqual(WebSocketReadThread.slots.withLock { $0.used }, before)
    }

    func testPastTheThreadLimitAConnectionReadsWithADispatchSource() async throws {
        try await withThreadLimit(0) {
            // Given no reader-thread slot left
            let server = try TestServer()
            let task = manager.webSocketTask(with: echoURL(server))
            task.resume()

            // When messages go there and back
            for index in 0..<50 {
                try await task.send(.string("message \(index)"))
                let echoed = try await task.receive()
                XCTAssertEqual(text(echoed), "message \(index)")
            }

            // Then they did, read by the dispatch source
            XCTAssertFalse(readsOnItsOwnThread(task))
            task.cancel(with: .normalClosure, reason: nil)
            let completion = await waitForCompletion(of: task)
            XCTAssertNil(completion?.error)
        }
    }

    func testPastTheThreadLimitThePausePolicyStopsReadingAndLosesNothing() async throws {
        try await withThreadLimit(0) {
            // Given a server that sends 2 MiB to a consumer that waits, read by a dispatch source
            let count = 32
            let server = try WebSocketTestServer(
                script: .init(steps: Array(repeating: .send(.binary(Data(count: 64 << 10))), count: count) + [.send(.close(1000))]))
            let task = manager.webSocketTask(with: server.url("/"))
            task.options.receiveBufferLimit = 256 << 10
            task.resume()
            try await Task.sleep(for: .milliseconds(300))

            // Then at most the limit and one read's messages are held, until the consumer catches up
            let held = task.driver.state.withLock { $0.inboxBytes }
            XCTAssertLessThanOrEqual(held, (256 << 10) + (64 << 10) + (64 << 10))
            XCTAssertFalse(readsOnItsOwnThread(task))
            var received = 0
            for try await message in task.messages {
                XCTAssertEqual(data(message)?.count, 64 << 10)
                received += 1
            }
            XCTAssertEqual(received, count)
            let completion = await waitForCompletion(of: task)
            XCTAssertNil(completion?.error)
        }
    }

    func testPastTheThreadLimitACloseWhileReadingIsPausedEndsWhenTheServerAnswers() async throws {
        try await withThreadLimit(0) {
            let (_, completion, took) = try await closeWhileReadingIsPaused()

            XCTAssertNil(completion?.error)
            XCTAssertLessThan(took, .seconds(2))
        }
    }
}
