import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The one retry path, for every kind of task: after an attempt failed, the task's own
/// ``RetryPolicy`` (a download's ``DownloadPolicy/retry``) decides first, then the interceptor's
/// retriers; a retry plans the next attempt, which continues with `Range` when the bytes held
/// allow it. What only a download adds — its record brought up to date, its bytes kept when
/// nothing retries, the `Retry-After`-too-long refusal named in its error — are steps of this
/// path, not a second one.
extension TransferTask {
    /// The retriers' answer; `error` is the failure they were asked about.
    func retryDecided(_ decision: RetryDecision, error: CourierError) -> FollowUp? {
        locked { $0.retriersAnswered(decision, error: error) }
    }

    func scheduleRetry(_ request: URLRequest, after delay: Duration) {
        let seconds = delay.seconds
        core.callQueue.asyncAfter(deadline: .now() + seconds) { [self] in
            let proceed = locked { $0.phase.retryDelayElapsed() }
            if proceed { startAttempt(request) }
        }
    }

    /// Tells the monitors about a retry, before its delay starts.
    func announce(_ event: TaskRetryEvent) {
        guard events.isActive else { return }
        events.emit(.retrying(event), for: locked { $0.retainedHandle ?? $0.handle })
    }

    /// `failure` restated as final because its response's `Retry-After` asks for `requested`,
    /// longer than `cap`: the message names both, the rest of the error stays.
    static func retryAfterRefusal(_ failure: CourierError, requested: Duration, cap: Duration) -> CourierError {
        let header = failure.response?.value(forHTTPHeaderField: "Retry-After") ?? ""
        let message = failure.message
            + "; it asked to be retried after \(Backoff.describe(requested)) (Retry-After: \(header)), longer than the "
            + "\(Backoff.describe(cap)) RetryPolicy.maximumRetryAfter allows, so it was not retried"
        var refusal = CourierError(
            code: failure.code, message: message, url: failure.url, response: failure.response, body: failure.body,
            underlyingError: failure.underlyingError)
        refusal.resumeData = failure.resumeData
        return refusal
    }
}
