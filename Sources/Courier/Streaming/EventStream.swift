import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// When and how often an event stream reconnects after its connection ends.
public struct ReconnectPolicy: Sendable, Equatable {
    /// The wait before reconnecting when the server sent no `retry:` (WHATWG leaves it to the
    /// client; browsers use a few seconds).
    public var delay: Duration
    /// The longest wait: a server's `retry:` and the backoff are capped here, so a hostile
    /// `retry: 999999999` cannot park the stream for days.
    public var maximumDelay: Duration
    /// How many reconnections in a row may fail (no connection, or a connection that ended
    /// before delivering an event) before the sequence fails with the last error. Each of them
    /// doubles the wait, up to ``maximumDelay``. An event resets the count.
    public var maximumAttempts: Int

    /// Creates a policy.
    public init(delay: Duration = .seconds(3), maximumDelay: Duration = .seconds(60), maximumAttempts: Int = 5) {
        self.delay = max(.zero, delay)
        self.maximumDelay = max(.zero, maximumDelay)
        self.maximumAttempts = max(0, maximumAttempts)
    }

    /// 3 s (or the server's `retry:`), doubling on failures up to 60 s, at most 5 failures in a row.
    public static let `default` = ReconnectPolicy()
    /// Never reconnect: the sequence ends (or fails) with its first connection.
    public static let never = ReconnectPolicy(maximumAttempts: 0)

    /// The wait before reconnection number `failures + 1` (`failures` failed in a row).
    func wait(serverRetry: Duration?, failures: Int) -> Duration {
        var wait = serverRetry ?? delay
        for _ in 0..<min(failures, 32) where wait < maximumDelay { wait = wait * 2 }
        return min(wait, maximumDelay)
    }
}

/// Server-Sent Events from ``SessionManager/events(for:policy:reconnection:)``: one
/// uninterrupted sequence across reconnections.
///
/// The first connection is made by the first `next()`. When a connection drops (a transport
/// error, the idle timeout, or a normal end of the response), the stream waits the server's
/// `retry:` (or ``ReconnectPolicy/delay``) and reconnects with `Last-Event-ID`, so a server that
/// honours it continues where the consumer is. It ends when the server answers 204 No Content;
/// it fails on any other refused response (a non-2xx status or a type other than
/// `text/event-stream`, as the WHATWG rules say), on cancellation, or after
/// ``ReconnectPolicy/maximumAttempts`` failed reconnections. With ``StreamPolicy/Overflow/pause``
/// a consumer that falls more than ``StreamPolicy/bufferLimit`` behind makes the stream drop the
/// connection, hand over the events it holds, and reconnect with `Last-Event-ID`; with
/// ``StreamPolicy/Overflow/fail`` (the default) the stream fails.
public struct EventStream: AsyncSequence, Sendable {
    public typealias Element = ServerSentEvent
    public typealias Failure = CourierError

    let manager: SessionManager
    let request: URLRequest
    let policy: StreamPolicy
    let reconnection: ReconnectPolicy
    let progress: EventStreamProgress

    init(manager: SessionManager, request: URLRequest, policy: StreamPolicy, reconnection: ReconnectPolicy) {
        self.manager = manager
        self.request = request
        self.policy = policy
        self.reconnection = reconnection
        self.progress = EventStreamProgress()
    }

    /// The current connection's buffer (``StreamStatistics/highWaterMark`` over all connections)
    /// and how many times the stream has connected.
    public var statistics: EventStreamStatistics { progress.snapshot }

