import Foundation
import XCTest
@testable import Courier
import CourierTestServer

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The closing handshake both ways (RFC 6455 §5.5.1, §7), over real sockets.
final class WebSocketCloseTests: WebSocketTaskTestCase {
    func testTheClientClosesWithAnApplicationCodeAndTheServerEchoesIt() async throws {
        let server = try WebSocketTestServer(script: .init(steps: [.send(.text("ready")), .awaitClose()]))
        let task = manager.webSocketTask(with: server.url("/"))
        task.resume()
        _ = try await task.receive()

        task.cancel(withCloseCode: WebSocketCloseCode(rawValue: 4000), reason: Data("done".utf8))

        let completion = await waitForCompletion(of: task)
        XCTAssertNil(completion?.error)
        let close = server.receivedFrames.last?.frame
        XCTAssertEqual(close?.closeCode, 4000)
        XCTAssertEqual(close?.payload.dropFirst(2), Data("done".utf8))
        XCTAssertEqual(task.webSocketCloseCode?.rawValue, 4000)
        XCTAssertEqual(task.closeCode, .invalid)  // 4000 has no case in URLSession's enum
        XCTAssertEqual(task.state, .completed)
        // Receiving after the client's close: cancelled
        let error = await thrown { try await task.receive() }
        XCTAssertEqual(error?.code, .cancelled)
    }

    func testTheServerClosesWith4000AndTheClientEchoesIt() async throws {
        let server = try WebSocketTestServer(script: .init(steps: [.send(.close(4000, reason: "bye")), .read(count: 1)]))
        let task = manager.webSocketTask(with: server.url("/"))
        task.resume()

        let error = await thrown { try await task.receive() }

        XCTAssertEqual(error?.code, .connectionLost)
        let completion = await waitForCompletion(of: task)
        XCTAssertNil(completion?.error)
        XCTAssertEqual(task.webSocketCloseCode, WebSocketCloseCode(rawValue: 4000))
        XCTAssertEqual(task.closeReason, Data("bye".utf8))
        XCTAssertEqual(server.receivedFrames.last?.frame.closeCode, 4000)
    }

    func testACloseFrameWithoutACodeIsAnsweredWith1000AndReportedAs1005() async throws {
        let server = try WebSocketTestServer(script: .init(steps: [.send(.close(nil)), .read(count: 1)]))
        let task = manager.webSocketTask(with: server.url("/"))
        task.resume()

        let completion = await waitForCompletion(of: task)

        XCTAssertNil(completion?.error)
        XCTAssertEqual(task.closeCode, .noStatusReceived)
        XCTAssertEqual(server.receivedFrames.last?.frame.closeCode, 1000)
    }

    func testAServerThatNeverAnswersTheCloseIsLeftAfterTheCloseTimeout() async throws {
        let server = try WebSocketTestServer(script: .init(steps: [.send(.text("ready")), .awaitClose(answering: false)], ending: .hang))
        let task = manager.webSocketTask(with: server.url("/"))
        task.options.closeTimeout = .milliseconds(300)
        task.resume()
        _ = try await task.receive()
        let start = ContinuousClock.now

        task.cancel(with: .normalClosure, reason: nil)

        let completion = await waitForCompletion(of: task)
        XCTAssertEqual(completion?.error?.code, .timedOut)
        XCTAssertEqual(task.closeCode, .abnormalClosure)
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(2))
    }

    func testAServerThatDropsTCPWithoutACloseFrameFailsWithConnectionLost() async throws {
        let server = try WebSocketTestServer(script: .init(steps: [.send(.text("one"))], ending: .close))
        let task = manager.webSocketTask(with: server.url("/"))
        task.resume()

        let first = try await task.receive()
        let error = await thrown { try await task.receive() }

        XCTAssertEqual(text(first), "one")
        XCTAssertEqual(error?.code, .connectionLost)
        let completion = await waitForCompletion(of: task)
        XCTAssertEqual(completion?.error?.code, .connectionLost)
        XCTAssertEqual(task.closeCode, .abnormalClosure)
    }

    func testCancelWhileReceivingEndsTheWaitingReceiveAndCompletesOnce() async throws {
        let server = try TestServer()
        let task = manager.webSocketTask(with: echoURL(server))
        task.resume()
        let waiting = Task { () -> CourierError? in
            do throws(CourierError) {
                _ = try await task.receive()
                return nil
            } catch {
                return error
            }
        }
        try await Task.sleep(for: .milliseconds(50))

        task.cancel()
        task.cancel()
        task.cancel(with: .normalClosure, reason: nil)

        let error = await waiting.value
        XCTAssertEqual(error?.code, .cancelled)
        let completion = await waitForCompletion(of: task)
        XCTAssertEqual(completion?.error?.code, .cancelled)
        try await Task.sleep(for: .milliseconds(100))
        XCTAssertEqual(completions(of: task).count, 1)
        // cancel() sends 1001 (going away)
        let sendError = await thrown { try await task.send(.string("late")) }
        XCTAssertEqual(sendError?.code, .cancelled)
    }

    func testCancelBeforeResumeCompletesOnceAsCancelled() async throws {
        let task = manager.webSocketTask(with: URL(string: "ws://127.0.0.1:9/")!)
        task.cancel()
        task.resume()
        let completion = await waitForCompletion(of: task)
        XCTAssertEqual(completion?.error?.code, .cancelled)
        XCTAssertEqual(completions(of: task).count, 1)
    }
}
