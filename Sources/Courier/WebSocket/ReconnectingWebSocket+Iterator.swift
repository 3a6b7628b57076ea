import Foundation
internal import CourierSupport

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension ReconnectingWebSocket {
    /// Reads one event per call, connecting and reconnecting as needed. Whether to reconnect is
    /// `reconnectReason(closeCode:closedByClient:url:)`'s and `ReconnectState`'s (the event
    /// stream's decisions: transient, the bound, the waits); the iterator opens and waits.
    public struct AsyncIterator: AsyncIteratorProtocol {
        /// An event of the connection.
        public typealias Element = Event
        /// The error that ends the sequence.
        public typealias Failure = CourierError

        /// What the iterator does on the next call.
        private enum Step {
            /// Open `task` (after waiting `delay` for a reconnection).
            case open(WebSocketTask, delay: Duration?)
            /// Read from the open `task`.
            case read(WebSocketTask)
            case finished
        }

        let socket: ReconnectingWebSocket
        private var step: Step?
        private var reconnect: ReconnectState

        init(socket: ReconnectingWebSocket) {
            self.socket = socket
            self.reconnect = ReconnectState(policy: socket.reconnection, reconnects: true, pausesOnOverflow: false)
        }

        /// The next event; `nil` once the WebSocket closed for good (by the server with a code
        /// that does not ask for a reconnection, or by ``ReconnectingWebSocket/cancel()``).
        public mutating func next() async throws(CourierError) -> Event? {
            while true {
                if socket.shared.withLock({ $0.cancelled }) { finish() }
                switch step ?? .open(makeTask(), delay: nil) {
                case .finished:
                    return nil
                case .open(let task, let delay):
                    if let delay {
                        do {
                            try await Task.sleep(for: delay)
                        } catch {
                            finish()
                            throw CourierError.cancelled(url: socket.request.url)
                        }
                        if socket.shared.withLock({ $0.cancelled }) {
                            finish()
                            return nil
                        }
                    }
                    reconnect.connecting(at: .now)
                    task.resume()
                    switch await task.driver.opened() {
                    case .success:
                        step = .read(task)
                        let cancelled = socket.shared.withLock { state -> Bool in
                            if !state.cancelled { state.current = task }
                            return state.cancelled
                        }
                        if cancelled { task.cancel(with: .normalClosure, reason: nil) }
                        return .connected(task)
                    case .failure(let error):
                        if Task.isCancelled { throw stopForCancellation(task) }
                        guard reconnect.mayReconnect(after: error) else { throw fail(error) }
                        reconnect.connectFailed(error)
                    }
                case .read(let task):
                    do throws(CourierError) {
                        if let message = try await task.driver.receiveOrEnd() {
                            reconnect.eventDelivered()
                            return .message(message)
                        }
                        let (code, byClient) = task.driver.state.withLock { state -> (WebSocketCloseCode?, Bool) in
                            if case .clean(let receiveError)? = state.ending { return (state.closeCode, receiveError.code == .cancelled) }
                            return (state.closeCode, false)
                        }
                        guard
                            let reason = ReconnectingWebSocket.reconnectReason(
                                closeCode: code, closedByClient: byClient, url: socket.request.url)
                        else {
                            finish()
                            return nil
                        }
                        connectionEnded(reason)
                    } catch {
                        if Task.isCancelled { throw stopForCancellation(task) }
                        guard reconnect.mayReconnect(after: error) else { throw fail(error) }
                        connectionEnded(error)
                    }
                }
                // The connection ended or could not be made, for a reason to reconnect.
                switch reconnect.nextStep(serverRetry: nil, now: .now) {
                case .reconnect(let delay, let number):
                    let task = makeTask()
                    let retry = TaskRetryEvent(
                        error: reconnect.lastError
                            ?? CourierError(code: .connectionLost, message: "the WebSocket ended", url: socket.request.url),
                        retry: number, retryLimit: nil, delay: delay, bytesReceived: 0, continuesFrom: 0, owner: .reconnect)
                    // Told before the wait, on the connection that follows, so a monitor can say why it is quiet.
                    socket.manager.events.emit(.retrying(retry), for: task)
                    step = .open(task, delay: delay)
                    return .reconnecting(retry)
                case .fail(let error):
                    throw fail(error)
                case .end, .connect:
                    finish()
                    return nil
                }
            }
        }

        private func makeTask() -> WebSocketTask {
            let task = socket.manager.webSocketTask(with: socket.request, protocols: socket.protocols)
            if let options = socket.options { task.options = options }
            return task
        }

        private mutating func connectionEnded(_ error: CourierError) {
            socket.shared.withLock { $0.current = nil }
            reconnect.connectionEnded(error)
        }

        private mutating func finish() {
            step = .finished
            socket.shared.withLock { $0.current = nil }
        }

        private mutating func fail(_ error: CourierError) -> CourierError {
            finish()
            return error
        }

        /// The Swift task iterating was cancelled: the connection closes (1001), as an event stream's does.
        private mutating func stopForCancellation(_ task: WebSocketTask) -> CourierError {
            task.cancel()
            finish()
            return CourierError.cancelled(url: socket.request.url)
        }
    }

    /// Why to reconnect after a clean close, as the error the retry event carries; `nil` for none:
    /// the user's close, the server's 1000, or any code but 1001 (going away), 1012 (service
    /// restart) and 1013 (try again later), which say that a later connection may succeed.
    static func reconnectReason(closeCode: WebSocketCloseCode?, closedByClient: Bool, url: URL?) -> CourierError? {
        guard !closedByClient, let closeCode, [1001, 1012, 1013].contains(closeCode.rawValue) else { return nil }
        return CourierError(code: .connectionLost, message: "the server closed the WebSocket (\(closeCode))", url: url)
    }
}
