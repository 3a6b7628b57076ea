import Foundation

/// The peer broke RFC 6455 (or a limit of ours): the close code to send before dropping the
/// connection, and a sentence for people. The pure framing types throw it; the task turns it
/// into a ``CourierError`` with ``courierError(url:)``.
struct WebSocketProtocolError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The code of the Close frame to send: 1002 (protocol), 1007 (not UTF-8) or 1009 (too big).
    let closeCode: WebSocketCloseCode
    /// What was wrong, for the error's message (also usable as the close reason: it is ASCII
    /// and kept under the 123 bytes a close reason may have).
    let message: String

    /// An error with its close code.
    init(_ closeCode: WebSocketCloseCode, _ message: String) {
        self.closeCode = closeCode
        self.message = message
    }

    /// The error the task reports: ``CourierError/Code-swift.struct/responseTooLarge`` for a frame
    /// or message over the limit (1009), as for a body over `maximumResponseSize`; otherwise
    /// ``CourierError/Code-swift.struct/invalidResponse``, the code for a server that contradicts
    /// the protocol.
    func courierError(url: URL?) -> CourierError {
        let code: CourierError.Code = closeCode == .messageTooBig ? .responseTooLarge : .invalidResponse
        return CourierError(code: code, message: "WebSocket closed with \(closeCode): \(message)", url: url)
    }

    /// `"<code>: <message>"`.
    var description: String { "\(closeCode): \(message)" }
}
