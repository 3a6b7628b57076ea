/// How many refreshes ``AuthenticationInterceptor`` allows within a time: a server that refuses
/// every new credential would otherwise make it refresh after every request. One refresh more
/// than ``maximumAttempts`` within ``interval`` fails with
/// ``AuthenticationError/Code-swift.struct/excessiveRefresh`` instead of starting.
public struct RefreshWindow: Sendable, Equatable, Hashable {
    /// The time the window looks back over.
    public var interval: Duration
    /// The most refreshes started within ``interval``.
    public var maximumAttempts: Int

    /// At most `maximumAttempts` refreshes in `interval`; the defaults are Alamofire's (5 in 30 s).
    public init(interval: Duration = .seconds(30), maximumAttempts: Int = 5) {
        self.interval = interval
        self.maximumAttempts = maximumAttempts
    }

    /// Whether a refresh may start at `now`, after refreshes started at `previous`.
    public func allowsRefresh(at now: ContinuousClock.Instant, after previous: [ContinuousClock.Instant]) -> Bool {
        recent(previous, at: now).count < maximumAttempts
    }

    /// The refreshes of `previous` still inside the window at `now`: the only ones worth keeping.
    func recent(_ previous: [ContinuousClock.Instant], at now: ContinuousClock.Instant) -> [ContinuousClock.Instant] {
        previous.filter { now - $0 < interval }
    }
}
