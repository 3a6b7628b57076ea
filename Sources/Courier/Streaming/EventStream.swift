import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
internal import CourierSupport

/// Server-Sent Events from ``SessionManager/events(for:policy:reconnection:)``: one
/// uninterrupted sequence across reconnections.
///
/// The first connection is made by the first `next()`. When a connection drops (a transient
/// failure — ``CourierError/Code-swift.struct/isTransient``: refused, reset, no response, a timeout
/// of the ``StreamPolicy``; not DNS or TLS — a lost route, `networkUnreachable`, after which the
/// wait ends early when the manager's network monitor sees the route back, or a normal end of the response), the stream waits
/// the server's `retry:` (or ``ReconnectPolicy/delay``), within the policy's bounds, and
/// reconnects with `Last-Event-ID`, so a server that honours it continues where the consumer is.
/// Each reconnection is announced to the manager's monitors first
/// (``EventMonitor/eventStreamWillReconnect(_:)``). Reconnecting is the stream's retry: the
/// manager's ``SessionManager/Configuration/retryPolicy`` and its interceptor's retriers are not
/// asked about its connections (its adapters still run), except a retrier that retries only
/// refusals (``RequestRetrier/retriesOnlyRefusals``): an ``AuthenticationInterceptor`` answers a
/// 401 for its credential by refreshing it and sending the connection again — a `POST` too, since
/// the server refused it unprocessed — before the stream sees the answer.
/// It ends when the server answers 204 No Content; it fails on any other refused response (a
/// non-2xx status or a type other than `text/event-stream`, as the WHATWG rules say), on
/// cancellation, or after ``ReconnectPolicy/maximumAttempts`` failed reconnections. With
/// ``StreamPolicy/Overflow/pause`` a consumer that falls more than ``StreamPolicy/bufferLimit``
/// behind makes the stream drop the connection, hand over the events it holds, and reconnect
/// with `Last-Event-ID`; with ``StreamPolicy/Overflow/fail`` (the default) the stream fails.
///
/// Only a GET or HEAD request reconnects, unless ``ReconnectPolicy/reconnectsAnyMethod`` is set:
/// a `POST` (an LLM completion) is sent once, its sequence ends when its response ends, and a
/// drop, a timeout or an overflow fails it instead of sending it again.
public struct EventStream: AsyncSequence, Sendable {
    /// A Server-Sent Event.
    public typealias Element = ServerSentEvent
    /// The error that ends the sequence.
    public typealias Failure = CourierError

    let manager: SessionManager
    let request: URLRequest
    let policy: StreamPolicy
    let reconnection: ReconnectPolicy
    let progress: EventStreamProgress
    let control = StreamControl()

    init(manager: SessionManager, request: URLRequest, policy: StreamPolicy, reconnection: ReconnectPolicy) {
        self.manager = manager
        self.request = request
        self.policy = policy
        self.reconnection = reconnection
        self.progress = EventStreamProgress()
    }

    /// Ends the stream now, from any thread: the connection in flight (or the head being waited
    /// for) is cancelled, a wait between reconnections ends, and no reconnection follows. The
    /// iterator's pending or next `next()` throws ``CourierError/Code-swift.struct/cancelled``.
    ///
    /// When the transfer ends without it: when the server ends the stream for good (204, or the
    /// end of a response that is not sent again), when it fails, when the Swift task awaiting
    /// `next()` is cancelled, and when the iterator is destroyed — leaving a `for try await` loop
    /// inside a function does that at once. In top-level code (`main.swift`) Swift keeps the
    /// iterator until the program ends, so there a `break` leaves the connection open: call
    /// `cancel()`.
    public func cancel() {
        control.cancel()
    }

    /// The current connection's buffer (``StreamStatistics/highWaterMark`` over all connections)
    /// and how many times the stream has connected.
    public var statistics: EventStreamStatistics { progress.snapshot }

