/// How a ``WebSocketTask`` keeps its connection alive and holds its messages: pings, the receive
/// and send buffers, and how long opening and closing may take. The manager's
/// ``SessionManager/Configuration/webSocket`` is every task's starting point; a task's
/// ``WebSocketTask/options`` may change it before `resume()`.
public struct WebSocketOptions: Sendable, Equatable {
    /// Sends a ping this often and fails the task with ``CourierError/Code-swift.struct/timedOut``
    /// when nothing at all came from the server (no pong, no message) for a whole interval after
    /// one: a dead peer is found within 2 × the interval. `nil` (the default): no pings of its own.
    /// While reading is stopped for a consumer that is behind, silence does not count.
    public var pingInterval: Duration?
    /// The most message bytes held for the consumer (at least 1) before ``overflow`` applies.
    public var receiveBufferLimit: Int
    /// What happens when the consumer falls more than ``receiveBufferLimit`` bytes behind:
    /// ``StreamPolicy/Overflow/pause`` (the default) stops reading data until the consumer
    /// catches up, so TCP slows the server down and nothing is lost; meanwhile reads shrink to one
    /// control frame, so a ping or Close frame with no data ahead of it is still answered;
    /// ``StreamPolicy/Overflow/fail`` closes with 1008 and fails the task with
    /// ``CourierError/Code-swift.struct/bufferOverflow`` once the messages held are taken.
    public var overflow: StreamPolicy.Overflow
    /// `send(_:)` suspends while more than this many bytes wait to be written (at least 1).
    public var sendBufferLimit: Int
    /// The longest wait for the connection and the handshake's answer; `nil` for the request's
    /// `timeoutInterval`.
    public var openTimeout: Duration?
    /// After a Close frame was sent or received, the longest wait for the rest of the closing
    /// handshake (the server's Close frame, then the server closing TCP first, RFC 6455 §7.1.1)
    /// before Courier closes the connection itself.
    public var closeTimeout: Duration
    /// `permessage-deflate` (RFC 7692) to offer the server: `WebSocketCompression()` by default
    /// (Autobahn|Testsuite's groups 12 and 13 all OK, Docs/WebSocket.md); `nil`: no compression.
    /// Offered only where the system's zlib loads; a server that declines it is fine.
    public var compression: WebSocketCompression?

    /// Options; by default no pings, 4 MiB held with back-pressure, 1 MiB of unsent bytes, the
    /// request's timeout to open, 5 s to close and `permessage-deflate` offered.
    public init(
        pingInterval: Duration? = nil, receiveBufferLimit: Int = 4 << 20, overflow: StreamPolicy.Overflow = .pause,
        sendBufferLimit: Int = 1 << 20, openTimeout: Duration? = nil, closeTimeout: Duration = .seconds(5),
        compression: WebSocketCompression? = WebSocketCompression()
    ) {
        self.compression = compression
        self.pingInterval = pingInterval.map { max(.milliseconds(1), $0) }
        self.receiveBufferLimit = max(1, receiveBufferLimit)
        self.overflow = overflow
        self.sendBufferLimit = max(1, sendBufferLimit)
        self.openTimeout = openTimeout.map { max(.zero, $0) }
        self.closeTimeout = max(.zero, closeTimeout)
    }
}
