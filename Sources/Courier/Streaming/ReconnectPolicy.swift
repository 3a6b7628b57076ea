import Foundation

/// When, how often and whether an event stream reconnects after its connection ends.
///
/// Every reconnection is bounded twice: by a wait (the server's `retry:` or ``delay``, never
/// shorter than ``minimumDelay``, doubled after failures, capped by ``maximumDelay``), and by a
/// rate, ``maximumReconnectionsPerMinute``, that counts every reconnection whatever its connection
/// delivered. A server that asks for `retry: 0`, sends one event and closes therefore cannot make
/// the stream spin. Only GET and HEAD requests reconnect, unless ``reconnectsAnyMethod`` says
/// otherwise: any other request's sequence ends when its response ends.
public struct ReconnectPolicy: Sendable, Equatable {
    /// The wait before reconnecting when the server sent no `retry:` (WHATWG leaves it to the
    /// client; browsers use a few seconds).
    public var delay: Duration
    /// The shortest wait before any reconnection: a server's `retry:` and ``delay`` are raised to
    /// it. At least 10 ms, whatever is set.
    public var minimumDelay: Duration
    /// The longest wait: a server's `retry:` and the backoff are capped here, so a hostile
    /// `retry: 999999999` cannot park the stream for days. Never below ``minimumDelay``.
    public var maximumDelay: Duration
    /// How many reconnections in a row may fail (no connection, or a connection that ended
    /// before delivering an event) before the sequence fails with the last error. Each of them
    /// doubles the wait, up to ``maximumDelay``. An event resets the count.
    public var maximumAttempts: Int
    /// The most reconnections in any 60 s, counted whatever the connections delivered (an event
    /// does not reset it). A reconnection that would exceed it waits until the oldest of those
    /// is a minute old, even past ``maximumDelay``. Between 1 and 600, whatever is set.
    public var maximumReconnectionsPerMinute: Int
    /// Whether a request other than GET or HEAD reconnects too. Off by default: a `POST` (an LLM
    /// completion, say) is sent once, and its sequence ends when its response ends (or fails
    /// when it drops). Turn it on only for an endpoint where sending the request again is harmless.
    public var reconnectsAnyMethod: Bool

    /// The shortest ``minimumDelay`` allowed.
    static let minimumDelayFloor = Duration.milliseconds(10)
    /// The values ``maximumReconnectionsPerMinute`` may take.
    static let reconnectionsPerMinuteRange = 1...600

    private static func saneRate(_ perMinute: Int) -> Int {
        min(max(perMinute, reconnectionsPerMinuteRange.lowerBound), reconnectionsPerMinuteRange.upperBound)
    }

    /// ``maximumReconnectionsPerMinute`` within its limits (the property is settable): how many
    /// reconnection times ``wait(serverRetry:failures:recent:now:)`` needs.
    var reconnectionsPerMinute: Int { Self.saneRate(maximumReconnectionsPerMinute) }

    /// Creates a policy; values outside the sane limits above are brought within them.
    public init(
        delay: Duration = .seconds(3), minimumDelay: Duration = .milliseconds(500), maximumDelay: Duration = .seconds(60),
        maximumAttempts: Int = 5, maximumReconnectionsPerMinute: Int = 60, reconnectsAnyMethod: Bool = false
    ) {
        self.delay = max(.zero, delay)
        self.minimumDelay = max(Self.minimumDelayFloor, minimumDelay)
        self.maximumDelay = max(self.minimumDelay, maximumDelay)
        self.maximumAttempts = max(0, maximumAttempts)
        self.maximumReconnectionsPerMinute = Self.saneRate(maximumReconnectionsPerMinute)
        self.reconnectsAnyMethod = reconnectsAnyMethod
    }

    /// 3 s (or the server's `retry:`, at least 0.5 s), doubling on failures up to 60 s, at most 5
    /// failures in a row and 60 reconnections a minute; GET and HEAD only.
    public static let `default` = ReconnectPolicy()
    /// Never reconnect: the sequence ends (or fails) with its first connection.
    public static let never = ReconnectPolicy(maximumAttempts: 0)

    /// The wait before the next reconnection: the server's `retry:` (or ``delay``) raised to
    /// ``minimumDelay``, doubled for each of `failures` (failed reconnections in a row before this
    /// one), capped by ``maximumDelay`` — ``Backoff`` without jitter; and longer if ``maximumReconnectionsPerMinute`` of
    /// `recent` (when the latest reconnections started, oldest first) are less than a minute
    /// before `now` plus that wait.
    func wait(
        serverRetry: Duration?, failures: Int, recent: [ContinuousClock.Instant], now: ContinuousClock.Instant
    ) -> Duration {
        // The properties are public and settable: their limits hold here too.
        let floor = max(minimumDelay, Self.minimumDelayFloor)
        let ceiling = max(maximumDelay, floor)
        // The one backoff, without jitter: the server's `retry:` and the rate below must hold exactly.
        let backoff = Backoff(initial: max(serverRetry ?? delay, floor), maximum: ceiling, jitter: .none)
        var wait = backoff.delay(attempt: max(0, failures) + 1)
        let perMinute = reconnectionsPerMinute
        if recent.count >= perMinute {
            // The reconnection that would be the (perMinute + 1)-th within a minute waits for the
            // oldest of them to leave the window.
            let allowed = recent[recent.count - perMinute] + .seconds(60)
            wait = max(wait, allowed - now)
        }
        return wait
    }
}
