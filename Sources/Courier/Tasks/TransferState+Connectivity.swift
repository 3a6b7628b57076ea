import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the driver knows of the world when it asks what follows an attempt. A decision takes these
/// as an argument and never looks them up itself: the route is a kernel query, asked by the driver
/// (TransferTask+Connectivity.swift) before it locks, and only after a failure.
struct AttemptFacts: Sendable {
    /// The manager was invalidated: nothing more may start.
    var invalidated: Bool
    /// The kernel has no route to the request's host (``HostReachability``).
    var routeIsGone: Bool = false
}

/// The transfer's side of waiting for connectivity (the driver's is TransferTask+Connectivity.swift).
/// Docs/Reachability.md.
extension TransferState {
    /// The rule for a transport failure while the host has no route (``RouteRule``, asked before
    /// any retry policy): it is the network's fault, so no retry is spent on it. With
    /// `waitsForConnectivity` a request that may be sent again waits for the route (the next
    /// attempt, not counted as a retry, continues with `Range` when the bytes allow); otherwise
    /// the task fails with `networkUnreachable` (a download keeps its bytes for resuming).
    /// `nil` when the rule does not apply. Whether the host has a route is one of the `facts`.
    mutating func routeFollowUp(after failure: CourierError?, facts: AttemptFacts) -> FollowUp? {
        guard let failure, phase.state == .running, !facts.invalidated else { return nil }
        let rule = RouteRule.after(
            failure, routeIsGone: facts.routeIsGone, waitsForConnectivity: context.waitsForConnectivity && stream == nil,
            maySendAgain: AutomaticResend.isAllowed(.reconnection, for: currentRequest ?? context.originalRequest))
        switch rule {
        case nil:
            return nil
        case .waitForRoute:
            metrics.endAttempt(.failed, error: failure)
            let next = nextAttempt(spendingRetry: false)
            metrics.nextKind = next.continuesFrom != nil ? .continuation : .restart
            metrics.nextOwner = .routeWait
            phase.attemptAwaitsRetry(pendingFailure: nil)
            return .retry(next.request, .zero, nil)
        case .failUnreachable:
            let unreachable = CourierError.networkUnreachable(url: context.originalRequest.url, waited: nil, underlying: failure)
            return .finish(finishFailedAttempt(unreachable))
        }
    }

    /// Marks a wait for a route in the timeline and for the monitors (a pause, reason `connectivity`).
    mutating func noteRouteWait(started: Bool) {
        let held = received
        if started {
            metrics.pause(.connectivity, bytesHeld: held)
            emit(.paused(TaskPauseEvent(reason: .connectivity, bytesHeld: held, duration: nil)))
        } else {
            let duration = metrics.endPause()
            emit(.pauseEnded(TaskPauseEvent(reason: .connectivity, bytesHeld: held, duration: duration)))
        }
    }
}
