import CourierSupport
/// The thread-safe record of what the server received and served: every request in arrival
/// order, and per path the traffic of the ranged routes (``PathTraffic``).
final class RequestLog: Sendable {
    private struct State: Sendable {
        var requests: [RecordedRequest] = []
        var paths: [String: PathTrafficState] = [:]
        var lastResponseID = 0
        /// Responses of every ranged path in flight now, and the most at once.
        var inFlight = 0
        var peakInFlight = 0
    }

    private let state = Locked(State())

    /// Appends one request.
    func append(_ request: RecordedRequest) {
        state.withLock { $0.requests.append(request) }
    }

    /// A snapshot of every request so far, in arrival order.
    var snapshot: [RecordedRequest] { state.withLock { $0.requests } }

    /// Forgets every recorded request and starts every path's traffic count afresh.
    func clear() {
        state.withLock { state in
            state.requests.removeAll()
            for path in state.paths.keys { state.paths[path]?.reset() }
            state.peakInFlight = state.inFlight
        }
    }

    /// Admits a response of `path` unless `limit` are in flight: its flow, or `nil` for a 429.
    func admit(path: String, connectionID: Int, limit: Int?, slowDown: ResponseFlow.SlowDown?) -> ResponseFlow? {
        let now = ContinuousClock.now
        let id: Int? = state.withLock { state in
            state.lastResponseID += 1
            let id = state.lastResponseID
            let admitted = state.paths[path, default: PathTrafficState()].admit(
                id: id, connectionID: connectionID, limit: limit, at: now)
            guard admitted else { return nil }
            state.inFlight += 1
            state.peakInFlight = max(state.peakInFlight, state.inFlight)
            return id
        }
        return id.map { ResponseFlow(log: self, path: path, id: $0, slowDown: slowDown) }
    }

    /// Counts body bytes of response `id`; returns its rate divisor.
    func served(_ bytes: Int, path: String, id: Int, slowDown: (after: Int, factor: Int)?) -> Int {
        state.withLock { $0.paths[path]?.served(id: id, bytes: bytes, slowDown: slowDown) ?? 1 }
    }

    /// Response `id` of `path` is done.
    func finish(path: String, id: Int) {
        state.withLock { state in
            guard state.paths[path]?.live[id] != nil else { return }
            state.paths[path]?.finish(id: id)
            state.inFlight -= 1
        }
    }

    /// The most responses of all ranged paths together in flight at once, since start or the last ``clear()``.
    var peakInFlight: Int { state.withLock { $0.peakInFlight } }

    /// The traffic of `path` so far (empty when nothing was served there).
    func traffic(for path: String) -> PathTraffic {
        state.withLock { $0.paths[path]?.traffic ?? PathTraffic() }
    }
}
