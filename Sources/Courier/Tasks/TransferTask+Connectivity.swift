import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Waiting for connectivity (Darwin's `waitsForConnectivity`, which FoundationNetworking lacks)
/// before an attempt: the driver's half (the rule after a failure is TransferState+Connectivity.swift).
/// Docs/Reachability.md.
extension TransferTask {
    /// With ``SessionManager/Configuration/waitsForConnectivity``, asks the monitor for a route to
    /// the request's host before attempt `number` is launched; `true` when the wait took the
    /// attempt over (it launches it, or fails the task, later). The check runs on the monitor's
    /// queue, never on the caller's thread; a reachable host costs that one hop.
    func awaitsRoute(for request: URLRequest, number: Int) -> Bool {
        guard let bound = settings.waitsForConnectivity, let host = request.url?.host, !host.isEmpty else { return false }
        settings.networkMonitor.waitForRoute(
            to: host, timeout: bound,
            waiting: { [weak self] in self?.noteRouteWait(started: true) },
            completion: { [weak self] outcome in self?.routeWaitEnded(outcome, request: request, number: number, bound: bound) })
        return true
    }

    /// The wait for a route to attempt `number`'s host ended.
    private func routeWaitEnded(_ outcome: NetworkMonitor.RouteWait, request: URLRequest, number: Int, bound: Duration) {
        // A task cancelled, paused or completed meanwhile has moved on: this attempt is not its.
        let current = locked { $0.phase.launchDecision(number: number) == .start }
        switch outcome {
        case .reachable(_, let waited):
            if waited { noteRouteWait(started: false) }
            // Even when no longer current: `makeAndLaunch` drops it and balances the table's count.
            queueAttempt(request, number: number)
        case .unmonitored:
            // Nothing can tell when a route comes: the attempt goes now and fails on its own.
            queueAttempt(request, number: number)
        case .timedOut:
            guard current else { return }
            fail(with: .networkUnreachable(url: request.url, waited: bound, underlying: nil), keepingBytes: true)
        }
    }

    /// The timeline's pause and the monitors' events for a wait (reason `connectivity`).
    private func noteRouteWait(started: Bool) {
        locked { state in
            guard state.phase.state == .running else { return }
            state.noteRouteWait(started: started)
        }
    }
}

extension TransferTask {
    /// The facts a decision about an ended attempt takes (``AttemptFacts``): whether the manager
    /// was invalidated and, after a failure other than a cancel, whether the kernel has a route to
    /// `url`'s host (``HostReachability``: one netlink query, never made under the lock).
    func attemptFacts(after error: (any Error)?, url: @autoclosure () -> URL?) -> AttemptFacts {
        var facts = AttemptFacts(invalidated: core.isInvalidated)
        // The URL only when there was an error: reading a task's `currentRequest` bridges a
        // whole request on Linux (~3k instructions), on every request's completion.
        guard let error, let url = url() else { return facts }
        let nsError = error as NSError
        // A cancel is not the network's doing, unless it was the stream's own wait that expired
        // (a link that went away mid-stream shows as silence).
        if nsError.domain == NSURLErrorDomain, nsError.code == NSURLErrorCancelled,
            !locked({ $0.stream?.expiredWait != nil })
        {
            return facts
        }
        facts.routeIsGone = HostReachability.of(url).isUnreachable
        return facts
    }
}
