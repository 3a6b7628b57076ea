import Foundation

/// Turns frames into messages (RFC 6455 §5.4): joins a message's fragments, lets control frames
/// pass between them, checks text as UTF-8 while it arrives and holds a message to a size limit.
///
/// Every rule is checked at the earliest frame (or byte) that breaks it: a frame's order and size
/// at its header (``inspect(header:payloadSoFar:)``, before its payload is kept), bad UTF-8 at
/// the fragment — or the part of a fragment — it arrives in. After it throws, the connection is
/// to be failed; the assembler is not used again.
struct WebSocketMessageAssembler: Sendable {
    /// What a frame completes.
    enum Output: Equatable, Sendable {
        /// A whole text message, checked as UTF-8.
        case text(String)
        /// A whole binary message.
        case binary(Data)
        /// A ping, to be answered with a pong carrying `payload`.
        case ping(Data)
        /// A pong.
        case pong(Data)
        /// The peer's Close frame and how to answer it.
        case close(WebSocketCloseAnswer)
    }

    /// A message whose fragments are still arriving.
    private struct Message: Sendable {
        /// `.text` or `.binary`, from its first frame.
        var opcode: WebSocketOpcode
        /// Whether its first frame had RSV1 set: compressed (RFC 7692 §6), inflated at its end.
        var compressed = false
        /// The payload of the fragments that are complete.
        var data = Data()
    }

    /// The negotiated `permessage-deflate`: the server's decompressor, and whether it is reset
    /// after each message (`server_no_context_takeover`).
    struct Decompression: Sendable {
        /// The server's DEFLATE stream, read in message order (under the connection's lock).
        let stream: WebSocketDeflateStream
        /// Whether the server keeps no context between messages.
        let resetsAfterEachMessage: Bool
    }

    /// RSV1, which `permessage-deflate` gives its meaning.
    static let compressedBit: UInt8 = 0x40

    /// The largest message, in payload bytes over all its fragments; a larger one fails with 1009.
    let maximumMessageSize: Int
    /// The message in progress, from its first data frame until the frame with FIN.
    private var message: Message?
    /// The UTF-8 state of the text message in progress.
    private var validator = UTF8Validator()
    /// The header of the frame being read, once it has been checked.
    private var frameHeader: WebSocketFrameHeader?
    /// How many payload bytes of that frame have been checked as UTF-8 already.
    private var frameChecked = 0
    /// `permessage-deflate`, once negotiated (before any frame is read).
    var decompression: Decompression?

    /// An assembler for messages of at most `maximumMessageSize` bytes.
    init(maximumMessageSize: Int) {
        self.maximumMessageSize = maximumMessageSize
    }

    /// Checks a frame whose payload is still arriving: its place in the message and its size
    /// at once, and the payload so far as UTF-8 when it continues a text message. Call it again
    /// as more payload arrives; each byte is checked once.
    mutating func inspect(header: WebSocketFrameHeader, payloadSoFar: Data) throws(WebSocketProtocolError) {
        if frameHeader == nil { try begin(header) }
        try checkText(payloadSoFar)
    }

    /// Takes a complete frame; returns the message or control frame it completes, or `nil` when
    /// it is a fragment of a message that goes on.
    mutating func receive(_ frame: WebSocketFrame) throws(WebSocketProtocolError) -> Output? {
        if frameHeader == nil {
            try begin(
                WebSocketFrameHeader(
                    fin: frame.fin, reservedBits: frame.reservedBits, opcode: frame.opcode, maskingKey: nil,
                    payloadLength: frame.payload.count))
        }
        try checkText(frame.payload)
        frameHeader = nil
        frameChecked = 0

        switch frame.opcode {
        case .ping: return .ping(frame.payload)
        case .pong: return .pong(frame.payload)
        case .close: return .close(WebSocketCloseAnswer(closePayload: frame.payload))
        case .text, .binary, .continuation:
            guard var current = message else { return nil }  // begin() made one for every data frame.
            // The first fragment's storage becomes the message's: an unfragmented message is
            // never copied.
            if current.data.isEmpty { current.data = frame.payload } else { current.data.append(frame.payload) }
            guard frame.fin else {
                message = current
                return nil
            }
            message = nil
            if current.compressed { return try inflated(current) }
            guard current.opcode == .text else { return .binary(current.data) }
            guard validator.isComplete else {
                throw WebSocketProtocolError(
                    .invalidFramePayloadData, "a text message that ends inside a UTF-8 sequence")
            }
            // Checked above: decoding repairs nothing.
            return .text(String(decoding: current.data, as: UTF8.self))
        }
    }

