import Foundation

/// Reads a request body with Content-Length or chunked framing, either keeping it or discarding it.
enum RequestBodyReader {
    /// The outcome of reading a body.
    enum Result {
        /// The body (empty when discarding) and how many bytes it had.
        case complete(Data, length: Int)
        /// The peer closed before the body was complete.
        case truncated
        /// The body is malformed or too large; answer with this status and close.
        case refused(RequestError)
    }

    /// The longest chunk-size or trailer line accepted.
    static let maxLineLength = 8 * 1024
    /// The most trailer bytes accepted.
    static let maxTrailerBytes = 64 * 1024

    /// Reads a body. When `keep` is false the bytes are counted and dropped (for `/sink`);
    /// otherwise at most `limit` bytes are kept and a larger body is refused with 413.
    static func read(_ framing: BodyFraming, from reader: inout SocketReader, keep: Bool, limit: Int) -> Result {
        var body = Data()
        var length = 0
        func take(_ bytes: UnsafeRawBufferPointer) {
            if keep { body.append(contentsOf: bytes) }
        }
        switch framing {
        case .none:
            return .complete(Data(), length: 0)
        case .contentLength(let count):
            if keep && count > limit { return .refused(RequestError(status: 413, reason: "body too large")) }
            // Reserve only a bounded amount up front: the length is the client's claim, not yet data.
            if keep { body.reserveCapacity(min(count, 16 << 20)) }
            guard reader.consume(count, take) else { return .truncated }
            return .complete(body, length: count)
        case .chunked:
            while true {
                let size: Int
                switch reader.readLine(limit: maxLineLength) {
                case .endOfStream: return .truncated
                case .tooLong: return .refused(RequestError(status: 400, reason: "chunk-size line too long"))
                case .line(let line):
                    guard let parsed = HTTPRequestParser.parseChunkSize(line) else {
                        return .refused(RequestError(status: 400, reason: "malformed chunk size"))
                    }
                    size = parsed
                }
                if size == 0 { break }
                let (total, overflow) = length.addingReportingOverflow(size)
                if overflow || (keep && total > limit) {
                    return .refused(RequestError(status: 413, reason: "body too large"))
                }
                guard reader.consume(size, take) else { return .truncated }
                length = total
                switch reader.readLine(limit: 2) {
                case .line(let rest) where rest.isEmpty: continue
                case .endOfStream: return .truncated
                default: return .refused(RequestError(status: 400, reason: "chunk data not followed by CRLF"))
                }
            }
            // Trailer fields are read and ignored, up to the empty line.
            var trailerBytes = 0
            while true {
                switch reader.readLine(limit: maxLineLength) {
                case .endOfStream: return .truncated
                case .tooLong: return .refused(RequestError(status: 400, reason: "trailer line too long"))
                case .line(let line):
                    if line.isEmpty { return .complete(body, length: length) }
                    trailerBytes += line.count + 2
                    if trailerBytes > maxTrailerBytes {
                        return .refused(RequestError(status: 431, reason: "trailers too large"))
                    }
                }
            }
        }
    }
}
