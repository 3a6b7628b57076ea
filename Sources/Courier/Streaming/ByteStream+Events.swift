import Foundation

extension ByteStream {
    /// The body parsed as Server-Sent Events (WHATWG rules), without reconnecting: the sequence
    /// ends with this response. ``SessionManager/events(for:policy:reconnection:)`` reconnects.
    /// Lines are bounded by ``StreamPolicy/maximumLineLength`` and one event's data by
    /// ``StreamPolicy/bufferLimit``; beyond either the sequence fails with
    /// ``CourierError/Code-swift.struct/responseTooLarge``.
    public var events: ServerSentEvents { ServerSentEvents(source: source) }

    /// The events of one `text/event-stream` response.
    public struct ServerSentEvents: AsyncSequence, Sendable {
        /// A Server-Sent Event.
        public typealias Element = ServerSentEvent
        /// The error that ends the sequence.
        public typealias Failure = CourierError

        let source: Source

        /// Creates an iterator over the events.
        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(reader: EventReader(source: source, parser: ServerSentEventParser(policy: source.policy)))
        }

        /// Reads one event per call.
        public struct AsyncIterator: AsyncIteratorProtocol {
            /// A Server-Sent Event.
            public typealias Element = ServerSentEvent
            /// The error that ends the sequence.
            public typealias Failure = CourierError

            var reader: EventReader

            /// The next event, or `nil` at the end of the response.
            public mutating func next() async throws(CourierError) -> ServerSentEvent? {
                try await reader.next()
            }
        }
    }
}

extension ServerSentEventParser {
    /// A parser bounded by a stream's policy.
    init(policy: StreamPolicy) {
        self.init(maximumLineLength: policy.maximumLineLength, maximumEventSize: policy.bufferLimit)
    }
}

/// Events pulled from one stream's chunks.
struct EventReader {
    let source: ByteStream.Source
    var parser: ServerSentEventParser
    private var events: [ServerSentEvent] = []
    private var index = 0
    private var ended = false

    init(source: ByteStream.Source, parser: ServerSentEventParser) {
        self.source = source
        self.parser = parser
    }

    mutating func next() async throws(CourierError) -> ServerSentEvent? {
        while true {
            if index < events.count {
                defer { index += 1 }
                return events[index]
            }
            if ended { return nil }
            events.removeAll(keepingCapacity: true)
            index = 0
            guard let chunk = try await source.nextChunk() else {
                ended = true
                events = parser.finish()
                continue
            }
            events = try parser.feed(chunk)
        }
    }
}
