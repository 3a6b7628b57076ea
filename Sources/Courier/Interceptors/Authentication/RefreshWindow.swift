/// How many refreshes answering a refusal ``AuthenticationInterceptor`` allows within a time: a
/// server that refuses every new credential would otherwise make it refresh after every request.
/// One such refresh more than ``maximumAttempts`` within ``interval`` fails with
/// ``AuthenticationError/Code-swift.struct/excessiveRefresh`` instead of starting.
///
/// Only a refresh caused by a refusal (a 401 for a request that carried the current credential)
/// counts. A refresh because the credential said it expired (``AuthenticationCredential/requiresRefresh``),
/// or because there was none, never counts: two-second tokens refresh every two seconds for as
/// long as the service runs, and that is no loop.
public struct RefreshWindow: Sendable, Equatable, Hashable {
    /// The time the window looks back over.
    public var interval: Duration
    /// The most refreshes answering refusals started within ``interval``.
    public var maximumAttempts: Int

    /// At most `maximumAttempts` refreshes in `interval`; the defaults are Alamofire's (5 in 30 s).
    public init(interval: Duration = .seconds(30), maximumAttempts: Int = 5) {
        self.interval = interval
        self.maximumAttempts = maximumAttempts
    }

    /// Whether a refresh answering a refusal may start at `now`, after such refreshes started at `previous`.
    public func allowsRefresh(at now: ContinuousClock.Instant, after previous: [ContinuousClock.Instant]) -> Bool {
        recent(previous, at: now).count < maximumAttempts
    }

    /// The refreshes of `previous` still inside the window at `now`: the only ones worth keeping.
    func recent(_ previous: [ContinuousClock.Instant], at now: ContinuousClock.Instant) -> [ContinuousClock.Instant] {
        previous.filter { now - $0 < interval }
    }
}
