import Foundation

/// An event stream's reconnect decisions, as a value: what the iterator does after a connection
/// ends or cannot be made, decided without sockets or a clock of its own (the iterator passes
/// `now`), so every rule is unit-tested directly (ReconnectStateTests).
///
/// The iterator reports what happened — ``connecting(at:)``, ``eventDelivered()``,
/// ``connectionEnded(_:)``, ``connectFailed(_:)`` — and asks ``nextStep(serverRetry:now:)``
/// what to do before each connection. Whether an error ends the sequence is
/// ``mayReconnect(after:)``: the one definition of transient
/// (``CourierError/Code-swift.struct/isTransient``) plus the stream's own, named condition.
struct ReconnectState: Sendable {
    let policy: ReconnectPolicy
    /// The request may be sent again (AutomaticResend.swift): otherwise its sequence is one response.
    let reconnects: Bool
    /// The stream pauses for a slow consumer by reconnecting (``StreamPolicy/Overflow/pause``).
    let pausesOnOverflow: Bool

    /// Connections started, the first included.
    private(set) var connections = 0
    /// Reconnections in a row that failed: no connection, or one that ended before an event.
    private(set) var failures = 0
    private(set) var deliveredOnConnection = false
    /// Why the last connection ended (`nil`: the server ended the response) or could not be made.
    private(set) var lastError: CourierError?
    /// When the latest reconnections started, oldest first, for ``ReconnectPolicy/maximumReconnectionsPerMinute``.
    private(set) var recent: [ContinuousClock.Instant] = []

    init(policy: ReconnectPolicy, reconnects: Bool, pausesOnOverflow: Bool) {
        self.policy = policy
        self.reconnects = reconnects
        self.pausesOnOverflow = pausesOnOverflow
    }

    /// What the iterator does next.
    enum Step: Equatable {
        /// Make the first connection.
        case connect
        /// Wait `delay`, then connect again (announced to the monitors first).
        case reconnect(after: Duration, number: Int)
        /// The sequence is over without an error.
        case end
        /// The sequence fails with this error.
        case fail(CourierError)

        static func == (lhs: Step, rhs: Step) -> Bool {
            switch (lhs, rhs) {
            case (.connect, .connect), (.end, .end): return true
            case (.reconnect(let a, let m), .reconnect(let b, let n)): return a == b && m == n
            case (.fail(let a), .fail(let b)): return a.code == b.code && a.message == b.message
            default: return false
            }
        }
    }

    /// Whether `error`, ending a connection or failing to make one, leaves the stream
    /// reconnecting. A transient failure does, as it lets any request retry; beyond that, an
    /// overflow under ``StreamPolicy/Overflow/pause``, which is the stream pausing for its
    /// consumer, not a failure, and a lost route (`networkUnreachable`), which is the network's
    /// fault, not the server's: the stream waits for the route (``waitsForRoute``). Never for a
    /// request that is not sent again.
    func mayReconnect(after error: CourierError) -> Bool {
        guard reconnects else { return false }
        let pauseForConsumer = error.code == .bufferOverflow && pausesOnOverflow
        let routeLost = error.code == .networkUnreachable
        return error.code.isTransient || pauseForConsumer || routeLost
    }

    /// The last connection ended, or could not be made, because the host had no route: the wait
    /// before the next reconnection is a wait for the route, ended early when one appears (but
    /// not before ``earliestReconnection(now:)``). It stays one reconnection of the policy's:
    /// announced, counted, and bounded by the same wait and ``ReconnectPolicy/maximumAttempts``.
    var waitsForRoute: Bool { lastError?.code == .networkUnreachable }

    /// The shortest wait before the next reconnection the policy allows whatever happens:
    /// ``ReconnectPolicy/minimumDelay``, or longer when ``ReconnectPolicy/maximumReconnectionsPerMinute``
    /// would be exceeded. A route coming back never brings a reconnection before it.
    func earliestReconnection(now: ContinuousClock.Instant) -> Duration {
        policy.wait(serverRetry: .zero, failures: 0, recent: recent, now: now)
    }

    /// A connection is being made (after its wait): a reconnection counts toward the rate.
    mutating func connecting(at now: ContinuousClock.Instant) {
        if connections > 0 {
            recent.append(now)
            // Only the latest `maximumReconnectionsPerMinute` are ever looked at.
            let kept = policy.reconnectionsPerMinute
            if recent.count > kept { recent.removeFirst(recent.count - kept) }
        }
        connections += 1
        deliveredOnConnection = false
    }

    /// The connection delivered an event: the failures in a row start over.
    mutating func eventDelivered() {
        failures = 0
        deliveredOnConnection = true
    }

    /// The connection is over: normally (`nil`) or with a reconnectable `error`.
    mutating func connectionEnded(_ error: CourierError?) {
        lastError = error
        // A connection that delivered nothing counts against the limit; one that did, not.
        if !deliveredOnConnection { failures += 1 }
        // A pause for the consumer is not a failure of the server's.
        if error?.code == .bufferOverflow { failures = 0 }
    }

    /// No connection could be made, for a reconnectable `error`.
    mutating func connectFailed(_ error: CourierError) {
        failures += 1
        lastError = error
    }

    /// What comes before the next connection, given the last connection's `retry:` field.
    ///
    /// After a connection ended — with a transient error, or normally: reconnecting after the
    /// server ended its response is the stream's own condition, and the reason it exists — the
    /// stream reconnects after ``ReconnectPolicy/wait(serverRetry:failures:recent:now:)`` while
    /// fewer than ``ReconnectPolicy/maximumAttempts`` reconnections in a row failed.
    func nextStep(serverRetry: Duration?, now: ContinuousClock.Instant) -> Step {
        guard connections > 0 else { return .connect }
        guard reconnects else {
            // Not safe to send again, and the caller did not opt in: one response is the sequence.
            return lastError.map(Step.fail) ?? .end
        }
        guard failures <= policy.maximumAttempts, policy.maximumAttempts > 0 else {
            if let lastError { return .fail(lastError) }
            // The server ended the response and reconnecting is off: a normal end.
            if policy.maximumAttempts == 0 { return .end }
            // Connections that kept ending without an event: giving up must not look like a 204.
            return .fail(
                CourierError(
                    code: .invalidResponse,
                    message: "the event stream ended \(failures) times in a row without an event; gave up "
                        + "(ReconnectPolicy.maximumAttempts is \(policy.maximumAttempts))"))
        }
        let wait = policy.wait(serverRetry: serverRetry, failures: max(0, failures - 1), recent: recent, now: now)
        return .reconnect(after: wait, number: connections)
    }
}
