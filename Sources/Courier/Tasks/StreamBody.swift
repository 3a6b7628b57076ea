import Foundation

/// A streamed body's own state and decisions: whether the consumer has the response head, what a
/// chunk means when the consumer falls behind, and the clock of the stream's waits (the head
/// limit, then ``StreamPolicy/idleTimeout``).
///
/// Kept in `TransferTask`'s state for a stream task only (`nil` for other kinds), changed under
/// the task's lock; its decisions are values the task acts on after unlocking (hand the chunk to
/// the ``StreamBuffer``, pause, cancel the attempt, move the timer). Times are passed in, so the
/// decisions are tested without sockets or clocks (`StreamBodyTests`).
struct StreamBody {
    /// Where the consumer reads.
    let buffer: StreamBuffer
    let policy: StreamPolicy
    /// The consumer has the response head: body bytes now go to it.
    var accepted = false
    /// The stream's waits are timed (its policy limits the head or the gaps, and the driver armed
    /// the timer at the first `resume()`, TransferTask+Streaming.swift).
    var timesWaits = false
    /// When the server last sent something (or an attempt started).
    var lastActivity = ContinuousClock.Instant.now
    /// The current attempt has no response head yet: its silence is bounded by the head limit.
    var awaitingHead = true
    /// The head or idle limit ended the current attempt: its URLSession task is being cancelled,
    /// and its completion reports this (TransferTask+URLSessionEvents.swift).
    var expiredWait: CourierError?

    init(buffer: StreamBuffer, policy: StreamPolicy) {
        self.buffer = buffer
        self.policy = policy
    }

    /// Whether bytes went to the consumer: they cannot be taken back, so the stream must never
    /// start over (it continues with `Range`, or fails).
    func hasDelivered(received: Int64) -> Bool { accepted && received > 0 }

    // MARK: - The head

    /// What a final response head means for the stream.
    enum HeadDecision: Equatable {
        /// The first head that passes validation: hand it to the consumer; body bytes follow it.
        case deliver
        /// A retry's head before any byte, for a head the consumer already has: the same resource.
        case sameResource
        /// A head validation refuses, after the consumer got one: the stream fails.
        case refuse
        /// A head validation refuses before the consumer got one: its body is an error page, held
        /// in memory as a data task's and reported as the error; it never looks like a stream.
        case holdErrorPage
    }

    /// A final response head arrived at `now`; `passesValidation`: the task's validation accepts it.
    mutating func headArrived(passesValidation: Bool, now: ContinuousClock.Instant) -> HeadDecision {
        guard passesValidation else { return accepted ? .refuse : .holdErrorPage }
        if accepted { return .sameResource }
        accepted = true
        lastActivity = now
        return .deliver
    }

    // MARK: - Chunks

    /// What a chunk of an accepted stream means.
    enum ChunkDecision: Equatable {
        /// Hand it to the consumer.
        case deliver
        /// Hand it over (the buffer ends at most one chunk past the limit), then stop the attempt
        /// and continue with `Range` once the consumer is down to `drainedTo` bytes.
        case deliverThenPause(drainedTo: Int)
        /// The consumer is too far behind and the stream cannot pause: it fails.
        case overflow
    }

    /// The decision for a chunk of `count` bytes with `buffered` bytes waiting for the consumer;
    /// `canContinue`: the bytes held could be continued with `Range`. It counts as the server's
    /// activity for the idle limit.
    mutating func chunkArrived(count: Int, buffered: Int, canContinue: Bool, now: ContinuousClock.Instant) -> ChunkDecision {
        if timesWaits { lastActivity = now }
        guard buffered + count > policy.bufferLimit else { return .deliver }
        guard policy.overflow == .pause, canContinue else { return .overflow }
        return .deliverThenPause(drainedTo: policy.bufferLimit / 2)
    }

    // MARK: - Waits: the head, and idle gaps

    /// An attempt starts (`awaitingHead`), or its response head arrived: the clock starts again,
    /// under the head limit before the head and the idle timeout after it. Returns when the timer
    /// must fire next (`nil`: leave it), which may be sooner than it was set for.
    mutating func waitRestarted(awaitingHead: Bool, now: ContinuousClock.Instant) -> Duration? {
        self.awaitingHead = awaitingHead
        if awaitingHead { expiredWait = nil }
        guard timesWaits else { return nil }
        lastActivity = now
        let limit = awaitingHead ? policy.headLimit : policy.idleTimeout
        return limit ?? policy.headLimit ?? policy.idleTimeout
    }

    /// What the wait timer found.
    enum WaitCheck: Equatable {
        /// Nothing to do: no timer, or the wait already ended the attempt.
        case none
        /// The current wait passed its limit: cancel the attempt; its completion reports ``expiredWait``.
        case expired
        /// Look again after this long.
        case lookAgain(after: Duration)
    }

    /// The timer fired at `now`. `hasAttempt`: an attempt's URLSession task is current and the
    /// task runs (time between attempts — paused for the consumer, waiting to retry — is not
    /// silence); `launching`: that task is still being registered (cancelling it would lose its
    /// completion, so it is looked at again in a moment).
    mutating func waitChecked(
        now: ContinuousClock.Instant, hasAttempt: Bool, launching: Bool, url: URL?
    ) -> WaitCheck {
        guard timesWaits, expiredWait == nil else { return .none }
        if !hasAttempt { lastActivity = now }
        let silent = now - lastActivity
        let limit = awaitingHead ? policy.headLimit : policy.idleTimeout
        if let limit, silent >= limit, hasAttempt {
            guard !launching else { return .lookAgain(after: .milliseconds(10)) }
            expiredWait = awaitingHead ? .headTimeout(limit, policy: policy, url: url) : .idleTimeout(limit, url: url)
            return .expired
        }
        // A wait without a limit (no idle limit once the head is in) is looked at again after
        // the other one, for the next attempt's head.
        guard let next = limit.map({ $0 - silent }) ?? policy.headLimit ?? policy.idleTimeout else { return .none }
        return .lookAgain(after: max(.milliseconds(1), next))
    }
}
