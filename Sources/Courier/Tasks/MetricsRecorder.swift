import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Builds a task's ``TaskMetrics`` from the transfer's own callbacks. Lives in the transfer's
/// state, so every mark is made under the lock that orders the callbacks; each is a clock read
/// and a field write (the data path adds one clock read per chunk).
struct MetricsRecorder {
    /// The monotonic instant every offset is measured from.
    private let origin = ContinuousClock.now
    private(set) var metrics = TaskMetrics(createdAt: Date())
    /// Why the next attempt is made; set by whoever decides it.
    var nextKind = TaskMetrics.Attempt.Kind.initial
    /// Who tries again with the next attempt (Docs/Retries.md), for its continuation event; set
    /// with ``nextKind`` by whoever decides it, `nil` for the first attempt and `resume()`.
    var nextOwner: RetryOwner?

    private var now: Duration { ContinuousClock.now - origin }

    /// Whether the last attempt is still open.
    private var isOpen: Bool { metrics.attempts.last.map { $0.end == nil } ?? false }

    mutating func resumed() {
        if metrics.resumedAt == nil { metrics.resumedAt = now }
    }

    /// Opens an attempt of ``nextKind`` for `request`; returns it (for its event).
    mutating func beginAttempt(_ request: URLRequest, continuesFrom: Int64?) -> TaskMetrics.Attempt {
        endAttempt(.restarted)  // never two open: a replaced attempt ends here
        let attempt = TaskMetrics.Attempt(
            number: metrics.attempts.count, kind: nextKind, method: request.httpMethod ?? "GET", url: request.url,
            continuesFrom: continuesFrom, start: now)
        metrics.attempts.append(attempt)
        nextKind = .restart  // whoever starts another attempt says why; a bare restart otherwise
        nextOwner = nil
        return attempt
    }

    /// The open attempt, once URLSession started it after it waited behind the per-host cap.
    mutating func leftHostQueue() {
        guard isOpen, let last = metrics.attempts.indices.last else { return }
        metrics.attempts[last].queuedBehindHostCap = now - metrics.attempts[last].start
    }

    mutating func sent(_ count: Int64) {
        guard isOpen, let last = metrics.attempts.indices.last else { return }
        metrics.attempts[last].bytesSent += count
        metrics.attempts[last].requestBodySent = now
    }

    /// Whether the open attempt has had a response head.
    var attemptHasHead: Bool { isOpen && metrics.attempts.last?.responseHeaders != nil }

    mutating func responseHead(_ statusCode: Int) {
        guard isOpen, let last = metrics.attempts.indices.last else { return }
        metrics.attempts[last].statusCode = statusCode
        metrics.attempts[last].responseHeaders = now
    }

    mutating func received(_ count: Int) {
        guard let last = metrics.attempts.indices.last, metrics.attempts[last].end == nil else { return }
        let at = now
        if metrics.attempts[last].firstBodyByte == nil { metrics.attempts[last].firstBodyByte = at }
        metrics.attempts[last].lastBodyByte = at
        metrics.attempts[last].bytesReceived += Int64(count)
    }

    /// Ends the open attempt, if any (the first ending given wins).
    mutating func endAttempt(_ ending: TaskMetrics.Attempt.Ending, error: CourierError? = nil) {
        guard isOpen, let last = metrics.attempts.indices.last else { return }
        metrics.attempts[last].end = now
        metrics.attempts[last].ending = ending
        metrics.attempts[last].error = error.map { "\($0.code): \($0.message)" }
    }

    /// A redirect: recorded, and when URLSession follows it on the same task, the attempt ends
    /// with the 3xx as its response and the hop opens the next one.
    mutating func redirect(_ record: TaskMetrics.Redirect, followedInPlace next: URLRequest?) -> TaskMetrics.Attempt? {
        var record = record
        record.at = now
        metrics.redirects.append(record)
        guard let next else { return nil }
        responseHead(record.statusCode)
        endAttempt(.redirected)
        nextKind = .redirect
        return beginAttempt(next, continuesFrom: nil)
    }

    mutating func retry(_ error: CourierError, delay: Duration) {
        let after = max(0, metrics.attempts.count - 1)
        metrics.retries.append(TaskMetrics.Retry(afterAttempt: after, reason: "\(error.code): \(error.message)", delay: delay, at: now))
        nextKind = .retry
    }

    mutating func pause(_ reason: TaskMetrics.Pause.Reason, bytesHeld: Int64) {
        metrics.pauses.append(TaskMetrics.Pause(reason: reason, start: now, end: nil, bytesHeld: bytesHeld))
    }

    /// Ends the open pause, if any; returns how long it lasted.
    @discardableResult
    mutating func endPause() -> Duration? {
        guard let last = metrics.pauses.indices.last, metrics.pauses[last].end == nil else { return nil }
        let end = now
        metrics.pauses[last].end = end
        return end - metrics.pauses[last].start
    }

    /// The instant `offset` since creation is (the crew of a split download reads the clock itself).
    func offset(of instant: ContinuousClock.Instant) -> Duration { instant - origin }

    /// A split download's finished requests, in order, at most ``TaskMetrics/segmentRequestLimit`` in all.
    mutating func segmentRequests(_ requests: [TaskMetrics.SegmentRequest]) {
        guard !requests.isEmpty else { return }
        var all = metrics.segmentRequests ?? []
        all.append(contentsOf: requests.prefix(max(0, TaskMetrics.segmentRequestLimit - all.count)))
        metrics.segmentRequests = all
    }

    /// The timeline at completion: the open attempt and pause end now.
    mutating func complete(error: CourierError?) -> TaskMetrics {
        let ending: TaskMetrics.Attempt.Ending =
            error == nil ? .completed : (error?.code == .cancelled ? .cancelled : .failed)
        endAttempt(ending, error: error)
        endPause()
        metrics.completedAt = now
        return metrics
    }
}