    /// Creates an iterator; the first `next()` connects.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(stream: self)
    }

    /// Reads one event per call, reconnecting as needed. The reconnect decisions are
    /// `ReconnectState`'s; the iterator makes the connections and waits.
    public struct AsyncIterator: AsyncIteratorProtocol {
        /// A Server-Sent Event.
        public typealias Element = ServerSentEvent
        /// The error that ends the sequence.
        public typealias Failure = CourierError

        let stream: EventStream
        private var reader: EventReader?
        private var parser: ServerSentEventParser
        private var reconnect: ReconnectState
        private var finished = false

        init(stream: EventStream) {
            self.stream = stream
            self.parser = ServerSentEventParser(policy: stream.policy)
            self.reconnect = ReconnectState(
                policy: stream.reconnection,
                reconnects: AutomaticResend.isAllowed(
                    .reconnection, for: stream.request, optedIn: stream.reconnection.reconnectsAnyMethod),
                pausesOnOverflow: stream.policy.overflow == .pause)
        }

        /// The next event, or `nil` once the server said there are no more (204), or once the
        /// response of a request that is not sent again (a `POST`) ended.
        public mutating func next() async throws(CourierError) -> ServerSentEvent? {
            while !finished {
                if stream.control.isCancelled {
                    finished = true
                    stream.progress.attach(nil)
                    throw CourierError.cancelled(url: stream.request.url)
                }
                if reader == nil {
                    try await connect()
                    continue
                }
                do {
                    if let event = try await reader!.next() {
                        reconnect.eventDelivered()
                        return event
                    }
                    connectionEnded(nil)
                } catch {
                    guard reconnect.mayReconnect(after: error) else {
                        finished = true
                        stream.progress.attach(nil)
                        throw explained(error)
                    }
                    connectionEnded(error)
                }
            }
            return nil
        }

        /// An overflow under `.pause` that cannot reconnect says why, rather than blaming `.fail`
        /// (the connection's own policy, set below).
        private func explained(_ error: CourierError) -> CourierError {
            guard error.code == .bufferOverflow, stream.policy.overflow == .pause, !reconnect.reconnects else { return error }
            let method = (stream.request.httpMethod ?? "GET").uppercased()
            return .bufferOverflow(
                stream.policy,
                "and the event stream cannot pause: it would reconnect, and a \(method) is not sent again "
                    + "unless ReconnectPolicy.reconnectsAnyMethod is set",
                url: stream.request.url)
        }

        /// The connection is over: its parser state goes (an unfinished event is dropped, as the
        /// rules say), the last event ID stays for the next connection.
        private mutating func connectionEnded(_ error: CourierError?) {
            if let reader { parser = reader.parser }
            parser.reset()
            reader = nil
            stream.progress.attach(nil)
            stream.control.disconnected()
            reconnect.connectionEnded(error)
        }

        private mutating func connect() async throws(CourierError) {
            switch reconnect.nextStep(serverRetry: parser.reconnectionTime, now: .now) {
            case .connect:
                break
            case .end:
                finished = true
                return
            case .fail(let error):
                finished = true
                throw error.adding(url: stream.request.url, response: nil, body: nil)
            case .reconnect(let wait, let number):
                // Told before the wait, so a caller can say why the stream is quiet.
                stream.manager.events.streamWillReconnect(
                    EventStreamReconnectEvent(
                        url: stream.request.url, reconnection: number, failuresInARow: reconnect.failures,
                        reason: reconnect.lastError, delay: wait,
                        lastEventID: parser.lastEventID.isEmpty ? nil : parser.lastEventID))
                // Cut short by `cancel()` or by the Swift task's cancellation.
                guard await waitBeforeReconnecting(wait) else {
                    finished = true
                    throw CourierError.cancelled(url: stream.request.url)
                }
            }
            reconnect.connecting(at: .now)
            var request = stream.request
            request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
            request.setValue("no-cache", forHTTPHeaderField: "Cache-Control")
            if !parser.lastEventID.isEmpty { request.setValue(parser.lastEventID, forHTTPHeaderField: "Last-Event-ID") }
            var policy = stream.policy
            // Never Range on a live event stream: a pause is a reconnection (handled here).
            policy.overflow = .fail
            let validation = Validation(statusCodes: 200..<300, contentTypes: ["text/event-stream"])
            do {
                // Not retried by the manager's retry policy or retriers: reconnecting is this
                // stream's retry, and both would multiply each other's attempts. A refusal (a 401
                // an AuthenticationInterceptor answers) still goes through the one retry path.
                let (bytes, response) = try await stream.manager.bytes(
                    for: request, policy: policy, validation: validation, retried: false, control: stream.control)
                stream.progress.connected(bytes.source.buffer)
                if response.statusCode == 204 {
                    finished = true
                    stream.progress.attach(nil)
                    return
                }
                reader = EventReader(source: bytes.source, parser: parser)
            } catch {
                guard reconnect.mayReconnect(after: error) else {
                    finished = true
                    throw error
                }
                reconnect.connectFailed(error)
            }
        }

        /// The wait before a reconnection. After a lost route it is a wait for the route
        /// (ReconnectState.waitsForRoute): it ends when the manager's network monitor sees one
        /// to the host, though never before the policy's earliest reconnection, or after `wait`
        /// as any other. `false` when cancelled.
        private func waitBeforeReconnecting(_ wait: Duration) async -> Bool {
            let started = ContinuousClock.now
            guard reconnect.waitsForRoute, let host = stream.request.url?.host, !host.isEmpty else {
                return await stream.control.wait(wait)
            }
            let earliest = reconnect.earliestReconnection(now: started)
            let monitor = stream.manager.configuration.networkMonitor ?? .shared
            let waited = await stream.control.wait(wait) { wake in
                monitor.waitForRoute(to: host, timeout: wait) { outcome in
                    // Only a route that appears ends the wait early; no monitor leaves the policy's wait.
                    if case .reachable = outcome { wake() }
                }
            }
            guard waited else { return false }
            let elapsed = ContinuousClock.now - started
            return elapsed >= earliest ? true : await stream.control.wait(earliest - elapsed)
        }
    }
}

