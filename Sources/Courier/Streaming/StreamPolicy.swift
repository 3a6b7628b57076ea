import Foundation

/// How a streamed body is held between the network and its consumer: how much may wait, what
/// happens when the consumer falls further behind, and how long the body may go silent.
///
/// FoundationNetworking cannot slow a sender down (receive pausing is not implemented and
/// `suspend()` sends the request again from byte 0, Docs/Platform.md §2.8), so a consumer slower
/// than the network would otherwise make memory grow with the body. A stream holds at most
/// ``bufferLimit`` bytes (plus the one chunk that crossed it) and then applies ``overflow``.
public struct StreamPolicy: Sendable, Equatable {
    /// What a stream does when its consumer falls more than ``StreamPolicy/bufferLimit`` bytes behind.
    public enum Overflow: Sendable, Equatable {
        /// Fail the stream with ``CourierError/Code-swift.struct/bufferOverflow`` once the consumer has
        /// taken the bytes already held. Nothing unbounded, nothing silent: the default.
        case fail
        /// Stop receiving and continue once the consumer has caught up: a byte resource by
        /// asking for the rest with `Range`/`If-Range` (it needs a GET and a strong validator: an
        /// `ETag` or `Last-Modified`, and an unencoded body; without them the stream fails as with
        /// ``fail``, since a `POST` is never sent again by itself); an event stream by
        /// reconnecting with `Last-Event-ID` after the consumer has drained the events held (a GET
        /// or HEAD, or any method with ``ReconnectPolicy/reconnectsAnyMethod``). Memory stays
        /// bounded and, for byte resources, nothing is lost.
        case pause
    }

    /// The most bytes held for the consumer before ``overflow`` applies (at least 1).
    public var bufferLimit: Int
    /// What happens when the consumer is more than ``bufferLimit`` bytes behind.
    public var overflow: Overflow
    /// The longest gap allowed without a byte from the server (waiting for the response head
    /// included, time paused for the consumer not); `nil` for no limit. Unlike URLSession's
    /// request timeout it is not rounded to whole seconds (Docs/Platform.md §2.11). When it passes,
    /// the stream fails with ``CourierError/Code-swift.struct/timedOut`` (an event stream reconnects).
    public var idleTimeout: Duration?
    /// The longest line ``ByteStream/lines``, ``ByteStream/jsonLines(_:decoder:)`` and event
    /// streams accept, in bytes; a longer one fails the sequence with
    /// ``CourierError/Code-swift.struct/responseTooLarge`` instead of growing without bound.
    public var maximumLineLength: Int

    /// Creates a policy.
    public init(
        bufferLimit: Int = 8 << 20, overflow: Overflow = .fail, idleTimeout: Duration? = nil,
        maximumLineLength: Int = 1 << 20
    ) {
        self.bufferLimit = max(1, bufferLimit)
        self.overflow = overflow
        self.idleTimeout = idleTimeout
        self.maximumLineLength = max(1, maximumLineLength)
    }

    /// 8 MiB held at most, failing beyond it; no idle limit; lines up to 1 MiB.
    public static let `default` = StreamPolicy()
}

/// How much a stream holds and has held, readable while it runs.
public struct StreamStatistics: Sendable, Equatable {
    /// Bytes received and not yet taken by the consumer.
    public var bufferedBytes: Int
    /// The most bytes held at once so far.
    public var highWaterMark: Int
    /// Bytes the consumer has taken.
    public var bytesDelivered: Int64
    /// How often the transfer was stopped because the consumer fell behind and continued with
    /// `Range` once it caught up (``StreamPolicy/Overflow/pause``).
    public var pauses: Int

    /// Creates statistics (Courier creates them; tests may too).
    public init(bufferedBytes: Int = 0, highWaterMark: Int = 0, bytesDelivered: Int64 = 0, pauses: Int = 0) {
        self.bufferedBytes = bufferedBytes
        self.highWaterMark = highWaterMark
        self.bytesDelivered = bytesDelivered
        self.pauses = pauses
    }
}
