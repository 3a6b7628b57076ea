/// The single-flight bookkeeping of ``AuthenticationInterceptor``, as a value: events named after
/// what just happened return what the interceptor must do, and it does it after unlocking (apply
/// the credential, start the refresh, release the waiters). `Waiter` is what a request leaves
/// while it waits for a refresh (the interceptor's request and completion; a number in tests).
///
/// The rules, in one place:
/// - One refresh at a time. A request that needs a credential while a refresh runs waits for it,
///   whatever its own credential looked like.
/// - A refresh starts when a request finds the credential expired (``AuthenticationCredential/requiresRefresh``)
///   or refused by the server (a 401 for a request that carried the current credential), or
///   finds no credential at all (the refresh then obtains the first one).
/// - A 401 for a request that carried an older credential refreshes nothing: the retry gets the
///   current one.
/// - A refresh that ends releases every waiter exactly once, with the new credential or the one
///   error.
/// - Only a refresh caused by a refusal counts toward the ``RefreshWindow``: the window stops
///   refresh after refresh being refused (a server that refuses every new credential), not a
///   credential's normal lifetime. A refresh because the credential expired, or because there
///   was none, never counts, however short-lived the credentials are. A refused refresh that
///   would exceed the window fails its request instead of starting.
struct AuthenticationState<Credential: Sendable, Waiter> {
    /// Why a refresh starts; only ``refused`` counts toward the ``RefreshWindow``.
    enum RefreshCause: Equatable {
        /// There is no credential: the refresh obtains the first one.
        case missing
        /// The credential said it requires a refresh (its scheduled end).
        case expired
        /// The server refused the current credential (a 401 for a request that carried it).
        case refused

        /// Whether a refresh for this cause is one the window limits: only a refusal can loop
        /// (a new credential refused again), while an expiry comes at the pace the credentials set.
        var countsTowardWindow: Bool { self == .refused }
    }

    /// The refresh in flight.
    struct Refresh {
        /// Tells this refresh's end from a later one's (a refresh that timed out may still end).
        let id: Int
        /// The requests waiting for it, in arrival order.
        var waiters: [Waiter]
    }

    /// What to do for a request that arrived (``requestArrived(_:)``) or whose credential was
    /// checked (``credentialChecked(_:generation:expired:now:)``).
    enum AdaptAction {
        /// Ask the credential whether it requires a refresh (user code: outside the lock), then
        /// report with ``credentialChecked(_:generation:expired:now:)``.
        case check(Credential, generation: Int)
        /// Send the request with this credential.
        case apply(Credential)
        /// The request waits for the refresh in flight; it is released when that ends.
        case wait
        /// The request waits for a refresh the interceptor must start now, from this credential
        /// (`nil`: there is none; the refresh obtains the first one).
        case startRefresh(Credential?, id: Int)
        /// Fail the request with this error.
        case fail(AuthenticationError)
    }

    /// What a refresh's end releases.
    struct Release {
        /// Every waiter, each once.
        let waiters: [Waiter]
        /// The new credential, or the one error all waiters fail with.
        let result: Result<Credential, AuthenticationError>
    }

    /// The credential requests get; `nil` until one is given or obtained.
    private(set) var credential: Credential?
    /// Counts credentials: changes whenever ``credential`` does, so that a decision taken on an
    /// older one can be told apart.
    private(set) var generation = 0
    /// Whether the server refused the current credential.
    private(set) var rejected = false
    /// The refresh in flight, if any.
    private(set) var refresh: Refresh?
    /// When the refreshes caused by refusals still inside the window started.
    private var refreshStarts: [ContinuousClock.Instant] = []
    private var lastRefreshID = 0
    /// The refresh window in force; `nil` for none.
    let window: RefreshWindow?

    init(credential: Credential?, window: RefreshWindow?) {
        self.credential = credential
        self.window = window
    }

    /// How many requests wait for the refresh in flight.
    var waitingCount: Int { refresh?.waiters.count ?? 0 }

    /// A request needs a credential.
    mutating func requestArrived(_ waiter: Waiter, now: ContinuousClock.Instant) -> AdaptAction {
        if refresh != nil { return join(waiter) }
        guard let credential else { return startRefresh(nil, for: waiter, cause: .missing, now: now) }
        if rejected { return startRefresh(credential, for: waiter, cause: .refused, now: now) }
        return .check(credential, generation: generation)
    }

    /// The credential of `generation` was asked whether it requires a refresh: `expired` is its answer.
    mutating func credentialChecked(
        _ waiter: Waiter, generation checked: Int, expired: Bool, now: ContinuousClock.Instant
    ) -> AdaptAction {
        if refresh != nil { return join(waiter) }
        guard let credential else { return startRefresh(nil, for: waiter, cause: .missing, now: now) }
        // The credential changed while it was being checked: check the new one.
        if checked != generation { return .check(credential, generation: generation) }
        // A refused credential is a refusal's refresh even when it has expired too.
        if rejected { return startRefresh(credential, for: waiter, cause: .refused, now: now) }
        if expired { return startRefresh(credential, for: waiter, cause: .expired, now: now) }
        return .apply(credential)
    }

    /// The server refused a request that carried the credential of `generation`. An older
    /// generation's refusal changes nothing: a newer credential exists already.
    mutating func credentialRejected(generation rejectedGeneration: Int) {
        if rejectedGeneration == generation { rejected = true }
    }

    /// The caller set a credential of its own (`nil`: the next request obtains one): later
    /// requests use it, a running refresh still ends.
    mutating func credentialReplaced(by newCredential: Credential?) {
        credential = newCredential
        generation += 1
        rejected = false
    }

    /// The refresh `id` ended with `result`. `nil` when that refresh is no longer the one in
    /// flight (it timed out before): its late answer is dropped, and releases nobody twice.
    mutating func refreshEnded(id: Int, with result: Result<Credential, AuthenticationError>) -> Release? {
        guard let ended = refresh, ended.id == id else { return nil }
        refresh = nil
        if case .success(let newCredential) = result { credentialReplaced(by: newCredential) }
        return Release(waiters: ended.waiters, result: result)
    }

    private mutating func join(_ waiter: Waiter) -> AdaptAction {
        refresh?.waiters.append(waiter)
        return .wait
    }

    private mutating func startRefresh(
        _ credential: Credential?, for waiter: Waiter, cause: RefreshCause, now: ContinuousClock.Instant
    ) -> AdaptAction {
        if let window, cause.countsTowardWindow {
            refreshStarts = window.recent(refreshStarts, at: now)
            guard window.allowsRefresh(at: now, after: refreshStarts) else { return .fail(.excessiveRefresh(window)) }
            refreshStarts.append(now)
        }
        lastRefreshID += 1
        refresh = Refresh(id: lastRefreshID, waiters: [waiter])
        return .startRefresh(credential, id: lastRefreshID)
    }
}
