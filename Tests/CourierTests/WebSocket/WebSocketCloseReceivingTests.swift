import Foundation
import XCTest
@testable import Courier
import CourierTestServer

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `close(withCloseCode:reason:)`: the client's close that keeps receiving until the server's
/// Close frame (RFC 6455 §5.5.1), as `courier ws` closes at the end of its input.
final class WebSocketCloseReceivingTests: WebSocketTaskTestCase {
    /// Given messages still in flight when the client closes, when it closes receiving, then
    /// every echo arrives before the sequence ends cleanly with the server's code.
    func testTheAnswersInFlightAreDeliveredBeforeTheServersClose() async throws {
        let server = try TestServer()
        let task = manager.webSocketTask(with: echoURL(server))
        task.resume()
        try await task.send(.string("open"))
        let opened = try await task.receive()  // before the 101, a close cancels
        XCTAssertEqual(text(opened), "open")
        for index in 1...20 { try await task.send(.string("m\(index)")) }

        task.close(withCloseCode: .normalClosure, reason: nil)

        var received: [String] = []
        for try await message in task.messages { received.append(text(message) ?? "?") }
        XCTAssertEqual(received, (1...20).map { "m\($0)" })
        let completion = await waitForCompletion(of: task)
        XCTAssertNil(completion?.error)
        XCTAssertEqual(task.closeCode, .normalClosure)
        let error = await thrown { try await task.receive() }
        XCTAssertEqual(error?.code, .connectionLost, "the sequence ended with the server's close")
    }

    /// A server that never answers fails the task with timedOut after the close timeout, and the
    /// waiting consumer gets that error (not a clean end).
    func testAServerThatNeverAnswersFailsTheWaitingConsumerWithTimedOut() async throws {
        let server = try WebSocketTestServer(script: .init(steps: [.send(.text("ready")), .awaitClose(answering: false)], ending: .hang))
        let task = manager.webSocketTask(with: server.url("/"))
        task.options.closeTimeout = .milliseconds(300)
        task.resume()
        _ = try await task.receive()
        let start = ContinuousClock.now

        task.close(withCloseCode: .goingAway, reason: Data("bye".utf8))

        let error = await thrown { try await task.receive() }
        XCTAssertEqual(error?.code, .timedOut)
        XCTAssertEqual(server.receivedFrames.last?.frame.closeCode, 1001)
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(2))
        let completion = await waitForCompletion(of: task)
        XCTAssertEqual(completion?.error?.code, .timedOut)
    }
}
