import Foundation
import XCTest
import CourierSupport
@testable import Courier
import CourierTestServer

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Pings, a dead peer, the receive buffer's overflow policies and back-pressure on `send`.
final class WebSocketServiceTests: WebSocketTaskTestCase {
    func testAPingIsAnsweredByTheEcho() async throws {
        let server = try TestServer()
        let task = manager.webSocketTask(with: echoURL(server))
        task.resume()

        let answered = await withCheckedContinuation { (continuation: CheckedContinuation<(any Error)?, Never>) in
            task.sendPing { continuation.resume(returning: $0) }
        }

        XCTAssertNil(answered)
        task.cancel(with: .normalClosure, reason: nil)
        await waitForCompletion(of: task)
    }

    func testAPingPendingWhenTheConnectionEndsGetsTheError() async throws {
        // Given a server that closes TCP without reading the ping
        let server = try WebSocketTestServer(script: .init(steps: [.send(.text("ready")), .pause(milliseconds: 200)], ending: .close))
        let task = manager.webSocketTask(with: server.url("/"))
        task.resume()
        _ = try await task.receive()

        let answered = await withCheckedContinuation { (continuation: CheckedContinuation<(any Error)?, Never>) in
            task.sendPing { continuation.resume(returning: $0) }
        }

        XCTAssertEqual((answered as? CourierError)?.code, .connectionLost)
    }

    func testAPingFloodIsAnsweredPingForPingAndMessagesStillArrive() async throws {
        let server = try WebSocketTestServer(script: .init(steps: [.floodPings(count: 5000), .send(.text("after")), .awaitClose()]))
        let task = manager.webSocketTask(with: server.url("/"))
        task.resume()

        let message = try await task.receive()

        XCTAssertEqual(text(message), "after")
        task.cancel(with: .normalClosure, reason: nil)
        let completion = await waitForCompletion(of: task)
        XCTAssertNil(completion?.error)
        XCTAssertEqual(server.receivedFrames.filter { $0.frame.opcode == 10 }.count, 5000)
    }

    func testADeadPeerIsFoundWithinTwiceThePingInterval() async throws {
        // Given a server that reads everything and never answers
        let server = try WebSocketTestServer(script: .init(steps: [.send(.text("ready"))], ending: .hang))
        let task = manager.webSocketTask(with: server.url("/"))
        task.options.pingInterval = .milliseconds(200)
        task.resume()
        _ = try await task.receive()
        let start = ContinuousClock.now

        let completion = await waitForCompletion(of: task)

        let took = ContinuousClock.now - start
        XCTAssertEqual(completion?.error?.code, .timedOut)
        XCTAssertLessThanOrEqual(took, .milliseconds(400 + 150))
        XCTAssertGreaterThanOrEqual(took, .milliseconds(300))
        XCTAssertFalse(server.receivedFrames.filter { $0.frame.opcode == 9 }.isEmpty)
    }

    func testALivePeerIsKeptWithPings() async throws {
        let server = try TestServer()
        let task = manager.webSocketTask(with: echoURL(server))
        task.options.pingInterval = .milliseconds(50)
        task.resume()

        try await Task.sleep(for: .milliseconds(400))

        XCTAssertEqual(task.state, .running)
        try await task.send(.string("still here"))
        let echoed = try await task.receive()
        XCTAssertEqual(text(echoed), "still here")
        task.cancel(with: .normalClosure, reason: nil)
        let completion = await waitForCompletion(of: task)
        XCTAssertNil(completion?.error)
    }

    func testFailPolicyFailsOnceTheHeldMessagesAreTaken() async throws {
        let message = WebSocketServerFrame.binary(Data(count: 500))
        let server = try WebSocketTestServer(
            script: .init(steps: Array(repeating: .send(message), count: 10) + [.awaitClose()]))
        let task = manager.webSocketTask(with: server.url("/"))
        task.options.receiveBufferLimit = 1000
        task.options.overflow = .fail
        task.resume()

        let completion = await waitForCompletion(of: task)

        XCTAssertEqual(completion?.error?.code, .bufferOverflow)
        var taken = 0
        while true {
            do throws(CourierError) {
                _ = try await task.receive()
                taken += 1
            } catch {
                XCTAssertEqual(error.code, .bufferOverflow)
                break
            }
        }
        XCTAssertEqual(taken, 3)  // 1000 bytes held, plus the message that crossed the limit
        XCTAssertEqual(server.receivedFrames.last?.frame.closeCode, 1008)
    }

