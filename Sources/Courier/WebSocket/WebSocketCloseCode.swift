/// A status code of a Close frame (RFC 6455 §7.4), kept as the 16-bit number on the wire so that
/// codes the named ones do not cover (3000–4999 for libraries and applications) survive intact.
///
/// The names follow `URLSessionWebSocketTask.CloseCode`'s, so the public task can map between
/// the two without a table of its own. ``WebSocketTask/webSocketCloseCode`` reports codes the
/// enum has no case for (3000–4999) intact, and ``WebSocketTask/cancel(withCloseCode:reason:)``
/// sends them.
public struct WebSocketCloseCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The code as sent on the wire.
    public let rawValue: UInt16

    /// A code from its number.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// 1000: the purpose of the connection was fulfilled.
    public static let normalClosure = WebSocketCloseCode(rawValue: 1000)
    /// 1001: the peer is going away (a server shutting down, a page left).
    public static let goingAway = WebSocketCloseCode(rawValue: 1001)
    /// 1002: the peer broke the protocol.
    public static let protocolError = WebSocketCloseCode(rawValue: 1002)
    /// 1003: a kind of data the endpoint cannot accept (binary where only text is understood).
    public static let unsupportedData = WebSocketCloseCode(rawValue: 1003)
    /// 1005: reported, never sent: the close frame carried no status code.
    public static let noStatusReceived = WebSocketCloseCode(rawValue: 1005)
    /// 1006: reported, never sent: the connection ended without a close frame.
    public static let abnormalClosure = WebSocketCloseCode(rawValue: 1006)
    /// 1007: a text message (or a close reason) that is not UTF-8.
    public static let invalidFramePayloadData = WebSocketCloseCode(rawValue: 1007)
    /// 1008: a message that violates the endpoint's policy.
    public static let policyViolation = WebSocketCloseCode(rawValue: 1008)
    /// 1009: a frame or message larger than the endpoint accepts.
    public static let messageTooBig = WebSocketCloseCode(rawValue: 1009)
    /// 1010: (client) the server did not negotiate an extension the client requires.
    public static let mandatoryExtensionMissing = WebSocketCloseCode(rawValue: 1010)
    /// 1011: (server) an unexpected condition stopped the server.
    public static let internalServerError = WebSocketCloseCode(rawValue: 1011)
    /// 1015: reported, never sent: the TLS handshake failed.
    public static let tlsHandshakeFailure = WebSocketCloseCode(rawValue: 1015)

    /// Whether a peer may send this code in a Close frame, so that it is echoed rather than
    /// answered with 1002 (§7.4.1, §7.4.2 and the IANA "WebSocket Close Code Number" registry):
    /// - 1000–1003 and 1007–1011: defined by RFC 6455.
    /// - 1012–1014: registered with IANA since (service restart, try again later, bad gateway);
    ///   servers send them, and Autobahn|Testsuite stopped listing them as invalid in 2016 and
    ///   2018 (its case 7.9.x).
    /// - 3000–4999: registered libraries and frameworks, and private use.
    ///
    /// Not 0–999 (never used), 1004 (reserved), 1005, 1006 and 1015 (§7.4.1: MUST NOT be sent
    /// in a Close frame), nor 1016–2999 (reserved for future revisions, unassigned today).
    public var isValidOnTheWire: Bool {
        switch rawValue {
        case 1000...1003, 1007...1014, 3000...4999: return true
        default: return false
        }
    }

    /// The number, e.g. `1002`.
    public var description: String { String(rawValue) }
}
