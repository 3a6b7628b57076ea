import Foundation

/// How a streamed body is held between the network and its consumer: how much may wait, what
/// happens when the consumer falls further behind, how long the response head may take and how
/// long the body may go silent.
///
/// A stream's waits are its policy's alone: URLSession's request timeout (the manager's
/// `timeoutIntervalForRequest`, 60 s by default, or the request's `timeoutInterval`) does not
/// apply to streams, because it would cut a model server that takes 70 s to answer, or an event
/// stream that is rightly quiet for minutes, behind the policy's back. Courier gives the stream's
/// URLSession task a timeout past the policy's limits (`urlSessionTimeout`) and keeps the
/// limits with its own timer. With neither limit set, nothing limits the waits: a server that
/// vanishes without closing the connection is then noticed only by ``SessionManager/Configuration/deadline``.
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
    /// The longest wait for the response head, from the start of each attempt (connecting,
    /// sending the request and redirects included); `nil` to use ``idleTimeout`` for it too.
    /// A model server that loads its model before answering needs a long one. When it passes, the
    /// stream fails with ``CourierError/Code-swift.struct/timedOut`` (an event stream reconnects,
    /// if its request may be sent again).
    public var headTimeout: Duration?
    /// The longest silence allowed: no byte from the server between chunks, and also before the
    /// response head when ``headTimeout`` is `nil`; time paused for the consumer does not count.
    /// `nil` for no limit. It is not rounded to whole seconds, as URLSession's request timeout is
    /// (Docs/Platform.md §2.11). When it passes, the stream fails with
    /// ``CourierError/Code-swift.struct/timedOut`` (an event stream reconnects, if its request may
    /// be sent again).
    public var idleTimeout: Duration?
    /// The longest line ``ByteStream/lines``, ``ByteStream/jsonLines(_:decoder:)`` and event
    /// streams accept, in bytes; a longer one fails the sequence with
    /// ``CourierError/Code-swift.struct/responseTooLarge`` instead of growing without bound.
    public var maximumLineLength: Int

    /// Creates a policy.
    public init(
        bufferLimit: Int = 8 << 20, overflow: Overflow = .fail, headTimeout: Duration? = nil,
        idleTimeout: Duration? = nil, maximumLineLength: Int = 1 << 20
    ) {
        self.bufferLimit = max(1, bufferLimit)
        self.overflow = overflow
        self.idleTimeout = idleTimeout.map { max(.zero, $0) }
        self.maximumLineLength = max(1, maximumLineLength)
        self.headTimeout = headTimeout.map { max(.zero, $0) }
    }

    /// 8 MiB held at most, failing beyond it; no limit on the wait for the head or on silence;
    /// lines up to 1 MiB.
    public static let `default` = StreamPolicy()

    /// The longest wait for the response head: ``headTimeout``, else ``idleTimeout``; `nil` for none.
    var headLimit: Duration? { headTimeout ?? idleTimeout }

    /// The request timeout a stream's URLSession task gets: never shorter than a wait the policy
    /// allows. URLSession's timeout is an idle timer in whole seconds (Docs/Platform.md §2.11), so
    /// with both limits set it is the longer one rounded up, plus a second, and Courier's own
    /// timer always fires first with a message that names the policy's setting. Without a limit on
    /// one of the waits it is ``unlimitedURLSessionTimeout``.
    var urlSessionTimeout: TimeInterval {
        guard let head = headLimit, let idle = idleTimeout else { return Self.unlimitedURLSessionTimeout }
        return min(max(head, idle).seconds.rounded(.up) + 1, Self.unlimitedURLSessionTimeout)
    }

    /// What "no limit" is for URLSession: a year. FoundationNetworking turns the timeout into
    /// whole milliseconds for a dispatch timer, so it must stay a finite, modest number.
    static let unlimitedURLSessionTimeout: TimeInterval = 365 * 86_400
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
