import Foundation

/// Turns bytes from the connection into frames (RFC 6455 §5.2), fed in chunks of any size (one
/// byte at a time works), and refuses a frame as soon as its header breaks a rule, before its
/// payload is read.
///
/// It holds at most one frame: up to 14 header bytes and a payload no larger than
/// ``Configuration/maximumFrameSize``. Input is consumed as it is decoded, never queued, so a
/// chunk's size does not change what is held. The payload is written once, into contiguous
/// storage reserved from the header's length (which the limit bounds first), and unmasked in
/// place eight bytes at a time.
///
/// After a ``WebSocketProtocolError`` every later call throws the same error: the stream cannot
/// be resynchronised, so nothing after a bad frame is ever read as a frame.
struct WebSocketFrameDecoder: Sendable {
    /// The rules for the frames this decoder accepts.
    struct Configuration: Sendable, Equatable {
        /// The largest payload a frame may announce; a larger one is refused with 1009 at its header.
        var maximumFrameSize: Int
        /// Whether frames must be masked. False when a client reads a server (a server must not
        /// mask, §5.1); true when a server reads a client (a client must). Either way the other
        /// kind is refused with 1002.
        var expectsMaskedFrames: Bool = false
        /// The RSV bits a negotiated extension gives a meaning (``WebSocketFrame/reservedBitsMask``
        /// positions); any other one set is refused with 1002 (§5.2). None by default.
        var allowedReservedBits: UInt8 = 0

        /// The rules for a client reading a server, with `maximumFrameSize`.
        init(maximumFrameSize: Int, expectsMaskedFrames: Bool = false, allowedReservedBits: UInt8 = 0) {
            self.maximumFrameSize = maximumFrameSize
            self.expectsMaskedFrames = expectsMaskedFrames
            self.allowedReservedBits = allowedReservedBits
        }
    }

    /// The most bytes a header takes: 2, 8 for a 64-bit length, 4 for the masking key.
    private static let maximumHeaderSize = 14

    /// The rules in force.
    let configuration: Configuration
    /// The header bytes of the frame being read, until the header is complete.
    private var headerBytes = [UInt8](repeating: 0, count: WebSocketFrameDecoder.maximumHeaderSize)
    /// How many of `headerBytes` have arrived.
    private var headerCount = 0
    /// The frame being read, once its header is complete.
    private var header: WebSocketFrameHeader?
    /// The payload read so far, unmasked.
    private var payload = Data()
    /// The error that ended decoding, thrown again by every later call.
    private var failure: WebSocketProtocolError?

    /// A decoder with the given rules.
    init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// The frame being read when its header is complete but its payload is not: its header and
    /// the payload so far (unmasked). Lets a reader judge a message before its frames end, e.g.
    /// find bad UTF-8 at the byte it arrives in.
    var partialFrame: (header: WebSocketFrameHeader, payload: Data)? {
        header.map { ($0, payload) }
    }

    /// Reads from `input` until one frame is complete, and returns it with `input` moved past
    /// the bytes read; returns `nil` once `input` is used up in the middle of a frame (every byte
    /// consumed and kept). Call it again while it returns frames.
    mutating func decodeFrame(from input: inout UnsafeRawBufferPointer) throws(WebSocketProtocolError) -> WebSocketFrame? {
        if let failure { throw failure }
        do throws(WebSocketProtocolError) {
            return try step(&input)
        } catch {
            failure = error
            throw error
        }
    }

