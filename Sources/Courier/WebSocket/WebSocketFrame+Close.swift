import Foundation

extension WebSocketFrame {
    /// The most bytes a close reason may have: 125 less the 2-byte code.
    static let maximumCloseReason = 123

    /// A Close frame with `code` and `reason` (§5.5.1); no payload when `code` is `nil`. A reason
    /// longer than 123 bytes is cut at the last whole character that fits, so the frame is
    /// always one a peer accepts.
    static func close(_ code: WebSocketCloseCode?, reason: String = "") -> WebSocketFrame {
        guard let code else { return WebSocketFrame(opcode: .close) }
        var payload = Data([UInt8(truncatingIfNeeded: code.rawValue >> 8), UInt8(truncatingIfNeeded: code.rawValue)])
        let bytes = Array(reason.utf8)
        var end = min(bytes.count, maximumCloseReason)
        // Back off to the start of the character the cut falls in (continuations are 10xxxxxx).
        while end < bytes.count, end > 0, bytes[end] & 0xC0 == 0x80 { end -= 1 }
        payload.append(contentsOf: bytes[..<end])
        return WebSocketFrame(opcode: .close, payload: payload)
    }
}
