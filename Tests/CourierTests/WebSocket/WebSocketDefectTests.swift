import Foundation
import XCTest
import CourierSupport
@testable import Courier
import CourierTestServer

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Four defects of issue 34's service behaviour, each over real sockets: a send before a failed
/// handshake, pings while the consumer is behind, a cancelled Swift task waiting for a message,
/// and a peer that stops answering in the middle of a conversation.
final class WebSocketDefectTests: WebSocketTaskTestCase {
    func testASendBeforeTheHandshakeThrowsTheHandshakesError() async throws {
        // Given a server that answers the handshake with a wrong accept key
        let server = try WebSocketTestServer(script: .init(handshake: .wrongAcceptKey, steps: []))
        let task = manager.webSocketTask(with: server.url("/"))

        // When a message is sent before resume()
        let sending = Task { () -> CourierError? in
            do throws(CourierError) {
                try await task.send(.string("early"))
                return nil
            } catch {
                return error
            }
        }
        try await Task.sleep(for: .milliseconds(50))
        task.resume()

        // Then the send throws the handshake's error, as the completion does
        let error = await sending.value
        XCTAssertEqual(error?.code, .invalidResponse)
        let completion = await waitForCompletion(of: task)
        XCTAssertEqual(completion?.error?.code, .invalidResponse)
    }

    func testASendBeforeTheHandshakeReturnsOnceItIsAnswered() async throws {
        let server = try TestServer()
        let task = manager.webSocketTask(with: echoURL(server))
        let sending = Task { try await task.send(.string("early")) }
        task.resume()

        try await sending.value
        let echoed = try await task.receive()

        XCTAssertEqual(text(echoed), "early")
        task.cancel(with: .normalClosure, reason: nil)
        await waitForCompletion(of: task)
    }

    func testAPingIsAnsweredWhileTheConsumerIsBehind() async throws {
        // Given a consumer that takes nothing while the server sends more than the buffer holds,
        // then a ping
        let server = try WebSocketTestServer(
            script: .init(
                steps: [
                    .send(.binary(Data(count: 1500))), .pause(milliseconds: 200), .send(.ping(Data("still there?".utf8))),
                    .read(count: 1), .send(.text("after")), .awaitClose(),
                ]))
        let task = manager.webSocketTask(with: server.url("/"))
        task.options.receiveBufferLimit = 1000
        task.resume()

        // When the consumer stays behind, Then the ping is answered all the same
        let deadline = ContinuousClock.now + .seconds(3)
        while ContinuousClock.now < deadline, !server.receivedFrames.contains(where: { $0.frame.opcode == 10 }) {
            try await Task.sleep(for: .milliseconds(10))
        }
        let pong = server.receivedFrames.first { $0.frame.opcode == 10 }
        XCTAssertEqual(pong.map { String(decoding: $0.frame.payload, as: UTF8.self) }, "still there?")
        // Nothing taken yet; at most one short read of data past the limit ("after", once the pong went)
        let held = task.driver.state.withLock { $0.inboxBytes }
        XCTAssertGreaterThanOrEqual(held, 1500)
        XCTAssertLessThanOrEqual(held, 1500 + WebSocketConnectionState.controlFrameReadSize)

        // And the messages held, then the one after, arrive in order
        let first = try await task.receive()
        let after = try await task.receive()
        XCTAssertEqual(data(first)?.count, 1500)
        XCTAssertEqual(text(after), "after")
        task.cancel(with: .normalClosure, reason: nil)
        let completion = await waitForCompletion(of: task)
        XCTAssertNil(completion?.error)
    }

    func testDataBehindTheLimitStillStopsReading() async throws {
        // Given a consumer behind and a server that keeps sending data
        let count = 64
        let server = try WebSocketTestServer(
            script: .init(steps: Array(repeating: .send(.binary(Data(count: 16 << 10))), count: count) + [.awaitClose()]))
        let task = manager.webSocketTask(with: server.url("/"))
        task.options.receiveBufferLimit = 32 << 10
        task.resume()
        try await Task.sleep(for: .milliseconds(300))

        // Then what is held stays within the limit, one read and one short read
        let held = task.driver.state.withLock { $0.inboxBytes }
        XCTAssertLessThanOrEqual(held, (32 << 10) + (64 << 10) + (16 << 10))
        XCTAssertEqual(task.driver.state.withLock { $0.readMode }, .none)
        var received = 0
        while received < count {
            _ = try await task.receive()
            received += 1
        }
        task.cancel(with: .normalClosure, reason: nil)
        await waitForCompletion(of: task)
    }