    /// Every frame `bytes` completes, in order (for tests and small inputs; the connection calls
    /// ``decodeFrame(from:)`` to stop at the first error without losing the frames before it).
    mutating func decode(_ bytes: some ContiguousBytes) throws(WebSocketProtocolError) -> [WebSocketFrame] {
        var frames: [WebSocketFrame] = []
        let result: Result<Void, WebSocketProtocolError> = bytes.withUnsafeBytes { buffer in
            var input = buffer
            do throws(WebSocketProtocolError) {
                while let frame = try decodeFrame(from: &input) { frames.append(frame) }
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
        return frames
    }

    private mutating func step(_ input: inout UnsafeRawBufferPointer) throws(WebSocketProtocolError) -> WebSocketFrame? {
        while header == nil {
            // Checked after every byte that changes it, so a bad header fails at the byte that
            // makes it bad, even when no more input follows.
            let needed = try headerSizeNeeded()
            if headerCount == needed {
                let complete = try parseHeader()
                header = complete
                payload = Data(capacity: complete.payloadLength)
                break
            }
            guard !input.isEmpty else { return nil }
            let taken = min(needed - headerCount, input.count)
            for index in 0..<taken { headerBytes[headerCount + index] = input[index] }
            headerCount += taken
            input = UnsafeRawBufferPointer(rebasing: input[taken...])
        }
        guard let current = header else { return nil }

        let start = payload.count
        let taken = min(current.payloadLength - start, input.count)
        if taken > 0, let base = input.baseAddress {
            payload.append(base.assumingMemoryBound(to: UInt8.self), count: taken)
            input = UnsafeRawBufferPointer(rebasing: input[taken...])
            if let key = current.maskingKey {
                payload.withUnsafeMutableBytes { buffer in
                    key.apply(to: UnsafeMutableRawBufferPointer(rebasing: buffer[start..<(start + taken)]), offset: start)
                }
            }
        }
        guard payload.count == current.payloadLength else { return nil }

        let frame = WebSocketFrame(fin: current.fin, reservedBits: current.reservedBits, opcode: current.opcode, payload: payload)
        header = nil
        headerCount = 0
        payload = Data()
        return frame
    }

    /// How many header bytes this frame has: 2 until those two are in (checking them as soon as
    /// they are, so a bad frame is refused at its second byte), then the full size.
    private func headerSizeNeeded() throws(WebSocketProtocolError) -> Int {
        guard headerCount >= 2 else { return 2 }
        try checkFirstBytes()
        let length7 = headerBytes[1] & 0x7F
        let lengthBytes = length7 == 126 ? 2 : length7 == 127 ? 8 : 0
        let maskBytes = headerBytes[1] & 0x80 != 0 ? 4 : 0
        return 2 + lengthBytes + maskBytes
    }

    /// The rules the first two bytes alone decide (§5.2, §5.5, §5.1); returns the opcode.
    @discardableResult
    private func checkFirstBytes() throws(WebSocketProtocolError) -> WebSocketOpcode {
        let first = headerBytes[0]
        let second = headerBytes[1]
        let reserved = first & WebSocketFrame.reservedBitsMask
        if reserved & ~configuration.allowedReservedBits != 0 {
            throw WebSocketProtocolError(
                .protocolError, "reserved bits \(Self.describe(reservedBits: reserved)) set with no extension negotiated")
        }
        guard let opcode = WebSocketOpcode(rawValue: first & 0x0F) else {
            throw WebSocketProtocolError(.protocolError, "reserved opcode 0x\(String(first & 0x0F, radix: 16))")
        }
        if opcode.isControl {
            guard first & 0x80 != 0 else {
                throw WebSocketProtocolError(.protocolError, "a fragmented \(opcode) frame (control frames cannot be fragmented)")
            }
            guard second & 0x7F <= 125 else {
                throw WebSocketProtocolError(.protocolError, "a \(opcode) frame over 125 bytes")
            }
        }
        let masked = second & 0x80 != 0
        if masked != configuration.expectsMaskedFrames {
            throw WebSocketProtocolError(
                .protocolError, masked ? "a masked frame from the server" : "an unmasked frame from the client")
        }
        return opcode
    }

    /// The complete header, checked: the first bytes' rules, then the length's.
    private func parseHeader() throws(WebSocketProtocolError) -> WebSocketFrameHeader {
        let opcode = try checkFirstBytes()
        let first = headerBytes[0]
        let second = headerBytes[1]
        let length7 = Int(second & 0x7F)
        var offset = 2
        var length: UInt64
        switch length7 {
        case 126:
            length = UInt64(headerBytes[2]) << 8 | UInt64(headerBytes[3])
            offset = 4
        case 127:
            length = 0
            for index in 2..<10 { length = length << 8 | UInt64(headerBytes[index]) }
            offset = 10
            // §5.2: "the most significant bit MUST be 0".
            guard length >> 63 == 0 else {
                throw WebSocketProtocolError(.protocolError, "a 64-bit payload length with its most significant bit set")
            }
        default:
            length = UInt64(length7)
        }
        // A length in a longer form than it needs is accepted: §5.2's "minimal number of bytes"
        // binds the sender, and refusing it would gain nothing.
        guard length <= UInt64(max(configuration.maximumFrameSize, 0)) else {
            throw WebSocketProtocolError(
                .messageTooBig, "a frame of \(length) bytes, over the limit of \(configuration.maximumFrameSize)")
        }
        var key: WebSocketMaskingKey?
        if second & 0x80 != 0 {
            key = WebSocketMaskingKey(headerBytes[offset], headerBytes[offset + 1], headerBytes[offset + 2], headerBytes[offset + 3])
        }
        return WebSocketFrameHeader(
            fin: first & 0x80 != 0, reservedBits: first & WebSocketFrame.reservedBitsMask,
            opcode: opcode,
            maskingKey: key, payloadLength: Int(length))
    }

    /// `RSV1+RSV3` for the bits set in `reservedBits`.
    private static func describe(reservedBits: UInt8) -> String {
        [(0x40, "RSV1"), (0x20, "RSV2"), (0x10, "RSV3")].filter { reservedBits & $0.0 != 0 }.map(\.1).joined(separator: "+")
    }
}
