/// One path's traffic and the rules that change it, as a value: admission under `max_conns`,
/// bytes served, and which response `slow_at` slows down. `RequestLog` keeps one per path
/// under its lock; the tests drive it without sockets.
struct PathTrafficState: Sendable, Equatable {
    /// A response in flight.
    struct Live: Sendable, Equatable {
        /// Admission order within the path: the smallest started first.
        let order: Int
        let connectionID: Int
        /// Its rate is divided by this (1 until `slow_at` picks it).
        var rateDivisor = 1
    }

    /// What tests read.
    private(set) var traffic = PathTraffic()
    /// Responses in flight, by response ID.
    private(set) var live: [Int: Live] = [:]
    /// Whether `slow_at` already slowed a response (it does so once per count).
    private(set) var slowed = false
    private var admissions = 0

    /// Admits response `id` unless `limit` responses are already in flight; a refusal is
    /// recorded with the time and the in-flight count. Returns whether it was admitted.
    mutating func admit(id: Int, connectionID: Int, limit: Int?, at now: ContinuousClock.Instant) -> Bool {
        if let limit, live.count >= limit {
            traffic.refusals.append(PathTraffic.Refusal(at: now, inFlight: live.count))
            return false
        }
        admissions += 1
        live[id] = Live(order: admissions, connectionID: connectionID)
        traffic.responses += 1
        traffic.inFlight = live.count
        traffic.peakInFlight = max(traffic.peakInFlight, live.count)
        return true
    }

    /// Counts `bytes` written by response `id`. When this takes the path's total past
    /// `slowDown.after` bytes for the first time, the response in flight that started first gets
    /// its rate divided by `slowDown.factor` for the rest of its body. Returns `id`'s divisor.
    mutating func served(id: Int, bytes: Int, slowDown: (after: Int, factor: Int)?) -> Int {
        traffic.bodyBytesServed += Int64(bytes)
        if let slowDown, !slowed, traffic.bodyBytesServed > Int64(slowDown.after) {
            if let (firstID, first) = live.min(by: { $0.value.order < $1.value.order }) {
                slowed = true
                live[firstID]?.rateDivisor = max(1, slowDown.factor)
                traffic.slowedConnectionID = first.connectionID
            }
        }
        return live[id]?.rateDivisor ?? 1
    }

    /// Response `id` is fully written (or abandoned).
    mutating func finish(id: Int) {
        live[id] = nil
        traffic.inFlight = live.count
    }

    /// Starts every count afresh; responses in flight stay in flight (and keep their divisor).
    mutating func reset() {
        var fresh = PathTraffic()
        fresh.inFlight = live.count
        fresh.peakInFlight = live.count
        traffic = fresh
        slowed = false
    }
}