    func testCancellingTheSwiftTaskOfAReceiveEndsItAndKeepsTheConnection() async throws {
        // Given a receive waiting on a quiet echo
        let server = try TestServer()
        let task = manager.webSocketTask(with: echoURL(server))
        task.resume()
        try await task.send(.string("open"))
        let opened = try await task.receive()
        XCTAssertEqual(text(opened), "open")
        let waiting = Task { () -> CourierError? in
            do throws(CourierError) {
                _ = try await task.receive()
                return nil
            } catch {
                return error
            }
        }
        try await Task.sleep(for: .milliseconds(100))

        // When its Swift task is cancelled (a watchdog closes the WebSocket after 2 s, so that a
        // receive that ignores the cancellation fails this test instead of hanging it)
        let start = ContinuousClock.now
        waiting.cancel()
        let watchdog = Task { [task] in
            try await Task.sleep(for: .seconds(2))
            task.cancel()
        }
        let error = await waiting.value
        watchdog.cancel()

        // Then it ends at once with cancelled, the waiter is gone, and the connection is still open
        XCTAssertEqual(error?.code, .cancelled)
        XCTAssertLessThan(ContinuousClock.now - start, .milliseconds(500))
        XCTAssertTrue(task.driver.state.withLock { $0.receivers.isEmpty && $0.unregisteredReceives.isEmpty })
        XCTAssertEqual(task.state, .running)
        try await task.send(.string("still open"))
        let echoed = try await task.receive()
        XCTAssertEqual(text(echoed), "still open")
        task.cancel(with: .normalClosure, reason: nil)
        let completion = await waitForCompletion(of: task)
        XCTAssertNil(completion?.error)
    }

    func testCancellingTheIterationOfMessagesEndsItAndKeepsTheConnection() async throws {
        let server = try TestServer()
        let task = manager.webSocketTask(with: echoURL(server))
        task.resume()
        let iterating = Task { () -> (any Error)? in
            do {
                for try await _ in task.messages {}
                return nil
            } catch {
                return error
            }
        }
        try await Task.sleep(for: .milliseconds(100))

        let start = ContinuousClock.now
        iterating.cancel()
        let watchdog = Task { [task] in  // as above: fail, never hang
            try await Task.sleep(for: .seconds(2))
            task.cancel()
        }
        let error = await iterating.value
        watchdog.cancel()

        XCTAssertEqual((error as? CourierError)?.code, .cancelled)
        XCTAssertLessThan(ContinuousClock.now - start, .milliseconds(500))
        XCTAssertEqual(task.state, .running)
        try await task.send(.string("next"))
        let next = try await task.receive()
        XCTAssertEqual(text(next), "next")
        task.cancel(with: .normalClosure, reason: nil)
        await waitForCompletion(of: task)
    }

    func testAPeerThatStopsAnsweringMidConversationIsFoundWithinTwiceThePingInterval() async throws {
        // Given a server that answers three pings, then reads on without answering anything
        let interval = Duration.milliseconds(200)
        let server = try WebSocketTestServer(script: .init(steps: [.read(count: 3)], ending: .hang))
        let task = manager.webSocketTask(with: server.url("/"))
        task.options.pingInterval = interval
        task.resume()
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline, server.receivedFrames.filter({ $0.frame.opcode == 9 }).count < 3 {
            try await Task.sleep(for: .milliseconds(5))
        }
        // The third ping was answered at once: from here the peer is silent
        let silentSince = ContinuousClock.now

        let completion = await waitForCompletion(of: task)

        let took = ContinuousClock.now - silentSince
        XCTAssertEqual(completion?.error?.code, .timedOut)
        XCTAssertEqual(task.closeCode, .abnormalClosure)
        XCTAssertLessThanOrEqual(took, interval * 2 + .milliseconds(150))
        XCTAssertGreaterThanOrEqual(took, interval - .milliseconds(50))
    }
}
