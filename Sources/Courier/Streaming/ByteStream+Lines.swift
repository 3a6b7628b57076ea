import Foundation

extension ByteStream {
    /// The body as lines of text: split at LF, CRLF or a lone CR, without their terminators,
    /// decoded as UTF-8 (invalid bytes become U+FFFD). Empty lines are kept (Darwin's
    /// `AsyncLineSequence` drops them; a protocol such as Server-Sent Events needs them). A line
    /// longer than ``StreamPolicy/maximumLineLength`` fails the sequence with
    /// ``CourierError/Code-swift.struct/responseTooLarge``; the last line needs no terminator.
    public var lines: Lines { Lines(source: source) }

    /// Newline-delimited JSON (JSON Lines, NDJSON): each non-blank line decoded as `type`. A line
    /// that does not decode fails the sequence with ``CourierError/Code-swift.struct/decodingFailed``
    /// (its message names the line number; its ``CourierError/body`` is the line).
    public func jsonLines<Value: Decodable>(_ type: Value.Type, decoder: JSONDecoder = JSONDecoder()) -> JSONLines<Value> {
        JSONLines(source: source, decoder: decoder)
    }

    /// The lines of a ``ByteStream``.
    public struct Lines: AsyncSequence, Sendable {
        /// A line, without its terminator.
        public typealias Element = String
        /// The error that ends the sequence.
        public typealias Failure = CourierError

        let source: Source

        /// Creates an iterator over the lines.
        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(reader: LineReader(source: source))
        }

        /// Reads one line per call.
        public struct AsyncIterator: AsyncIteratorProtocol {
            /// A line, without its terminator.
            public typealias Element = String
            /// The error that ends the sequence.
            public typealias Failure = CourierError

            var reader: LineReader

            /// The next line, or `nil` at the end of the body.
            public mutating func next() async throws(CourierError) -> String? {
                try await reader.next().map { String(decoding: $0, as: UTF8.self) }
            }
        }
    }

    /// The values of a newline-delimited JSON body (see ``ByteStream/jsonLines(_:decoder:)``).
    public struct JSONLines<Value: Decodable>: AsyncSequence, Sendable {
        /// A value decoded from one line.
        public typealias Element = Value
        /// The error that ends the sequence.
        public typealias Failure = CourierError

        let source: Source
        let decoder: JSONDecoder

        /// Creates an iterator over the values.
        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(reader: LineReader(source: source), decoder: decoder)
        }

        /// Decodes one line per call.
        public struct AsyncIterator: AsyncIteratorProtocol {
            /// A value decoded from one line.
            public typealias Element = Value
            /// The error that ends the sequence.
            public typealias Failure = CourierError

            var reader: LineReader
            let decoder: JSONDecoder
            var lineNumber = 0

            /// The next value, or `nil` at the end of the body.
            public mutating func next() async throws(CourierError) -> Value? {
                while let line = try await reader.next() {
                    lineNumber += 1
                    if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }  // blank lines separate nothing
                    do {
                        return try decoder.decode(Value.self, from: line)
                    } catch {
                        throw CourierError(
                            code: .decodingFailed,
                            message: "line \(lineNumber) of the JSON lines is not a valid \(Value.self): \(error)",
                            url: reader.source.buffer.url, body: line, underlyingError: error)
                    }
                }
                return nil
            }
        }
    }
}

/// Lines pulled from a stream's chunks, bounded by its policy's line length.
struct LineReader {
    let source: ByteStream.Source
    private var splitter: LineSplitter
    private var lines: [Data] = []
    private var index = 0
    private var ended = false

    init(source: ByteStream.Source) {
        self.source = source
        self.splitter = LineSplitter(maximumLineLength: source.policy.maximumLineLength)
    }

    mutating func next() async throws(CourierError) -> Data? {
        while true {
            if index < lines.count {
                defer { index += 1 }
                return lines[index]
            }
            if ended { return nil }
            lines.removeAll(keepingCapacity: true)
            index = 0
            guard let chunk = try await source.nextChunk() else {
                ended = true
                if let last = splitter.finish() { lines.append(last) }
                continue
            }
            lines = try splitter.feed(chunk)
        }
    }
}
