import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Waiting for connectivity (Darwin's `waitsForConnectivity`, which FoundationNetworking lacks)
/// and the rule for a transport failure while the host has no route. Docs/Reachability.md.
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
        let current = state.withLock { $0.phase.launchDecision(number: number) == .start }
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
        state.withLock { state in
            guard state.phase.state == .running else { return }
            if started {
                state.metrics.pause(.connectivity, bytesHeld: state.received)
                emit(.paused(TaskPauseEvent(reason: .connectivity, bytesHeld: state.received, duration: nil)), state)
            } else {
                let duration = state.metrics.endPause()
                emit(.pauseEnded(TaskPauseEvent(reason: .connectivity, bytesHeld: state.received, duration: duration)), state)
            }
        }
    }

    /// The rule for a transport failure while the host has no route (one place, asked before any
    /// retry policy): it is the network's fault, so no retry is spent on it. With
    /// `waitsForConnectivity` a request that may be sent again waits for the route (the next
    /// attempt, not counted as a retry, continues with `Range` when the bytes allow); otherwise
    /// the task fails with `networkUnreachable` (a download keeps its bytes for resuming).
    /// `nil` when the rule does not apply.
    func routeFollowUp(after failure: CourierError?, _ state: inout State) -> FollowUp? {
        // A timeout counts: a link that went away mid-transfer shows as silence.
        guard let failure, failure.isTransport || failure.code == .timedOut, failure.code != .networkUnreachable, state.phase.state == .running,
            !core.isInvalidated, let url = (state.currentRequest ?? originalRequest).url,
            HostReachability.of(url).isUnreachable
        else { return nil }
        let request = state.currentRequest ?? originalRequest
        // Nothing was sent when no connection was made; otherwise only a request that may be
        // sent again automatically is.
        let nothingSent = failure.code == .connectionRefused || failure.code == .dnsFailed
        var streams = false
        if case .stream = kind { streams = true }
        if settings.waitsForConnectivity != nil, !streams,
            nothingSent || AutomaticResend.isAllowed(.reconnection, for: request)
        {
            state.metrics.endAttempt(.failed, error: failure)
            let next = nextAttempt(&state, spendingRetry: false)
            state.metrics.nextKind = next.continuesFrom != nil ? .continuation : .restart
            state.phase.attemptAwaitsRetry(pendingFailure: nil)
            return .retry(next.request, .zero, nil)
        }
        let unreachable = CourierError.networkUnreachable(url: originalRequest.url, waited: nil, underlying: failure)
        return .finish(finishFailedAttempt(unreachable, &state))
    }
}
