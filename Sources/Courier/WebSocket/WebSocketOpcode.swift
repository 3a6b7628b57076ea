/// A frame's opcode (RFC 6455 §5.2): what its payload is. Opcodes 3–7 and 0xB–0xF are reserved
/// and have no case: the decoder refuses them (1002) before a frame is made.
enum WebSocketOpcode: UInt8, Sendable, Hashable {
    /// A further fragment of the message the last data frame started.
    case continuation = 0x0
    /// The first (or only) frame of a text message: UTF-8.
    case text = 0x1
    /// The first (or only) frame of a binary message.
    case binary = 0x2
    /// Closing handshake (§5.5.1): an optional 2-byte code and a UTF-8 reason.
    case close = 0x8
    /// A ping (§5.5.2): to be answered with a pong carrying the same payload.
    case ping = 0x9
    /// A pong (§5.5.3): an answer to a ping, or an unsolicited heartbeat.
    case pong = 0xA

    /// Control frames (close, ping, pong) have the high bit of the opcode set: at most 125
    /// bytes, never fragmented, and allowed between the fragments of a message (§5.5).
    var isControl: Bool { rawValue & 0x8 != 0 }
}
