import Foundation

/// One WebSocket frame (RFC 6455 §5.2) with its payload unmasked: what the decoder produces and
/// the encoder writes. Masking is not part of the value; it belongs to the wire
/// (``encoded(maskingKey:)``).
struct WebSocketFrame: Equatable, Sendable {
    /// The RSV1, RSV2 and RSV3 bits as they sit in the first header byte (`0x40`, `0x20`, `0x10`).
    static let reservedBitsMask: UInt8 = 0x70
    /// The largest payload a control frame may carry (§5.5).
    static let maximumControlPayload = 125

    /// Whether this is the final fragment of its message (always true for control frames).
    var fin: Bool
    /// RSV1–RSV3 in their header positions (``reservedBitsMask``); zero unless an extension
    /// that defines them was negotiated.
    var reservedBits: UInt8
    /// What the payload is.
    var opcode: WebSocketOpcode
    /// The application data, unmasked.
    var payload: Data

    /// A frame; by default final, with no reserved bits.
    init(fin: Bool = true, reservedBits: UInt8 = 0, opcode: WebSocketOpcode, payload: Data = Data()) {
        self.fin = fin
        self.reservedBits = reservedBits
        self.opcode = opcode
        self.payload = payload
    }
}