    /// A compressed message's payload inflated (within the size limit) and, for text, checked as
    /// UTF-8 whole: its bytes only exist once the message has ended.
    private func inflated(_ current: Message) throws(WebSocketProtocolError) -> Output {
        guard let decompression else {
            throw WebSocketProtocolError(.protocolError, "a compressed message with no compression negotiated")
        }
        let data: Data
        switch decompression.stream.decompress(
            current.data, limit: maximumMessageSize, reset: decompression.resetsAfterEachMessage)
        {
        case .success(let inflated): data = inflated
        case .failure(let error): throw error
        }
        guard current.opcode == .text else { return .binary(data) }
        var checker = UTF8Validator()
        let bad = data.withUnsafeBytes { checker.validate($0) }
        if let bad {
            throw WebSocketProtocolError(.invalidFramePayloadData, "a text message that is not UTF-8 at byte \(bad)")
        }
        guard checker.isComplete else {
            throw WebSocketProtocolError(.invalidFramePayloadData, "a text message that ends inside a UTF-8 sequence")
        }
        return .text(String(decoding: data, as: UTF8.self))
    }

    /// The rules a frame's header decides against the message in progress (§5.4).
    private mutating func begin(_ header: WebSocketFrameHeader) throws(WebSocketProtocolError) {
        let compressed = header.reservedBits & Self.compressedBit != 0
        switch header.opcode {
        case .ping, .pong, .close:
            // Control frames may come between fragments and leave the message alone; they are
            // never compressed (RFC 7692 §6.1).
            if compressed { throw WebSocketProtocolError(.protocolError, "a \(header.opcode) frame with RSV1 set") }
        case .text, .binary:
            if message != nil {
                throw WebSocketProtocolError(
                    .protocolError, "a new \(header.opcode) message began before the fragmented message ended")
            }
            try checkSize(header.payloadLength, after: 0)
            message = Message(opcode: header.opcode, compressed: compressed)
            validator = UTF8Validator()
        case .continuation:
            // RSV1 belongs on a message's first frame only (RFC 7692 §6.1).
            if compressed { throw WebSocketProtocolError(.protocolError, "a continuation frame with RSV1 set") }
            guard let current = message else {
                throw WebSocketProtocolError(.protocolError, "a continuation frame with no message to continue")
            }
            try checkSize(header.payloadLength, after: current.data.count)
        }
        frameHeader = header
        frameChecked = 0
    }

    /// Refuses a frame that would take the message past the limit, before it is kept.
    private func checkSize(_ length: Int, after held: Int) throws(WebSocketProtocolError) {
        guard length <= maximumMessageSize - held else {
            throw WebSocketProtocolError(
                .messageTooBig, "a message of more than \(maximumMessageSize) bytes (\(held) held, a frame of \(length) more)")
        }
    }

    /// Checks the bytes of `payload` past those already checked, when the frame carries text.
    private mutating func checkText(_ payload: Data) throws(WebSocketProtocolError) {
        // A compressed message's bytes are DEFLATE's until it ends (checked in inflated(_:)).
        guard let header = frameHeader, !header.opcode.isControl, message?.opcode == .text, message?.compressed == false
        else { return }
        guard payload.count > frameChecked else { return }
        let start = frameChecked
        let bad = payload.withUnsafeBytes { buffer in
            validator.validate(UnsafeRawBufferPointer(rebasing: buffer[start...]))
        }
        if let bad {
            let offset = (message?.data.count ?? 0) + start + bad
            throw WebSocketProtocolError(.invalidFramePayloadData, "a text message that is not UTF-8 at byte \(offset)")
        }
        frameChecked = payload.count
    }
}