    func testPausePolicyStopsReadingAndLosesNothing() async throws {
        // Given a server that sends 8 MiB in 64 KiB messages to a consumer that waits
        let count = 128
        let server = try WebSocketTestServer(
            script: .init(
                steps: Array(repeating: .send(.binary(Data(count: 64 << 10))), count: count) + [.send(.close(1000)), .read(count: 1)]))
        let task = manager.webSocketTask(with: server.url("/"))
        task.options.receiveBufferLimit = 256 << 10
        task.resume()
        try await Task.sleep(for: .milliseconds(300))

        // Then at most the limit and one read's messages are held
        let held = task.driver.state.withLock { $0.inboxBytes }
        XCTAssertGreaterThan(held, 0)
        XCTAssertLessThanOrEqual(held, (256 << 10) + (64 << 10) + (64 << 10))
        XCTAssertEqual(task.state, .running)

        // When the consumer catches up, every message arrives and the close after them
        var received = 0
        for try await message in task.messages {
            XCTAssertEqual(data(message)?.count, 64 << 10)
            received += 1
        }
        XCTAssertEqual(received, count)
        let completion = await waitForCompletion(of: task)
        XCTAssertNil(completion?.error)
    }

    func testACloseWhileReadingIsPausedEndsWhenTheServerAnswersNotAtTheTimeout() async throws {
        // Given a consumer that takes nothing while the server sends past the buffer's limit, then
        // more (read while behind: reading stops), when the client closes
        let (task, completion, took) = try await closeWhileReadingIsPaused()

        // Then the server's answer is read at once: a clean end, long before the close timeout
        XCTAssertNil(completion?.error)
        XCTAssertLessThan(took, .seconds(2))
        XCTAssertEqual(task.closeCode, .normalClosure)
    }

    func testSuspendStopsReadingUntilResume() async throws {
        let server = try WebSocketTestServer(
            script: .init(steps: [.send(.text("first")), .pause(milliseconds: 200), .send(.text("second")), .awaitClose()]))
        let task = manager.webSocketTask(with: server.url("/"))
        task.resume()
        _ = try await task.receive()

        task.suspend()
        try await Task.sleep(for: .milliseconds(400))

        XCTAssertEqual(task.state, .suspended)
        XCTAssertEqual(task.driver.state.withLock { $0.inboxBytes }, 0)  // "second" waits in the socket
        task.resume()
        let second = try await task.receive()
        XCTAssertEqual(text(second), "second")
        task.cancel(with: .normalClosure, reason: nil)
        await waitForCompletion(of: task)
        let names = events.withLock { $0[task.taskIdentifier] ?? [] }.map(\.name)
        XCTAssertEqual(names.filter { $0 == "suspended" }.count, 1)
    }

    func testSendSuspendsWhileTheServerDoesNotRead() async throws {
        // Given a server that reads nothing for a while
        let server = try WebSocketTestServer(script: .init(steps: [.pause(milliseconds: 5000)], ending: .hang))
        let task = manager.webSocketTask(with: server.url("/"))
        task.options.sendBufferLimit = 64 << 10
        task.resume()
        let sent = Locked(0)
        let chunk = Data(count: 1 << 20)

        // When 64 MiB are sent
        let sender = Task { () -> CourierError? in
            for _ in 0..<64 {
                do throws(CourierError) {
                    try await task.send(.data(chunk))
                } catch {
                    return error
                }
                sent.withLock { $0 += 1 }
            }
            return nil
        }
        try await Task.sleep(for: .milliseconds(500))

        // Then send is suspended long before, with the buffer bounded
        let sentSoFar = sent.withLock { $0 }
        XCTAssertLessThan(sentSoFar, 64)
        let queued = task.driver.state.withLock { $0.outgoingBytes }
        XCTAssertLessThanOrEqual(queued, (64 << 10) + (1 << 20) + 64)
        task.cancel()
        let error = await sender.value
        XCTAssertEqual(error?.code, .cancelled)
    }
}
