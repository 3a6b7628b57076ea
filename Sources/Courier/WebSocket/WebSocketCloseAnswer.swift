import Foundation

/// What a received Close frame says and how to answer it (RFC 6455 §5.5.1, §7.4): a pure
/// decision from the frame's payload.
///
/// A valid code is echoed; an empty payload is answered with 1000. A payload that breaks the
/// rules — one byte, a code no peer may send (``WebSocketCloseCode/isValidOnTheWire``), a reason
/// that is not UTF-8 — is answered with 1002 or 1007 and is a ``violation``: the task then ends
/// with that error rather than with a clean close.
struct WebSocketCloseAnswer: Equatable, Sendable {
    /// The code the peer sent; `nil` when its Close frame had no payload (reported as 1005,
    /// ``WebSocketCloseCode/noStatusReceived``).
    var receivedCode: WebSocketCloseCode?
    /// The reason bytes the peer sent after the code (UTF-8 unless ``violation`` says otherwise).
    var receivedReason: Data
    /// The code of the Close frame to send back.
    var replyCode: WebSocketCloseCode
    /// How the peer's Close frame broke the protocol, or `nil` for a valid one.
    var violation: WebSocketProtocolError?

    /// The answer to a Close frame whose payload is `payload` (at most 125 bytes: the decoder
    /// refuses longer control frames).
    init(closePayload payload: Data) {
        guard !payload.isEmpty else {
            self.init(receivedCode: nil, receivedReason: Data(), replyCode: .normalClosure, violation: nil)
            return
        }
        guard payload.count >= 2 else {
            self.init(
                receivedCode: nil, receivedReason: Data(), replyCode: .protocolError,
                violation: WebSocketProtocolError(.protocolError, "a Close frame with a 1-byte payload"))
            return
        }
        let start = payload.startIndex
        let code = WebSocketCloseCode(rawValue: UInt16(payload[start]) << 8 | UInt16(payload[start + 1]))
        let reason = Data(payload[(start + 2)...])
        guard code.isValidOnTheWire else {
            self.init(
                receivedCode: code, receivedReason: reason, replyCode: .protocolError,
                violation: WebSocketProtocolError(.protocolError, "a Close frame with the invalid code \(code)"))
            return
        }
        guard reason.withUnsafeBytes(UTF8Validator.isValid) else {
            self.init(
                receivedCode: code, receivedReason: reason, replyCode: .invalidFramePayloadData,
                violation: WebSocketProtocolError(.invalidFramePayloadData, "a Close frame whose reason is not UTF-8"))
            return
        }
        self.init(receivedCode: code, receivedReason: reason, replyCode: code, violation: nil)
    }

    /// An answer from its parts.
    init(
        receivedCode: WebSocketCloseCode?, receivedReason: Data, replyCode: WebSocketCloseCode,
        violation: WebSocketProtocolError?
    ) {
        self.receivedCode = receivedCode
        self.receivedReason = receivedReason
        self.replyCode = replyCode
        self.violation = violation
    }
}
