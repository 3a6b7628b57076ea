import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A WebSocket connection (RFC 6455) run by a ``SessionManager``: made by
/// ``SessionManager/webSocketTask(with:)-(URL)``, source-compatible with code written for
/// `URLSessionWebSocketTask` (which on Linux fails at `resume()`).
///
/// ```swift
/// let socket = manager.webSocketTask(with: URL(string: "ws://127.0.0.1:8080/chat")!)
/// socket.resume()
/// try await socket.send(.string("hello"))
/// for try await message in socket.messages { print(message) }   // ends when the server closes cleanly
/// socket.cancel(with: .normalClosure, reason: nil)
/// ```
///
/// Like every task it has a ``taskIdentifier``, is in ``SessionManager/allTasks`` while it runs,
/// is stopped by ``SessionManager/cancelAllTasks(producingResumeData:)``, and its creation,
/// resumption, handshake response and completion reach the manager's event monitors. Errors are
/// ``CourierError``s; Docs/WebSocket.md lists them.
public final class WebSocketTask: SessionTask {
    let driver: WebSocketDriver

    init(driver: WebSocketDriver) {
        self.driver = driver
        driver.attach(self)
    }

    /// Courier's identifier for the task, unique within its manager.
    public var taskIdentifier: Int { driver.taskIdentifier }
    /// Where the task is: `running` from `resume()` through the open connection, `cancelling`
    /// while it closes, `completed` once the connection is gone.
    public var state: TaskLifecycle.State {
        switch driver.state.withLock({ ($0.phase, $0.userSuspended) }) {
        case (.initialized, _): return .initialized
        case (.connecting, true), (.handshaking, true), (.open, true): return .suspended
        case (.connecting, false), (.handshaking, false), (.open, false): return .running
        case (.closing, _): return .cancelling
        case (.closed, _): return .completed
        }
    }
    /// The request as given.
    public var originalRequest: URLRequest { driver.originalRequest }
    /// The request the handshake was made from (with the manager's default headers).
    public var currentRequest: URLRequest? { driver.sentRequest }
    /// The handshake's answer (`101 Switching Protocols`, or the refusal), once it arrived.
    public var response: HTTPURLResponse? { driver.state.withLock { $0.response } }
    /// Bytes written on the connection so far (handshake and frames); the total is unknown.
    public var uploadProgress: Progress {
        let progress = Progress(totalUnitCount: -1)
        progress.completedUnitCount = driver.state.withLock { $0.bytesSent }
        return progress
    }
    /// Bytes read from the connection so far; the total is unknown.
    public var downloadProgress: Progress {
        let progress = Progress(totalUnitCount: -1)
        progress.completedUnitCount = driver.state.withLock { $0.bytesReceived }
        return progress
    }
    /// The task's timeline: created, resumed and completed (a WebSocket makes one request).
    public var metrics: TaskMetrics { driver.metrics }

    /// Connects and sends the handshake; after ``suspend()``, reads the socket again.
    public func resume() {
        if driver.state.withLock({ $0.phase == .initialized }) {
            driver.resume()
        } else {
            driver.setSuspended(false)
        }
    }

    /// Stops reading the socket (TCP then slows the server down) until ``resume()``; sending
    /// goes on. Pings are not answered meanwhile.
    public func suspend() { driver.setSuspended(true) }

    /// Closes with 1001 (going away) and fails the task with
    /// ``CourierError/Code-swift.struct/cancelled``, as `cancel()` does for every task (and
    /// ``SessionManager/cancelAllTasks(producingResumeData:)`` for all of them).
    public func cancel() {
        driver.cancel(code: .goingAway, reason: nil, failure: .cancelled(url: driver.url))
    }

    /// WebSocket tasks report no progress handler calls: the byte counts are in
    /// ``uploadProgress`` and ``downloadProgress``.
    public func addProgressHandler(_ direction: ProgressDirection, _ handler: @escaping @Sendable (Progress) -> Void) {}

    /// An empty sequence: a WebSocket has no body progress (see ``addProgressHandler(_:_:)``).
    public func progressUpdates(_ direction: ProgressDirection) -> AsyncStream<Progress> {
        AsyncStream { $0.finish() }
    }

    // MARK: URLSessionWebSocketTask's API

    /// The largest message accepted, in bytes (1 MiB by default, as `URLSessionWebSocketTask`);
    /// a larger one closes the connection with 1009 and fails the task with
    /// ``CourierError/Code-swift.struct/responseTooLarge``. Set it before `resume()`.
    public var maximumMessageSize: Int {
        get { driver.state.withLock { $0.maximumMessageSize } }
        set { driver.state.withLock { $0.maximumMessageSize = max(1, newValue) } }
    }

    /// Pings, buffers and timeouts (from ``SessionManager/Configuration/webSocket``). Set them
    /// before `resume()`.
    public var options: WebSocketOptions {
        get { driver.state.withLock { $0.options } }
        set { driver.state.withLock { $0.options = newValue } }
    }

    /// Sends a message as one frame, masked with a fresh key. Returns once it is queued; suspends
    /// while more than ``WebSocketOptions/sendBufferLimit`` bytes wait to be written. A message
    /// sent before `resume()` or the handshake's answer waits for it: it goes out first once the
    /// connection is open, and `send` then returns, or throws the handshake's error when the
    /// connection never opens. Throws once the WebSocket is closing or closed.
    public func send(_ message: URLSessionWebSocketTask.Message) async throws(CourierError) {
        try await driver.send(message)
    }

