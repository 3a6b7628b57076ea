import Foundation

/// The receiving side of a WebSocket connection as one pure value: bytes from the socket in,
/// messages and control frames out (a ``WebSocketFrameDecoder`` feeding a
/// ``WebSocketMessageAssembler``).
///
/// Besides passing frames along, it shows the assembler each frame whose payload is still
/// arriving, so a message that breaks a rule fails at the chunk that breaks it (bad UTF-8 in the
/// middle of a long frame, a frame that would take a message over the limit) without waiting
/// for — or buffering — the rest.
struct WebSocketReader: Sendable {
    /// What one chunk of input produced.
    struct Result: Equatable, Sendable {
        /// The messages and control frames completed, in order; the ones before a failure too.
        var outputs: [WebSocketMessageAssembler.Output] = []
        /// The rule the peer broke, when it did: the connection is to be closed with its code.
        var failure: WebSocketProtocolError?
    }

    private var decoder: WebSocketFrameDecoder
    private var assembler: WebSocketMessageAssembler
    /// The error that ended reading, returned again for every later chunk.
    private var failure: WebSocketProtocolError?
    /// Whether the peer's Close frame arrived: nothing after it is read (§5.5.1).
    private(set) var receivedClose = false

    /// A reader of a server's frames: unmasked, no extension, with the two limits.
    init(maximumFrameSize: Int, maximumMessageSize: Int) {
        self.init(
            decoder: WebSocketFrameDecoder.Configuration(maximumFrameSize: maximumFrameSize),
            maximumMessageSize: maximumMessageSize)
    }

    /// A reader with the decoder's rules given in full.
    init(decoder configuration: WebSocketFrameDecoder.Configuration, maximumMessageSize: Int) {
        decoder = WebSocketFrameDecoder(configuration: configuration)
        assembler = WebSocketMessageAssembler(maximumMessageSize: maximumMessageSize)
    }

    /// Reads compressed messages from now on (`permessage-deflate` negotiated, before any frame):
    /// RSV1 is allowed on a message's first frame, and such a message is inflated with `stream`.
    mutating func acceptCompression(_ stream: WebSocketDeflateStream, resetsAfterEachMessage: Bool) {
        var configuration = decoder.configuration
        configuration.allowedReservedBits = WebSocketMessageAssembler.compressedBit
        decoder = WebSocketFrameDecoder(configuration: configuration)
        assembler.decompression = .init(stream: stream, resetsAfterEachMessage: resetsAfterEachMessage)
    }

    /// Whether a data frame's header has been read and its payload has not all arrived: the next
    /// bytes from the connection are data.
    var isInsideDataFrame: Bool {
        guard let partial = decoder.partialFrame else { return false }
        return !partial.header.opcode.isControl
    }

    /// Reads one chunk from the connection, of any size. A ``WebSocketMessageAssembler/Output/close(_:)``
    /// is the last output ever: its answer says what to send back, and its
    /// ``WebSocketCloseAnswer/violation`` whether the peer's close was itself a failure.
    mutating func read(_ bytes: UnsafeRawBufferPointer) -> Result {
        if let failure { return Result(failure: failure) }
        var result = Result()
        guard !receivedClose else { return result }
        var input = bytes
        do throws(WebSocketProtocolError) {
            while let frame = try decoder.decodeFrame(from: &input) {
                guard let output = try assembler.receive(frame) else { continue }
                result.outputs.append(output)
                if case .close = output {
                    receivedClose = true
                    return result
                }
            }
            if let partial = decoder.partialFrame {
                try assembler.inspect(header: partial.header, payloadSoFar: partial.payload)
            }
        } catch {
            failure = error
            result.failure = error
        }
        return result
    }

    /// Reads one chunk held in `bytes`.
    mutating func read(_ bytes: some ContiguousBytes) -> Result {
        bytes.withUnsafeBytes { read($0) }
    }
}
