import Foundation

extension WebSocketFrame {
    /// The frame as bytes on the wire (§5.2): the length in its shortest form (7, 16 or 64
    /// bits, as §5.2 requires), and the payload masked with `maskingKey` when one is given — a
    /// client must give a fresh one for every frame (§5.3); a server gives none.
    ///
    /// Throws ``CourierError/Code-swift.struct/invalidRequest`` for a frame no peer may send: a
    /// control frame over 125 bytes or not final (§5.5), or reserved bits but RSV1 on a data
    /// frame when `compressed` (`permessage-deflate` negotiated, RFC 7692 §6).
    func encoded(maskingKey: WebSocketMaskingKey?, compressed: Bool = false) throws(CourierError) -> Data {
        if opcode.isControl {
            guard payload.count <= Self.maximumControlPayload else {
                throw CourierError(
                    code: .invalidRequest,
                    message: "a WebSocket \(opcode) carries at most 125 bytes; this one has \(payload.count)")
            }
            guard fin else {
                throw CourierError(code: .invalidRequest, message: "a WebSocket \(opcode) cannot be fragmented")
            }
        }
        let allowed: UInt8 = compressed && !opcode.isControl && opcode != .continuation ? 0x40 : 0
        guard reservedBits & ~allowed == 0 else {
            throw CourierError(
                code: .invalidRequest, message: "WebSocket reserved bits need a negotiated extension, and none is")
        }

        var bytes = Data()
        let count = payload.count
        let headerSize = Self.headerSize(payloadLength: count, masked: maskingKey != nil)
        bytes.reserveCapacity(headerSize + count)
        bytes.append((fin ? 0x80 : 0) | reservedBits | opcode.rawValue)
        let maskBit: UInt8 = maskingKey == nil ? 0 : 0x80
        switch count {
        case 0...125:
            bytes.append(maskBit | UInt8(count))
        case 126...0xFFFF:
            bytes.append(maskBit | 126)
            bytes.append(UInt8(truncatingIfNeeded: count >> 8))
            bytes.append(UInt8(truncatingIfNeeded: count))
        default:
            bytes.append(maskBit | 127)
            let length = UInt64(count)
            for shift in stride(from: 56, through: 0, by: -8) {
                bytes.append(UInt8(truncatingIfNeeded: length >> UInt64(shift)))
            }
        }
        if let maskingKey {
            bytes.append(maskingKey.byte(0))
            bytes.append(maskingKey.byte(1))
            bytes.append(maskingKey.byte(2))
            bytes.append(maskingKey.byte(3))
        }
        bytes.append(payload)
        if let maskingKey {
            bytes.withUnsafeMutableBytes { buffer in
                maskingKey.apply(to: UnsafeMutableRawBufferPointer(rebasing: buffer[headerSize...]), offset: 0)
            }
        }
        return bytes
    }

    /// The header's size for a payload of `payloadLength` bytes with the shortest length form.
    static func headerSize(payloadLength: Int, masked: Bool) -> Int {
        let lengthBytes = payloadLength <= 125 ? 0 : payloadLength <= 0xFFFF ? 2 : 8
        return 2 + lengthBytes + (masked ? 4 : 0)
    }
}
