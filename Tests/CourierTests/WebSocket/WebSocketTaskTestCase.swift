import Foundation
import XCTest
import CourierSupport
@testable import Courier
import CourierTestServer

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the end-to-end WebSocket tests share: a manager whose monitor records every event, and
/// waits for a task's completion.
class WebSocketTaskTestCase: XCTestCase {
    /// Every event the manager's monitor saw, by task identifier.
    let events = Locked<[Int: [TaskEvent]]>([:])
    var manager: SessionManager!

    override func setUp() {
        super.setUp()
        manager = SessionManager(configuration: makeWebSocketConfiguration())
    }

    /// The tests' configuration: a monitor recording every event in ``events``, a 2 s close timeout.
    func makeWebSocketConfiguration() -> SessionManager.Configuration {
        var configuration = SessionManager.Configuration()
        configuration.eventMonitors = [
            ClosureEventMonitor(onEvent: { [events] task, event in
                events.withLock { $0[task.taskIdentifier, default: []].append(event) }
            })
        ]
        configuration.webSocket.closeTimeout = .seconds(2)
        return configuration
    }

    override func tearDown() {
        manager = nil
        super.tearDown()
    }

    /// `ws://127.0.0.1:<port>/ws/echo` on `server`.
    func echoURL(_ server: TestServer) -> URL {
        URL(string: "ws://127.0.0.1:\(server.port)/ws/echo")!
    }

    /// The completion events of `task` so far.
    func completions(of task: WebSocketTask) -> [TaskCompletionEvent] {
        events.withLock { $0[task.taskIdentifier] ?? [] }.compactMap {
            if case .completed(let event) = $0 { return event }
            return nil
        }
    }

    /// Waits until `task` completed (its completion event reached the monitor) and returns the event.
    @discardableResult
    func waitForCompletion(
        of task: WebSocketTask, timeout: Duration = .seconds(10), file: StaticString = #filePath, line: UInt = #line
    ) async -> TaskCompletionEvent? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let event = completions(of: task).first { return event }
            try? await Task.sleep(for: .milliseconds(5))
        }
        XCTFail("the WebSocket task did not complete within \(timeout)", file: file, line: line)
        return nil
    }

    /// A client's close while reading is paused for a consumer behind: the server sends past the
    /// receive buffer's limit, then more, and answers the Close frame. Returns the task, its
    /// completion and how long the close took (the timeout is 5 s).
    func closeWhileReadingIsPaused(
        file: StaticString = #filePath, line: UInt = #line
    ) async throws -> (task: WebSocketTask, completion: TaskCompletionEvent?, took: Duration) {
        let server = try WebSocketTestServer(
            script: .init(
                steps: Array(repeating: .send(.binary(Data(count: 500))), count: 10)
                    + [.pause(milliseconds: 100), .send(.binary(Data(count: 500))), .awaitClose()]))
        let task = manager.webSocketTask(with: server.url("/"))
        task.options.receiveBufferLimit = 1000
        task.options.closeTimeout = .seconds(5)
        task.resume()
        try await Task.sleep(for: .milliseconds(400))
        XCTAssertTrue(task.driver.state.withLock { $0.readingPaused }, file: file, line: line)

        let start = ContinuousClock.now
        task.cancel(with: .normalClosure, reason: nil)
        let completion = await waitForCompletion(of: task, file: file, line: line)
        return (task, completion, ContinuousClock.now - start)
    }

    /// The error `body` throws, failing when it throws none.
    func thrown<T>(
        _ body: () async throws -> T, file: StaticString = #filePath, line: UInt = #line
    ) async -> CourierError? {
        do {
            _ = try await body()
            XCTFail("expected a CourierError", file: file, line: line)
            return nil
        } catch {
            XCTAssertTrue(error is CourierError, "\(error) is not a CourierError", file: file, line: line)
            return error as? CourierError
        }
    }

    /// The text of a text message, `nil` for binary.
    func text(_ message: URLSessionWebSocketTask.Message) -> String? {
        if case .string(let text) = message { return text }
        return nil
    }

    /// The bytes of a binary message, `nil` for text.
    func data(_ message: URLSessionWebSocketTask.Message) -> Data? {
        if case .data(let data) = message { return data }
        return nil
    }
}
