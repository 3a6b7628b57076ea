/// Fault-injection query parameters understood by `/bytes`, `/files` and `/stream-bytes`.
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
    }

    /// Applies the delivery faults to a response that has a body. `allowLie` is false for
    /// chunked responses, which have no Content-Length to lie about.
    func apply(to response: inout HTTPResponse, allowLie: Bool = true) {
        response.delivery.closeAfter = closeAfter
        response.delivery.resetAfter = resetAfter
        if allowLie { response.delivery.declaredLength = lieLength }
        if writeSize != nil || writeDelayMilliseconds > 0 {
            response.delivery.pacing = .writes(size: writeSize ?? Self.defaultWriteSize, delayMilliseconds: writeDelayMilliseconds)
        }
    }
}
