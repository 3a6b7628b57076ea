internal import CCourierPlatformFixes
import Foundation

/// One raw DEFLATE stream of the system's zlib (`Deflate.c`), as permessage-deflate uses it
/// (RFC 7692 §7.2): a message compressed with a sync flush and its last four bytes
/// (`00 00 FF FF`) removed; decompressed with them put back.
///
/// `@unchecked Sendable`: zlib's stream is not thread-safe, so every use is under `lock`, and a
/// decompressor belongs to one connection's reader, which runs under that connection's lock too.
final class WebSocketDeflateStream: @unchecked Sendable {
    /// The four bytes a sync flush ends with, which the sender removes (§7.2.1).
    private static let tail: [UInt8] = [0x00, 0x00, 0xFF, 0xFF]
    private let stream: OpaquePointer
    private let lock = NSLock()

    /// Whether zlib could be loaded.
    static var isAvailable: Bool { courier_zlib_available() != 0 }

    /// A compressor (`inflating` false) or decompressor with a window of 2^`windowBits` bytes
    /// (8–15); `nil` without zlib. A compressor asked for 8 gets zlib's 9, whose matches still
    /// reach back at most 250 bytes (its window less its lookahead), within what an 8-bit window
    /// decodes: zlib refuses 8 for raw DEFLATE.
    init?(inflating: Bool, windowBits: Int = 15) {
        let bits = inflating ? windowBits : max(9, windowBits)
        guard let stream = courier_zstream_new(inflating ? 1 : 0, Int32(bits)) else { return nil }
        self.stream = stream
    }

    deinit { courier_zstream_free(stream) }

    /// `message` compressed on its own (the history reset first: no context takeover), the tail
    /// removed.
    func compress(_ message: Data) -> Data {
        lock.withLock {
            _ = courier_zstream_reset(stream)
            var output = run(message, limit: Int.max).data
            if output.count >= 4, Array(output.suffix(4)) == Self.tail { output.removeLast(4) }
            if output.isEmpty { output = Data([0x00]) }  // an empty stored block ends nothing: 7.2.3.6's one byte
            return output
        }
    }

    /// The message `payload` decompresses to, at most `limit` bytes; `reset` afterwards when the
    /// server keeps no context. Fails with 1007 for data that is not DEFLATE, 1009 past the limit.
    func decompress(_ payload: Data, limit: Int, reset: Bool) -> Result<Data, WebSocketProtocolError> {
        lock.withLock {
            var input = payload
            input.append(contentsOf: Self.tail)
            let result = run(input, limit: limit)
            if reset { _ = courier_zstream_reset(stream) }
            if result.invalid {
                return .failure(WebSocketProtocolError(.invalidFramePayloadData, "a compressed message that is not valid DEFLATE data"))
            }
            if result.overLimit {
                return .failure(
                    WebSocketProtocolError(.messageTooBig, "a compressed message of more than \(limit) bytes once decompressed"))
            }
            return .success(result.data)
        }
    }

    /// Feeds all of `input`; stops early past `limit` bytes of output or at invalid data.
    private func run(_ input: Data, limit: Int) -> (data: Data, invalid: Bool, overLimit: Bool) {
        var output = Data()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var offset = 0
        return input.withUnsafeBytes { buffer -> (Data, Bool, Bool) in
            while true {
                var consumed = 0
                var produced = 0
                let status = chunk.withUnsafeMutableBytes { out in
                    courier_zstream_step(
                        stream, buffer.baseAddress.map { $0 + offset }, buffer.count - offset, out.baseAddress, out.count, &consumed,
                        &produced)
                }
                if status == COURIER_ZSTREAM_ERROR { return (output, true, false) }
                offset += consumed
                output.append(contentsOf: chunk[0..<produced])
                if output.count > limit { return (output, false, true) }
                // Done when the input is taken and zlib did not fill the chunk (nothing held back).
                if offset >= buffer.count, produced < chunk.count { return (output, false, false) }
                if consumed == 0, produced == 0 { return (output, status != COURIER_ZSTREAM_END && offset < buffer.count, false) }
            }
        }
    }
}
