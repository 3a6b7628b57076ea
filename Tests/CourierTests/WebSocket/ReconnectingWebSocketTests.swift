import Foundation
import XCTest
import CourierSupport
@testable import Courier
import CourierTestServer

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `webSocketMessages(with:…)`: one sequence across connections, reconnecting after a transient
/// failure within the policy's bound, never after a normal close, and announced to monitors as
/// retries owned by `reconnect`.
final class ReconnectingWebSocketTests: WebSocketTaskTestCase {
    /// Short waits, so that the tests reconnect quickly.
    private let fast = ReconnectPolicy(
        delay: .milliseconds(20), minimumDelay: .milliseconds(10), maximumDelay: .milliseconds(50), maximumAttempts: 2)

    /// What the sequence delivered, as short strings, until it ended or threw.
    private static func collect(_ socket: ReconnectingWebSocket, sending: String? = nil) async -> (events: [String], error: CourierError?) {
        var events: [String] = []
        do {
            for try await event in socket {
                switch event {
                case .connected:
                    events.append("connected")
                    if let sending { try await socket.send(.string(sending)) }
                case .message(.string(let text)): events.append(text)
                case .message: events.append("binary")
                case .reconnecting(let retry): events.append("reconnecting \(retry.retry) \(retry.error.code) \(retry.owner)")
                }
            }
            return (events, nil)
        } catch {
            return (events, error)
        }
    }

    func testALostConnectionIsReopenedAndNothingSentIsSentAgain() async throws {
        // Given a server whose first connection reads one message, sends "one" and resets, and
        // whose second reads one, sends "two" and closes with 1000
        let server = try WebSocketTestServer { _, index in
            index == 0
                ? .init(steps: [.read(count: 1), .send(.text("one"))], ending: .reset)
                : .init(steps: [.read(count: 1), .send(.text("two")), .send(.close(1000)), .read(count: 1)])
        }
        let socket = manager.webSocketMessages(with: URLRequest(url: server.url("/")), reconnection: fast)

        // When the consumer sends "hello" on each connection it is told about
        let (events, error) = await Self.collect(socket, sending: "hello")

        // Then the messages of both connections arrive in one sequence, the reconnection between
        XCTAssertNil(error)
        XCTAssertEqual(events, ["connected", "one", "reconnecting 1 connectionLost reconnect", "connected", "two"])
        XCTAssertEqual(server.requests.count, 2)
        // And each connection got the one message sent on it, nothing sent again
        let texts = server.receivedFrames.filter { $0.frame.opcode == 1 }
        XCTAssertEqual(texts.map(\.connection), [0, 1])
        // And the monitors saw the reconnection as a retry owned by `reconnect`, on the new task
        let retries = monitorEvents(named: "retry")
        XCTAssertEqual(retries.count, 1)
        if case .retrying(let retry)? = retries.first?.event { XCTAssertEqual(retry.owner, RetryOwner.reconnect) }
        XCTAssertNil(socket.currentTask)
    }

    func testTheServersNormalCloseEndsTheSequenceWithoutReconnecting() async throws {
        let server = try WebSocketTestServer(script: .init(steps: [.send(.text("one")), .send(.close(1000)), .read(count: 1)]))
        let socket = manager.webSocketMessages(with: URLRequest(url: server.url("/")), reconnection: fast)

        let (events, error) = await Self.collect(socket)

        XCTAssertNil(error)
        XCTAssertEqual(events, ["connected", "one"])
        XCTAssertEqual(server.requests.count, 1)
        XCTAssertTrue(monitorEvents(named: "retry").isEmpty)
    }

    func testGoingAwayFromTheServerReconnects() async throws {
        let server = try WebSocketTestServer { _, index in
            index == 0
                ? .init(steps: [.send(.close(1001)), .read(count: 1)])
                : .init(steps: [.send(.text("back")), .send(.close(1000)), .read(count: 1)])
        }
        let socket = manager.webSocketMessages(with: URLRequest(url: server.url("/")), reconnection: fast)

        let (events, error) = await Self.collect(socket)

        XCTAssertNil(error)
        XCTAssertEqual(events, ["connected", "reconnecting 1 connectionLost reconnect", "connected", "back"])
    }

