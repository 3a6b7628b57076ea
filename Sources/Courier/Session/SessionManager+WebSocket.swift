import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// WebSocket tasks (Docs/WebSocket.md): `URLSessionWebSocketTask`'s factories, working on Linux.
extension SessionManager {
    /// A WebSocket task for `url` (`ws://`; `wss://` is not supported yet), not started: call
    /// ``WebSocketTask/resume()``.
    public func webSocketTask(with url: URL) -> WebSocketTask {
        webSocketTask(with: URLRequest(url: url), protocols: [])
    }

    /// A WebSocket task offering `protocols` (`Sec-WebSocket-Protocol`, in order of preference);
    /// the server's choice is ``WebSocketTask/negotiatedProtocol``.
    public func webSocketTask(with url: URL, protocols: [String]) -> WebSocketTask {
        webSocketTask(with: URLRequest(url: url), protocols: protocols)
    }

    /// A WebSocket task for `request`: its URL, its header fields (after the manager's
    /// ``Configuration/defaultHeaders``; the handshake's own fields are the handshake's) and its
    /// `timeoutInterval` as the longest wait to open (unless ``WebSocketOptions/openTimeout`` says
    /// otherwise). A `Sec-WebSocket-Protocol` field among them is the offer.
    public func webSocketTask(with request: URLRequest) -> WebSocketTask {
        webSocketTask(with: request, protocols: [])
    }

    /// A WebSocket task for `request` (taken as `webSocketTask(with:)` takes a request: its header
    /// fields, a token among them, and its timeout) offering `protocols` (`Sec-WebSocket-Protocol`,
    /// in order of preference); the server's choice is ``WebSocketTask/negotiatedProtocol``.
    public func webSocketTask(with request: URLRequest, protocols: [String]) -> WebSocketTask {
        let driver = WebSocketDriver(
            request: request, sentRequest: prepared(request), protocols: protocols, taskIdentifier: core.nextTaskIdentifier(),
            core: core, events: events, delivery: settings(for: .default).delivery, configuration: configuration)
        let task = WebSocketTask(driver: driver)
        events.emit(.created, for: task)
        return task
    }
}
