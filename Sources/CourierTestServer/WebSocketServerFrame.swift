import Foundation

/// A WebSocket frame (RFC 6455 §5.2) as the test server sends or received it, with every field
/// free: a script may send what no good server would (reserved bits, reserved opcodes, a masked
/// frame, a control frame over 125 bytes, a wrong length form).
public struct WebSocketServerFrame: Sendable, Equatable {
    /// The opcode, 0–15 (1 text, 2 binary, 8 close, 9 ping, 10 pong, 0 continuation).
    public var opcode: UInt8
    /// The FIN bit.
    public var fin: Bool
    /// RSV1–RSV3 as the low three bits (RSV1 = 4).
    public var reservedBits: UInt8
    /// The payload, unmasked.
    public var payload: Data
    /// A masking key to send the frame with (servers must not mask: a fault case), or the one a
    /// received frame came with.
    public var maskingKey: [UInt8]?

    /// A frame; by default final, unmasked, with no reserved bits.
    public init(opcode: UInt8, payload: Data = Data(), fin: Bool = true, reservedBits: UInt8 = 0, maskingKey: [UInt8]? = nil) {
        self.opcode = opcode
        self.fin = fin
        self.reservedBits = reservedBits
        self.payload = payload
        self.maskingKey = maskingKey
    }

    /// A text frame.
    public static func text(_ text: String, fin: Bool = true) -> WebSocketServerFrame {
        WebSocketServerFrame(opcode: 1, payload: Data(text.utf8), fin: fin)
    }

    /// A binary frame.
    public static func binary(_ data: Data, fin: Bool = true) -> WebSocketServerFrame {
        WebSocketServerFrame(opcode: 2, payload: data, fin: fin)
    }

    /// A continuation frame.
    public static func continuation(_ data: Data, fin: Bool) -> WebSocketServerFrame {
        WebSocketServerFrame(opcode: 0, payload: data, fin: fin)
    }

    /// A ping.
    public static func ping(_ data: Data = Data()) -> WebSocketServerFrame { WebSocketServerFrame(opcode: 9, payload: data) }

    /// A Close frame with `code` and `reason`, or none.
    public static func close(_ code: UInt16?, reason: String = "") -> WebSocketServerFrame {
        guard let code else { return WebSocketServerFrame(opcode: 8) }
        return WebSocketServerFrame(opcode: 8, payload: Data([UInt8(code >> 8), UInt8(code & 0xFF)]) + Data(reason.utf8))
    }

    /// The close code of a Close frame's payload, if it has one.
    public var closeCode: UInt16? {
        guard opcode == 8, payload.count >= 2 else { return nil }
        let start = payload.startIndex
        return UInt16(payload[start]) << 8 | UInt16(payload[start + 1])
    }

    /// The frame's bytes, the length in its shortest form.
    public var encoded: Data {
        var bytes = Data([(fin ? 0x80 : 0) | (reservedBits & 7) << 4 | (opcode & 0x0F)])
        let mask: UInt8 = maskingKey == nil ? 0 : 0x80
        let count = payload.count
        if count <= 125 {
            bytes.append(mask | UInt8(count))
        } else if count <= 0xFFFF {
            bytes.append(mask | 126)
            bytes.append(contentsOf: [UInt8(count >> 8), UInt8(count & 0xFF)])
        } else {
            bytes.append(mask | 127)
            bytes.append(contentsOf: (0..<8).reversed().map { UInt8(truncatingIfNeeded: UInt64(count) >> UInt64($0 * 8)) })
        }
        guard let key = maskingKey, key.count == 4 else { return bytes + payload }
        bytes.append(contentsOf: key)
        bytes.append(contentsOf: payload.enumerated().map { $0.element ^ key[$0.offset % 4] })
        return bytes
    }
}