    func testReconnectionsStopAtThePolicysBoundWithTheLastError() async throws {
        // Given a server that resets every connection before sending anything
        let server = try WebSocketTestServer(script: .init(steps: [], ending: .reset))
        let socket = manager.webSocketMessages(with: URLRequest(url: server.url("/")), reconnection: fast)

        let (events, error) = await Self.collect(socket)

        // Then one connection and two reconnections (maximumAttempts), then the error
        XCTAssertEqual(error?.code, .connectionLost)
        XCTAssertEqual(server.requests.count, 3)
        XCTAssertEqual(events.filter { $0.hasPrefix("reconnecting") }.count, 2)
    }

    func testARefusedHandshakeIsNotRetried() async throws {
        let server = try WebSocketTestServer(script: .init(handshake: .status(403), steps: []))
        let socket = manager.webSocketMessages(with: URLRequest(url: server.url("/")), reconnection: fast)

        let (events, error) = await Self.collect(socket)

        XCTAssertEqual(error?.code, .unacceptableStatusCode)
        XCTAssertEqual(events, [])
        XCTAssertEqual(server.requests.count, 1)
    }

    func testTheUsersCancelEndsTheSequenceWithoutReconnecting() async throws {
        let server = try TestServer()
        let socket = manager.webSocketMessages(with: URLRequest(url: echoURL(server)), reconnection: fast)
        let consumer = Task.detached { [socket] in await ReconnectingWebSocketTests.collect(socket, sending: "hi") }
        let deadline = ContinuousClock.now + .seconds(5)
        while socket.currentTask == nil, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        try await Task.sleep(for: .milliseconds(100))

        socket.cancel()
        let (events, error) = await consumer.value

        XCTAssertNil(error)
        XCTAssertEqual(events, ["connected", "hi"])
        XCTAssertTrue(monitorEvents(named: "retry").isEmpty)
        let notConnected = await thrown { try await socket.send(.string("late")) }
        XCTAssertEqual(notConnected?.code, .connectionLost)
    }

    func testCancellingTheIteratingTaskClosesTheConnection() async throws {
        let server = try TestServer()
        let socket = manager.webSocketMessages(with: URLRequest(url: echoURL(server)), reconnection: fast)
        let consumer = Task.detached { [socket] in await ReconnectingWebSocketTests.collect(socket) }
        let deadline = ContinuousClock.now + .seconds(5)
        while socket.currentTask == nil, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        let task = try XCTUnwrap(socket.currentTask)

        consumer.cancel()
        let (_, error) = await consumer.value

        XCTAssertEqual(error?.code, .cancelled)
        let completion = await waitForCompletion(of: task)
        XCTAssertEqual(completion?.error?.code, .cancelled)
    }

    func testOnlyGoingAwayRestartAndTryAgainLaterCloseCodesReconnect() {
        let url = URL(string: "ws://example.com/")
        for code: UInt16 in [1001, 1012, 1013] {
            XCTAssertNotNil(
                ReconnectingWebSocket.reconnectReason(closeCode: WebSocketCloseCode(rawValue: code), closedByClient: false, url: url))
            XCTAssertNil(
                ReconnectingWebSocket.reconnectReason(closeCode: WebSocketCloseCode(rawValue: code), closedByClient: true, url: url))
        }
        for code: UInt16 in [1000, 1002, 1005, 1008, 1011, 4000] {
            XCTAssertNil(
                ReconnectingWebSocket.reconnectReason(closeCode: WebSocketCloseCode(rawValue: code), closedByClient: false, url: url))
        }
    }

    /// The monitor's events named `name` (every task), with the task identifier.
    private func monitorEvents(named name: String) -> [(task: Int, event: TaskEvent)] {
        events.withLock { all in
            all.flatMap { id, list in list.filter { $0.name == name }.map { (id, $0) } }
        }
    }
}
