import Foundation
internal import CourierSupport

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A WebSocket that reopens after a transient failure, as one `AsyncSequence`: made by
/// ``SessionManager/webSocketMessages(with:protocols:options:reconnection:)``. Opt-in; a plain
/// ``WebSocketTask`` never reconnects.
///
/// ```swift
/// let socket = manager.webSocketMessages(with: URLRequest(url: url), reconnection: ReconnectPolicy(delay: .seconds(1)))
/// for try await event in socket {
///     switch event {
///     case .connected: try await socket.send(.string("subscribe"))   // each connection is new to the server
///     case .message(let message): print(message)
///     case .reconnecting(let retry): print("reconnecting in \(retry.delay): \(retry.error)")
///     }
/// }
/// ```
///
/// It reconnects after a failure ``CourierError/Code-swift.struct/isTransient`` calls transient
/// (the connection lost or refused, no answer, a dead peer's `timedOut`) or `networkUnreachable`,
/// and after the server closed with 1001 (going away), 1012 (service restart) or 1013 (try again
/// later); never after the server's 1000 or any other close code, a close of the user's
/// (``cancel()``), or a failure that is not transient (a refused handshake, a protocol error): the
/// sequence then ends, or throws that error. The waits and the bound are ``ReconnectPolicy``'s, as
/// for an ``EventStream`` (its `reconnectsAnyMethod` does not apply: a handshake is a GET).
///
/// Each reconnection is a new ``WebSocketTask`` of the manager: event monitors see it created,
/// then a ``TaskEvent/retrying(_:)`` whose ``TaskRetryEvent/owner`` is ``RetryOwner/reconnect``,
/// then resumed. Nothing sent on one connection is sent again on the next: what to send after a
/// reconnection (a subscription, say) is the caller's to decide at ``Event/connected(_:)``.
/// Cancelling the Swift task iterating it closes the connection (1001) and ends the iteration
/// with ``CourierError/Code-swift.struct/cancelled``. Iterate it once.
public final class ReconnectingWebSocket: AsyncSequence, Sendable {
    /// What the sequence delivers.
    public enum Event: Sendable {
        /// A connection opened (the first, or a reconnection): ``send(_:)`` goes on it from now.
        case connected(WebSocketTask)
        /// A message from the server.
        case message(URLSessionWebSocketTask.Message)
        /// The connection ended and the sequence reconnects after ``TaskRetryEvent/delay``;
        /// ``TaskRetryEvent/error`` says why, ``TaskRetryEvent/retry`` which reconnection this is.
        case reconnecting(TaskRetryEvent)
    }

    let manager: SessionManager
    let request: URLRequest
    let protocols: [String]
    let options: WebSocketOptions?
    let reconnection: ReconnectPolicy
    let shared = Locked(Shared())

    /// What the sequence and its iterator share: the open connection, and whether ``cancel()`` was called.
    struct Shared {
        var current: WebSocketTask?
        var cancelled = false
    }

    init(
        manager: SessionManager, request: URLRequest, protocols: [String], options: WebSocketOptions?, reconnection: ReconnectPolicy
    ) {
        self.manager = manager
        self.request = request
        self.protocols = protocols
        self.options = options
        self.reconnection = reconnection
    }

    /// The open connection's task; `nil` before the first opened, between connections and after the end.
    public var currentTask: WebSocketTask? { shared.withLock { $0.current } }

    /// Sends on the open connection (``WebSocketTask/send(_:)``). Between connections it throws
    /// ``CourierError/Code-swift.struct/connectionLost`` and sends nothing: a message is never kept
    /// for, or sent again on, a later connection.
    public func send(_ message: URLSessionWebSocketTask.Message) async throws(CourierError) {
        guard let task = currentTask else {
            throw CourierError(
                code: .connectionLost, message: "the WebSocket is not connected (reconnecting, or ended); nothing was sent",
                url: request.url)
        }
        try await task.send(message)
    }

    /// Closes the connection with 1000 and ends the sequence: no reconnection follows.
    public func cancel() {
        let task = shared.withLock { state -> WebSocketTask? in
            state.cancelled = true
            return state.current
        }
        task?.cancel(with: .normalClosure, reason: nil)
    }

    /// An iterator that makes the first connection on its first `next()`.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(socket: self) }
}

extension SessionManager {
    /// Messages from a WebSocket to `request` that reconnects after a transient failure, within
    /// `reconnection`'s bounds (``ReconnectingWebSocket``). Each connection is a ``WebSocketTask``
    /// offering `protocols`, with `options` (or ``Configuration/webSocket``). Nothing is opened
    /// until the first `next()`.
    public func webSocketMessages(
        with request: URLRequest, protocols: [String] = [], options: WebSocketOptions? = nil,
        reconnection: ReconnectPolicy = .default
    ) -> ReconnectingWebSocket {
        ReconnectingWebSocket(manager: self, request: request, protocols: protocols, options: options, reconnection: reconnection)
    }
}
