import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The one retry path, the driver's half: the retriers asked outside the lock, the delay, the
/// announcement to the monitors. What follows a failed attempt is decided on the state
/// (TransferState+Retry.swift).
extension TransferTask {
    /// The retriers' answer; `error` is the failure they were asked about.
    func retryDecided(_ decision: RetryDecision, error: CourierError, owner: RetryOwner) -> FollowUp? {
        locked { $0.retriersAnswered(decision, error: error, owner: owner) }
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
}
