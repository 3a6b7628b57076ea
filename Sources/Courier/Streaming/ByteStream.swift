import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response body as it arrives: an `AsyncSequence` of bytes, like Darwin's
/// `URLSession.AsyncBytes`, from ``SessionManager/bytes(for:policy:validation:)``.
///
/// Iterating byte by byte is cheap (a byte is read from the current chunk without suspending);
/// ``chunks`` hands over each chunk as `Data` for speed, ``lines`` splits lines, ``events``
/// parses Server-Sent Events and ``jsonLines(_:decoder:)`` decodes newline-delimited JSON.
///
/// A stream has one consumer: its views share one buffer, and each byte goes to whichever
/// iterator asks first. Cancelling the iterating Swift task, or dropping the stream and its
/// iterators, cancels the transfer. Failures are ``CourierError``s (typed throws).
public struct ByteStream: AsyncSequence, Sendable {
    /// A byte of the body.
    public typealias Element = UInt8
    /// The error that ends the sequence.
    public typealias Failure = CourierError

    /// What every view of one stream shares: the buffer and the task. When the last view and
    /// iterator are gone, the transfer is cancelled.
    @usableFromInline
    final class Source: Sendable {
        let buffer: StreamBuffer
        let task: StreamTask
        let policy: StreamPolicy

        init(buffer: StreamBuffer, task: StreamTask, policy: StreamPolicy) {
            self.buffer = buffer
            self.task = task
            self.policy = policy
        }

        deinit {
            // Dropped by its consumer: stop the transfer (a no-op once it has ended).
            buffer.consumerCancelled()
        }

        @usableFromInline
        func nextChunk() async throws(CourierError) -> Data? {
            try await buffer.next().get()
        }
    }

    @usableFromInline let source: Source

    init(source: Source) {
        self.source = source
    }

    /// The task fetching the body (its state, progress and `cancel()`).
    public var task: StreamTask { source.task }

    /// Ends the transfer now, from any thread (`task.cancel()`): the iterator's pending or next
    /// `next()` throws ``CourierError/Code-swift.struct/cancelled`` once the bytes already
    /// delivered are read. Leaving a `for try await` loop inside a function ends it too; in
    /// top-level code, where Swift keeps the iterator until the program ends, call this.
    public func cancel() {
        source.task.cancel()
    }

    /// How much the stream holds and has held, now.
    public var statistics: StreamStatistics { source.buffer.statistics }

    /// The policy the stream runs under.
    public var policy: StreamPolicy { source.policy }

    /// Creates an iterator over the bytes.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(source: source)
    }

    /// Reads bytes from the current chunk, waiting only when it is used up.
    public struct AsyncIterator: AsyncIteratorProtocol {
        /// A byte of the body.
        public typealias Element = UInt8
        /// The error that ends the sequence.
        public typealias Failure = CourierError

        @usableFromInline let source: Source
        @usableFromInline var chunk = Data()
        @usableFromInline var index = 0

        init(source: Source) {
            self.source = source
        }

        /// The next byte, or `nil` at the end of the body.
        @inlinable
        public mutating func next() async throws(CourierError) -> UInt8? {
            if index < chunk.endIndex {
                defer { index += 1 }
                return chunk[index]
            }
            return try await nextFromNewChunk()
        }

        @usableFromInline
        mutating func nextFromNewChunk() async throws(CourierError) -> UInt8? {
            while let next = try await source.nextChunk() {
                guard !next.isEmpty else { continue }
                chunk = next
                index = next.startIndex + 1
                return next[next.startIndex]
            }
            chunk = Data()
            index = 0
            return nil
        }
    }

    /// The body chunk by chunk, as the network delivered it: the fastest way to consume a stream.
    public var chunks: Chunks { Chunks(source: source) }

    /// The body as `Data` chunks, in order.
    public struct Chunks: AsyncSequence, Sendable {
        /// A chunk of the body.
        public typealias Element = Data
        /// The error that ends the sequence.
        public typealias Failure = CourierError

        let source: Source

        /// Creates an iterator over the chunks.
        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(source: source)
        }

        /// Hands over one chunk per call.
        public struct AsyncIterator: AsyncIteratorProtocol {
            /// A chunk of the body.
            public typealias Element = Data
            /// The error that ends the sequence.
            public typealias Failure = CourierError

            let source: Source

            /// The next chunk, or `nil` at the end of the body.
            public mutating func next() async throws(CourierError) -> Data? {
                try await source.nextChunk()
            }
        }
    }
}
