/// What a frame's header says (§5.2), decoded before its payload arrives: enough to refuse the
/// frame, or to judge the message it belongs to, without buffering a byte of payload.
struct WebSocketFrameHeader: Equatable, Sendable {
    /// FIN.
    var fin: Bool
    /// RSV1–RSV3 in their header positions.
    var reservedBits: UInt8
    /// The opcode.
    var opcode: WebSocketOpcode
    /// The masking key, when the MASK bit is set.
    var maskingKey: WebSocketMaskingKey?
    /// The payload length the header announces.
    var payloadLength: Int
}