    /// ``send(_:)`` with a completion handler, called with `nil` once the message is queued.
    public func send(
        _ message: URLSessionWebSocketTask.Message, completionHandler: @escaping @Sendable ((any Error)?) -> Void
    ) {
        Task {
            do throws(CourierError) {
                try await send(message)
                completionHandler(nil)
            } catch {
                completionHandler(error)
            }
        }
    }

    /// The next message, in arrival order. Throws the task's error once it failed; after a clean
    /// close (either side's) and the messages before it, throws
    /// ``CourierError/Code-swift.struct/cancelled`` when the client closed and
    /// ``CourierError/Code-swift.struct/connectionLost`` when the server did (``messages`` ends
    /// instead). Cancelling the calling Swift task ends the wait at once with
    /// ``CourierError/Code-swift.struct/cancelled``, takes no message and leaves the connection open.
    public func receive() async throws(CourierError) -> URLSessionWebSocketTask.Message {
        try await driver.receive()
    }

    /// ``receive()`` with a completion handler.
    public func receive(
        completionHandler: @escaping @Sendable (Result<URLSessionWebSocketTask.Message, any Error>) -> Void
    ) {
        Task {
            do throws(CourierError) {
                completionHandler(.success(try await receive()))
            } catch {
                completionHandler(.failure(error))
            }
        }
    }

    /// The messages as an `AsyncSequence`: it ends after a clean close and throws the task's
    /// error otherwise. One consumer at a time (each message goes to one `next()`). Cancelling
    /// the iterating Swift task ends the iteration with ``CourierError/Code-swift.struct/cancelled``
    /// and leaves the connection open.
    public var messages: WebSocketMessages { WebSocketMessages(driver: driver) }

    /// Sends a ping; `pongReceiveHandler` is called once with `nil` when its pong arrives, or
    /// with the error that ended the connection first. On the manager's completion queue.
    public func sendPing(pongReceiveHandler: @escaping @Sendable ((any Error)?) -> Void) {
        driver.ping(pongReceiveHandler)
    }

    /// Starts the closing handshake with `closeCode` and `reason` (cut to 123 bytes on a
    /// character boundary): the server's Close frame and its closing of TCP are awaited for
    /// ``WebSocketOptions/closeTimeout``. The task then completes without an error (or with
    /// ``CourierError/Code-swift.struct/timedOut`` when the server never answered). Before the
    /// connection is open, it fails the task with ``CourierError/Code-swift.struct/cancelled``.
    /// A code that may not be sent (`invalid`, 1005, 1006, 1015) sends a Close frame with no code.
    public func cancel(with closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?) {
        cancel(withCloseCode: WebSocketCloseCode(rawValue: UInt16(clamping: closeCode.rawValue)), reason: reason)
    }

    /// ``cancel(with:reason:)`` with any code, such as an application's 4000 (a name of its own:
    /// an overload of `cancel(with:reason:)` would make `.normalClosure` ambiguous in code
    /// written for `URLSessionWebSocketTask`).
    public func cancel(withCloseCode closeCode: WebSocketCloseCode, reason: Data?) {
        driver.cancel(code: closeCode.isValidOnTheWire ? closeCode : nil, reason: reason, failure: nil)
    }

    /// Starts the closing handshake with `closeCode` and `reason` as ``cancel(withCloseCode:reason:)``
    /// does, but keeps delivering what the server sends until its Close frame (RFC 6455 §5.5.1:
    /// it may send data until it answers): ``messages`` ends only then, cleanly, with
    /// ``closeCode`` the server's; ``receive()`` then throws
    /// ``CourierError/Code-swift.struct/connectionLost``. A server that never answers within
    /// ``WebSocketOptions/closeTimeout`` fails the task with ``CourierError/Code-swift.struct/timedOut``.
    /// Before the connection is open it fails the task with
    /// ``CourierError/Code-swift.struct/cancelled``, as ``cancel(withCloseCode:reason:)`` does.
    /// How `courier ws` closes at the end of its input, so the answers in flight are printed.
    public func close(withCloseCode closeCode: WebSocketCloseCode, reason: Data?) {
        driver.cancel(
            code: closeCode.isValidOnTheWire ? closeCode : nil, reason: reason, failure: nil, receivingUntilServerCloses: true)
    }

    /// The code of the server's Close frame (`invalid` until one arrived, or when the code has
    /// no case: read ``webSocketCloseCode``); `abnormalClosure` when the connection ended
    /// without one, `noStatusReceived` for a Close frame with no code.
    public var closeCode: URLSessionWebSocketTask.CloseCode {
        guard let code = webSocketCloseCode else { return .invalid }
        return URLSessionWebSocketTask.CloseCode(rawValue: Int(code.rawValue)) ?? .invalid
    }

    /// The close code as a number, for every code including 3000–4999; `nil` until the
    /// conversation ended.
    public var webSocketCloseCode: WebSocketCloseCode? { driver.state.withLock { $0.closeCode } }

    /// The reason of the server's Close frame (empty when it gave none); `nil` until one arrived.
    public var closeReason: Data? { driver.state.withLock { $0.closeReason } }

    /// The subprotocol the server chose from the offer (`Sec-WebSocket-Protocol`), once open.
    public var negotiatedProtocol: String? { driver.state.withLock { $0.subprotocol } }
}