    /// Creates an iterator; the first `next()` connects.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(stream: self)
    }

    /// Reads one event per call, reconnecting as needed.
    public struct AsyncIterator: AsyncIteratorProtocol {
        public typealias Element = ServerSentEvent
        public typealias Failure = CourierError

        let stream: EventStream
        private var reader: EventReader?
        private var parser: ServerSentEventParser
        private var failures = 0
        private var connections = 0
        private var deliveredOnConnection = false
        private var lastError: CourierError?
        private var finished = false

        init(stream: EventStream) {
            self.stream = stream
            self.parser = ServerSentEventParser(policy: stream.policy)
        }

        /// The next event, or `nil` once the server said there are no more (204).
        public mutating func next() async throws(CourierError) -> ServerSentEvent? {
            while !finished {
                if reader == nil {
                    try await connect()
                    continue
                }
                do {
                    if let event = try await reader!.next() {
                        failures = 0
                        deliveredOnConnection = true
                        return event
                    }
                    connectionEnded(nil)
                } catch {
                    guard isReconnectable(error) else {
                        finished = true
                        stream.progress.attach(nil)
                        throw error
                    }
                    connectionEnded(error)
                }
            }
            return nil
        }

        private func isReconnectable(_ error: CourierError) -> Bool {
            if error.isTransport || error.code == .timedOut { return true }
            return error.code == .bufferOverflow && stream.policy.overflow == .pause
        }

        /// The connection is over: its parser state goes (an unfinished event is dropped, as the
        /// rules say), the last event ID stays for the next connection.
        private mutating func connectionEnded(_ error: CourierError?) {
            if let reader { parser = reader.parser }
            parser.reset()
            reader = nil
            stream.progress.attach(nil)
            lastError = error
            // A connection that delivered nothing counts against the limit; one that did, not.
            if !deliveredOnConnection { failures += 1 }
            if error?.code == .bufferOverflow { failures = 0 }
        }

        private mutating func connect() async throws(CourierError) {
            if connections > 0 {
                guard failures <= stream.reconnection.maximumAttempts, stream.reconnection.maximumAttempts > 0 else {
                    finished = true
                    if let lastError { throw lastError }
                    // The server ended the response and reconnecting is off: a normal end.
                    if stream.reconnection.maximumAttempts == 0 { return }
                    // Connections that kept ending without an event: giving up must not look like a 204.
                    throw CourierError(
                        code: .invalidResponse,
                        message: "the event stream ended \(failures) times in a row without an event; gave up "
                            + "(ReconnectPolicy.maximumAttempts is \(stream.reconnection.maximumAttempts))",
                        url: stream.request.url)
                }
                let wait = stream.reconnection.wait(serverRetry: parser.reconnectionTime, failures: Swift.max(0, failures - 1))
                do {
                    try await Task.sleep(for: wait)
                } catch {
                    finished = true
                    throw CourierError.cancelled(url: stream.request.url)
                }
            }
            connections += 1
            deliveredOnConnection = false
            var request = stream.request
            request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
            request.setValue("no-cache", forHTTPHeaderField: "Cache-Control")
            if !parser.lastEventID.isEmpty { request.setValue(parser.lastEventID, forHTTPHeaderField: "Last-Event-ID") }
            var policy = stream.policy
            // Never Range on a live event stream: a pause is a reconnection (handled here).
            policy.overflow = .fail
            let validation = Validation(statusCodes: 200..<300, contentTypes: ["text/event-stream"])
            do {
                let (bytes, response) = try await stream.manager.bytes(for: request, policy: policy, validation: validation)
                stream.progress.connected(bytes.source.buffer)
                if response.statusCode == 204 {
                    finished = true
                    stream.progress.attach(nil)
                    return
                }
                reader = EventReader(source: bytes.source, parser: parser)
            } catch {
                guard isReconnectable(error) else {
                    finished = true
                    throw error
                }
                failures += 1
                lastError = error
            }
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
    /// `Last-Event-ID` when the connection drops (see ``EventStream``). Nothing is sent until the
    /// first `next()`.
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
    public typealias Element = Value
    public typealias Failure = CourierError

    let manager: SessionManager
    let request: URLRequest
    let decoder: JSONDecoder
    let policy: StreamPolicy
    let validation: Validation

    /// Creates an iterator; the first `next()` sends the request.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(stream: self)
    }

    /// Decodes one line per call.
    public struct AsyncIterator: AsyncIteratorProtocol {
        public typealias Element = Value
        public typealias Failure = CourierError

        let stream: JSONLineStream
        private var lines: ByteStream.JSONLines<Value>.AsyncIterator?

        init(stream: JSONLineStream) {
            self.stream = stream
        }

        /// The next value, or `nil` at the end of the body.
        public mutating func next() async throws(CourierError) -> Value? {
            if lines == nil {
                let (bytes, _) = try await stream.manager.bytes(
                    for: stream.request, policy: stream.policy, validation: stream.validation)
                lines = bytes.jsonLines(Value.self, decoder: stream.decoder).makeAsyncIterator()
            }
            return try await lines!.next()
        }
    }
}
