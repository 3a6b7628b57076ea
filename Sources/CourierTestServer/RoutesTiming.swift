import Foundation

/// Timing and body-consuming routes: `/delay`, `/drip`, `/sink`.
extension Router {
    /// The longest `/delay`.
    static let maxDelayMilliseconds = 10_000

    /// `/delay/{ms}`: waits (at most 10 s; cut short by `stop()`), then answers like `/get`.
    func delay(_ request: HTTPRequest, milliseconds text: String) throws(RouteError) -> RouteAction {
        let milliseconds = min(try integer(text, name: "delay", in: 0...Int.max), Self.maxDelayMilliseconds)
        guard core.stopSignal.sleep(milliseconds: milliseconds) else { return .closeImmediately }
        return .respond(.json(getJSON(request)))
    }

    /// `/drip?numbytes=N&duration_ms=D&delay_ms=W&code=C`: waits W ms, then sends N `*` bytes
    /// spread evenly over D ms (in at most 1000 writes), with status C and Content-Length N.
    func drip(_ request: HTTPRequest) throws(RouteError) -> HTTPResponse {
        let count = try intParameter(request, "numbytes", default: 10, in: 0...(1 << 30))
        let duration = try intParameter(request, "duration_ms", default: 1000, in: 0...60_000)
        let delay = try intParameter(request, "delay_ms", default: 0, in: 0...60_000)
        let code = try intParameter(request, "code", default: 200, in: 100...599)
        var response = HTTPResponse(
            status: code,
            headers: [("Content-Type", "application/octet-stream")],
            body: ResponseBody(count: count) { Data(repeating: UInt8(ascii: "*"), count: $0.count) }
        )
        response.delivery.initialDelayMilliseconds = delay
        if count > 0, duration > 0 {
            response.delivery.pacing = .spread(pieces: min(count, 1000), durationMilliseconds: duration)
        }
        return response
    }

    /// `/sink`, any method: the body has already been read and discarded; reports its length.
    func sink(_ request: HTTPRequest) -> HTTPResponse {
        .json(.object([("bodyLength", .int(Int64(request.bodyLength)))]))
    }
}
