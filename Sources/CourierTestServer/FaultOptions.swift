/// Fault-injection and pacing query parameters understood by `/bytes`, `/files` and `/stream-bytes`.
struct FaultOptions {
    /// `close_after=K`: send K body bytes, then close (FIN).
    var closeAfter: Int?
    /// `reset_after=K`: send K body bytes, then abort (RST).
    var resetAfter: Int?
    /// `lie_length=L`: declare Content-Length L, send the real body, then close.
    var lieLength: Int?
    /// `ignore_range=1`: serve 200 with the full body whatever Range/If-Range say.
    var ignoreRange = false
    /// `no_validators=1`: send neither ETag nor Last-Modified.
    var noValidators = false
    /// `weak_etag=1`: send the ETag as `W/"…"` (If-Range then never matches it).
    var weakETag = false
    /// `range_shift=K`: answer a satisfiable Range with a 206 that starts K bytes earlier than
    /// asked (its Content-Range says so): a server that does not honour the offset.
    var rangeShift = 0
    /// `chunk=C`: write the body in C-byte writes.
    var writeSize: Int?
    /// `chunk_delay_ms=D`: pause D ms between writes.
    var writeDelayMilliseconds = 0
    /// `rate=R`: pace this response's body at R bytes per second (`RatePacer`), so N
    /// connections get N·R together: a server that caps each connection.
    var rate: Int?
    /// `slow_at=B&slow_factor=F` (F defaults to 20): once the path's body bytes, all responses
    /// together, pass B, the response in flight that started first runs at R/F.
    var slowDown: ResponseFlow.SlowDown?
    /// `max_conns=N`: a response that would make more than N of this path's in flight is a 429.
    var maxConnections: Int?
    /// `refuse=429|503|reset|302` (with `max_conns`): how a response above the limit is refused —
    /// a 429 or a 503 with `Retry-After: 1`, a connection reset before any answer, or a redirect.
    var refusal = Refusal.tooManyRequests

    /// How `max_conns` refuses a response above its limit.
    enum Refusal: String {
        case tooManyRequests = "429"
        case unavailable = "503"
        case reset
        case redirect = "302"
    }

    /// The default write size when only `chunk_delay_ms` is given.
    static let defaultWriteSize = 1024

    /// Reads the parameters; 400 for invalid values.
    init(_ request: HTTPRequest, router: Router) throws(RouteError) {
        let anyCount = 0...Int.max
        closeAfter = try router.optionalIntParameter(request, "close_after", in: anyCount)
        resetAfter = try router.optionalIntParameter(request, "reset_after", in: anyCount)
        lieLength = try router.optionalIntParameter(request, "lie_length", in: anyCount)
        ignoreRange = try router.flagParameter(request, "ignore_range")
        noValidators = try router.flagParameter(request, "no_validators")
        weakETag = try router.flagParameter(request, "weak_etag")
        rangeShift = try router.intParameter(request, "range_shift", default: 0, in: anyCount)
        writeSize = try router.optionalIntParameter(request, "chunk", in: 1...(16 << 20))
        writeDelayMilliseconds = try router.intParameter(request, "chunk_delay_ms", default: 0, in: 0...60_000)
        rate = try router.optionalIntParameter(request, "rate", in: 1...(1 << 40))
        let slowAt = try router.optionalIntParameter(request, "slow_at", in: anyCount)
        let slowFactor = try router.optionalIntParameter(request, "slow_factor", in: 1...1_000_000)
        maxConnections = try router.optionalIntParameter(request, "max_conns", in: 1...100_000)
        if let value = request.query("refuse") {
            guard let refusal = Refusal(rawValue: value) else { throw RouteError("refuse must be 429, 503, reset or 302") }
            guard maxConnections != nil else { throw RouteError("refuse needs max_conns") }
            self.refusal = refusal
        }
        if rate != nil, writeDelayMilliseconds > 0 {
            throw RouteError("rate and chunk_delay_ms both pace the body: give one")
        }
        if let slowAt {
            guard rate != nil else { throw RouteError("slow_at divides the rate: it needs rate") }
            slowDown = ResponseFlow.SlowDown(after: slowAt, factor: slowFactor ?? 20)
        } else if slowFactor != nil {
            throw RouteError("slow_factor needs slow_at")
        }
    }

    /// Applies the delivery faults to a response that has a body. `allowLie` is false for
    /// chunked responses, which have no Content-Length to lie about.
    func apply(to response: inout HTTPResponse, allowLie: Bool = true) {
        response.delivery.closeAfter = closeAfter
        response.delivery.resetAfter = resetAfter
        if allowLie { response.delivery.declaredLength = lieLength }
        if let rate {
            response.delivery.pacing = .rate(bytesPerSecond: rate, writeSize: writeSize ?? RatePacer.writeSize(bytesPerSecond: rate))
        } else if writeSize != nil || writeDelayMilliseconds > 0 {
            response.delivery.pacing = .writes(size: writeSize ?? Self.defaultWriteSize, delayMilliseconds: writeDelayMilliseconds)
        }
    }
}