/// How an ``EventStream`` is doing.
public struct EventStreamStatistics: Sendable, Equatable {
    /// The current connection's buffer; the high-water mark is the largest over all connections.
    public var buffer: StreamStatistics
    /// How many connections were made (the first included).
    public var connections: Int
}

/// Shared by an event stream and its iterator, so ``EventStream/statistics`` can be read while
/// the iterator runs. It holds the current connection's buffer, never its stream: an iterator
/// that is dropped must still cancel its transfer while the sequence is kept.
final class EventStreamProgress: Sendable {
    private struct State {
        var buffer: StreamBuffer?
        var highWaterMark = 0
        var delivered: Int64 = 0
        var connections = 0
    }
    private let state = Locked(State())

    /// A new connection; the previous one's totals are kept.
    func connected(_ buffer: StreamBuffer) {
        attach(buffer)
        state.withLock { $0.connections += 1 }
    }

    /// Replaces the current connection (or clears it), keeping its totals.
    func attach(_ buffer: StreamBuffer?) {
        let old = state.withLock { state -> StreamBuffer? in
            defer { state.buffer = buffer }
            return state.buffer
        }
        guard let old, old !== buffer else { return }
        let final = old.statistics
        state.withLock {
            $0.highWaterMark = max($0.highWaterMark, final.highWaterMark)
            $0.delivered += final.bytesDelivered
        }
    }

    var snapshot: EventStreamStatistics {
        let (buffer, high, delivered, connections) = state.withLock { ($0.buffer, $0.highWaterMark, $0.delivered, $0.connections) }
        var statistics = buffer?.statistics ?? StreamStatistics()
        statistics.highWaterMark = max(statistics.highWaterMark, high)
        statistics.bytesDelivered += delivered
        return EventStreamStatistics(buffer: statistics, connections: connections)
    }
}

extension SessionManager {
    /// Server-Sent Events from `request`, parsed by the WHATWG rules and reconnecting with
    /// `Last-Event-ID` when the connection drops (see ``EventStream``), within `reconnection`'s
    /// bounds. Only a GET or HEAD reconnects unless ``ReconnectPolicy/reconnectsAnyMethod`` is set:
    /// a `POST` (an LLM completion) is sent once. Nothing is sent until the first `next()`.
    public func events(
        for request: URLRequest, policy: StreamPolicy = .default, reconnection: ReconnectPolicy = .default
    ) -> EventStream {
        EventStream(manager: self, request: request, policy: policy, reconnection: reconnection)
    }

    /// Newline-delimited JSON from `request`, each non-blank line decoded as `type` (see
    /// ``ByteStream/jsonLines(_:decoder:)``; for the response head, use ``bytes(for:policy:validation:)``
    /// and its `jsonLines`). Nothing is sent until the first `next()`; it does not reconnect.
    public func jsonLines<Value: Decodable>(
        _ type: Value.Type, for request: URLRequest, decoder: JSONDecoder = JSONDecoder(), policy: StreamPolicy = .default,
        validation: Validation = .default
    ) -> JSONLineStream<Value> {
        JSONLineStream(manager: self, request: request, decoder: decoder, policy: policy, validation: validation)
    }
}

/// Newline-delimited JSON values from ``SessionManager/jsonLines(_:for:decoder:policy:validation:)``.
public struct JSONLineStream<Value: Decodable>: AsyncSequence, Sendable {
    /// A value decoded from one line.
    public typealias Element = Value
    /// The error that ends the sequence.
    public typealias Failure = CourierError

    let manager: SessionManager
    let request: URLRequest
    let decoder: JSONDecoder
    let policy: StreamPolicy
    let validation: Validation
    let control = StreamControl()

    /// Ends the stream now, from any thread: the transfer is cancelled (also while its head is
    /// awaited), and the iterator's pending or next `next()` throws
    /// ``CourierError/Code-swift.struct/cancelled``. As for ``EventStream/cancel()``, leaving a loop
    /// inside a function ends the transfer too; in top-level code call this.
    public func cancel() {
        control.cancel()
    }

    /// Creates an iterator; the first `next()` sends the request.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(stream: self)
    }

    /// Decodes one line per call.
    public struct AsyncIterator: AsyncIteratorProtocol {
        /// A value decoded from one line.
        public typealias Element = Value
        /// The error that ends the sequence.
        public typealias Failure = CourierError

        let stream: JSONLineStream
        private var lines: ByteStream.JSONLines<Value>.AsyncIterator?

        init(stream: JSONLineStream) {
            self.stream = stream
        }

        /// The next value, or `nil` at the end of the body.
        public mutating func next() async throws(CourierError) -> Value? {
            if stream.control.isCancelled { throw CourierError.cancelled(url: stream.request.url) }
            if lines == nil {
                let (bytes, _) = try await stream.manager.bytes(
                    for: stream.request, policy: stream.policy, validation: stream.validation, retried: true,
                    control: stream.control)
                lines = bytes.jsonLines(Value.self, decoder: stream.decoder).makeAsyncIterator()
            }
            return try await lines!.next()
        }
    }
}
