import Foundation
import XCTest
import CourierSupport
@testable import Courier
import CourierTestServer

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A WebSocket task in its manager: `allTasks`, `cancelAllTasks`, event monitors, invalidation.
final class WebSocketManagerTests: WebSocketTaskTestCase {
    func testAnOpenWebSocketIsInAllTasksUntilItCompletes() async throws {
        let server = try TestServer()
        let task = manager.webSocketTask(with: echoURL(server))
        XCTAssertTrue(manager.allTasks.isEmpty)  // not live before resume
        task.resume()
        try await task.send(.string("x"))
        _ = try await task.receive()

        XCTAssertEqual(manager.allTasks.map(\.taskIdentifier), [task.taskIdentifier])
        XCTAssertTrue(manager.allTasks.first === task)

        task.cancel(with: .normalClosure, reason: nil)
        await waitForCompletion(of: task)
        XCTAssertTrue(manager.allTasks.isEmpty)
    }

    func testCancelAllTasksClosesWebSocketsAsCancelled() async throws {
        let server = try TestServer()
        let first = manager.webSocketTask(with: echoURL(server))
        let second = manager.webSocketTask(with: echoURL(server))
        first.resume()
        second.resume()
        try await first.send(.string("x"))
        _ = try await first.receive()

        await manager.cancelAllTasks()

        // Both ended when it returned; their completion events may still be on the monitors' queue
        XCTAssertTrue(manager.allTasks.isEmpty)
        XCTAssertEqual(first.state, .completed)
        XCTAssertEqual(second.state, .completed)
        let firstCompletion = await waitForCompletion(of: first)
        let secondCompletion = await waitForCompletion(of: second)
        XCTAssertEqual(firstCompletion?.error?.code, .cancelled)
        XCTAssertEqual(secondCompletion?.error?.code, .cancelled)
    }

    func testTheMonitorSeesCreationResumptionTheResponseAndOneCompletion() async throws {
        let server = try TestServer()
        let task = manager.webSocketTask(with: echoURL(server))
        task.resume()
        try await task.send(.string("x"))
        _ = try await task.receive()
        task.cancel(with: .normalClosure, reason: nil)
        await waitForCompletion(of: task)
        try await Task.sleep(for: .milliseconds(50))

        let names = events.withLock { $0[task.taskIdentifier] ?? [] }.map(\.name)
        XCTAssertEqual(names, ["created", "resumed", "response", "completed"])
        XCTAssertNotNil(task.metrics.completedAt)
    }

    func testTaskIdentifiersContinueTheManagersCount() async throws {
        let server = try TestServer()
        let data = manager.dataTask(with: URLRequest(url: server.url("/get"))) { _ in }
        let socket = manager.webSocketTask(with: echoURL(server))
        XCTAssertEqual(socket.taskIdentifier, data.taskIdentifier + 1)
    }

    func testInvalidatingWithCancelingTasksClosesTheWebSocket() async throws {
        let server = try TestServer()
        let task = manager.webSocketTask(with: echoURL(server))
        task.resume()
        try await task.send(.string("x"))
        _ = try await task.receive()

        manager.invalidate(cancelingTasks: true)

        let completion = await waitForCompletion(of: task)
        XCTAssertEqual(completion?.error?.code, .sessionInvalidated)
        let late = manager.webSocketTask(with: echoURL(server))
        late.resume()
        let lateCompletion = await waitForCompletion(of: late)
        XCTAssertEqual(lateCompletion?.error?.code, .sessionInvalidated)
    }

    func testTheLoggingMonitorRedactsTheHandshakesSecrets() async throws {
        let lines = Locked<[String]>([])
        var configuration = SessionManager.Configuration()
        configuration.eventMonitors = [LoggingMonitor(level: .trace) { record in lines.withLock { $0.append("\(record)") } }]
        let manager = SessionManager(configuration: configuration)
        let server = try TestServer()
        var request = URLRequest(url: URL(string: "ws://user:password@127.0.0.1:\(server.port)/ws/echo?token=abc")!)
        request.setValue("Bearer secret-token", forHTTPHeaderField: "Authorization")
        let task = manager.webSocketTask(with: request)
        task.resume()
        try await task.send(.string("x"))
        _ = try await task.receive()
        task.cancel(with: .normalClosure, reason: nil)
        try await Task.sleep(for: .milliseconds(200))

        let text = lines.withLock { $0.joined(separator: "\n") }
        XCTAssertFalse(text.isEmpty)
        XCTAssertFalse(text.contains("secret-token"))
        XCTAssertFalse(text.contains("password"))
    }
}
