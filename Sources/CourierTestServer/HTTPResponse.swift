import Foundation

/// A response body that is produced piecewise on demand, so multi-gigabyte generated bodies
/// (`/bytes`, `/gzip-bomb`) never sit in memory.
struct ResponseBody {
    /// Total size in bytes.
    let count: Int
    private let reader: (Range<Int>) -> Data

    /// A body of `count` bytes whose pieces come from `reader` (called with sub-ranges of `0..<count`).
    init(count: Int, reader: @escaping (Range<Int>) -> Data) {
        self.count = count
        self.reader = reader
    }

    /// A body holding `data`.
    init(_ data: Data) {
        self.count = data.count
        self.reader = { range in data.subdata(in: (data.startIndex + range.lowerBound)..<(data.startIndex + range.upperBound)) }
    }

    /// No body.
    static var empty: ResponseBody { ResponseBody(Data()) }

    /// The bytes at `range`.
    func bytes(in range: Range<Int>) -> Data { reader(range) }

    /// The sub-body at `range` (for 206 responses).
    func slice(_ range: Range<Int>) -> ResponseBody {
        let reader = self.reader
        return ResponseBody(count: range.count) { inner in
            reader((range.lowerBound + inner.lowerBound)..<(range.lowerBound + inner.upperBound))
        }
    }

    /// The whole body as one `Data` (only for small bodies).
    var allBytes: Data { count == 0 ? Data() : reader(0..<count) }
}

/// A body of unknown length, produced by a loop that pushes pieces as it goes (`/sse`,
/// `/ndjson`). A loop is simpler than a random-access ``ResponseBody`` here: record lengths
/// vary, and batching, pauses and a mid-record drop are decided as the records are generated.
struct ResponseStream {
    /// How the producer ended.
    enum Ending {
        /// Every piece was sent: finish the body normally (the chunked terminator).
        case complete
        /// Hang up without the terminator, so the client sees a dropped connection.
        case dropped
        /// The output failed (peer gone, or the server is stopping).
        case aborted
    }

    private let producer: (StreamOutput) -> Ending

    /// A stream whose pieces `producer` writes to the output it is given.
    init(_ producer: @escaping (StreamOutput) -> Ending) {
        self.producer = producer
    }

    /// Runs the producer against `output`.
    func run(_ output: StreamOutput) -> Ending { producer(output) }
}

/// How the body is framed on the wire.
enum ResponseFraming {
    case contentLength
    /// `Transfer-Encoding: chunked` with chunks of at most `chunkSize` bytes.
    case chunked(chunkSize: Int)
}

/// Timing of body writes.
enum Pacing {
    /// Write as fast as the socket accepts.
    case none
    /// Write `size`-byte pieces, pausing `delayMilliseconds` between them.
    case writes(size: Int, delayMilliseconds: Int)
    /// Split the body into `pieces` near-equal pieces; piece `k` starts at `k·duration/pieces` ms.
    case spread(pieces: Int, durationMilliseconds: Int)
    /// `writeSize`-byte writes at `bytesPerSecond` over the whole response (`RatePacer`); the
    /// response's ``ResponseFlow`` may divide the rate part-way.
    case rate(bytesPerSecond: Int, writeSize: Int)
}

/// Delivery options, mostly fault injection.
struct ResponseDelivery {
    /// Wait this long before sending anything (for `/drip`'s `delay_ms`).
    var initialDelayMilliseconds = 0
    var pacing = Pacing.none
    /// Send this many body bytes, then close with a FIN.
    var closeAfter: Int?
    /// Send this many body bytes, then abort with an RST.
    var resetAfter: Int?
    /// Declare this Content-Length instead of the real one, send the real body, then close.
    var declaredLength: Int?
    /// Send nothing: abort the connection with an RST instead of answering.
    var resetBeforeHead = false
    /// Close the connection after this response (sends `Connection: close`).
    var closeConnection = false
    /// Where the writer reports body bytes and the end, when the route tracks the path's traffic.
    var flow: ResponseFlow?

    /// Whether a fault that ends the connection abnormally is configured.
    var isFaulty: Bool { closeAfter != nil || resetAfter != nil || declaredLength != nil || resetBeforeHead }
}

/// A response produced by a route, written by ``HTTPResponseWriter``.
struct HTTPResponse {
    var status: Int
    /// Headers besides the ones the writer adds (`Content-Length`/`Transfer-Encoding`, `Date`,
    /// `Server`, `Connection`).
    var headers: [(name: String, value: String)]
    var body: ResponseBody
    /// When set, the body comes from this stream instead of `body`, always sent chunked.
    var stream: ResponseStream?
    var framing = ResponseFraming.contentLength
    var delivery = ResponseDelivery()

    init(status: Int, headers: [(name: String, value: String)] = [], body: ResponseBody = .empty) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON response.
    static func json(_ value: JSONValue, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json")], body: ResponseBody(value.data))
    }

    /// A `text/plain` response; a newline is appended.
    static func text(_ text: String, status: Int) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")], body: ResponseBody(Data((text + "\n").utf8)))
    }

    /// Sets a header, replacing any existing ones with the same name (case-insensitive).
    mutating func setHeader(_ name: String, _ value: String) {
        headers.removeAll { $0.name.caseInsensitiveCompare(name) == .orderedSame }
        headers.append((name, value))
    }
}
