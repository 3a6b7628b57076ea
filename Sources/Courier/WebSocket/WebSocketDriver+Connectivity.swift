import Foundation

/// Waiting for connectivity before a WebSocket opens, as a transfer does before an attempt
/// (TransferTask+Connectivity.swift): the same ``SessionManager/Configuration/waitsForConnectivity``,
/// the same ``NetworkMonitor`` wait, the same `pause`/`pause-ended` events (reason `connectivity`)
/// and the same ``RouteRule`` after a failed connection. Docs/WebSocket.md, "Connectivity".
extension WebSocketDriver {
    /// With `waitsForConnectivity`, asks the monitor for a route to the host first (on the
    /// monitor's queue; a reachable host costs that one hop); then connects within `timeout`,
    /// which starts once there is a route.
    func openWhenRouted(timeout: Duration) {
        guard let bound = configuration.waitsForConnectivity, let host = url.host, !host.isEmpty else {
            return connect(timeout: timeout)
        }
        (configuration.networkMonitor ?? .shared).waitForRoute(
            to: host, timeout: bound,
            waiting: { [weak self] in self?.noteRouteWait(started: true) },
            completion: { [weak self] outcome in self?.routeWaitEnded(outcome, bound: bound, timeout: timeout) })
    }

    /// The wait for a route ended.
    private func routeWaitEnded(_ outcome: NetworkMonitor.RouteWait, bound: Duration, timeout: Duration) {
        if case .reachable(_, true) = outcome { noteRouteWait(started: false) }
        // Cancelled or invalidated meanwhile: nothing to open.
        guard state.withLock({ $0.phase == .connecting }) else { return }
        switch outcome {
        case .reachable, .unmonitored:
            // Unmonitored: nothing can tell when a route comes, so the open goes now and fails on its own.
            connect(timeout: timeout)
        case .timedOut:
            perform(state.withLock { $0.connectionEnded(.networkUnreachable(url: url, waited: bound, underlying: nil)) })
        }
    }

    /// The connection could not be made: ``RouteRule`` decides whether the host's missing route
    /// is to blame (then the task waits for it again, or fails with `networkUnreachable`), as
    /// for any task. Nothing was sent yet, so the open may always be made again.
    func connectFailed(_ error: CourierError, timeout: Duration) {
        // One netlink query, only after a failure that may be the route's, never under the lock.
        let routeIsGone = (error.isTransport || error.code == .timedOut) && HostReachability.of(url).isUnreachable
        let rule = RouteRule.after(
            error, routeIsGone: routeIsGone, waitsForConnectivity: configuration.waitsForConnectivity != nil, maySendAgain: true)
        switch rule {
        case .waitForRoute:
            guard state.withLock({ $0.phase == .connecting }) else { return }
            openWhenRouted(timeout: timeout)
        case .failUnreachable:
            perform(state.withLock { $0.connectionEnded(.networkUnreachable(url: url, waited: nil, underlying: error)) })
        case nil:
            perform(state.withLock { $0.connectionEnded(error) })
        }
    }

    /// The timeline's pause and the monitors' events for a wait (reason `connectivity`), as a
    /// transfer's (TransferState.noteRouteWait).
    private func noteRouteWait(started: Bool) {
        let event = state.withLock { state -> TaskEvent? in
            guard state.phase == .connecting else { return nil }
            let now = ContinuousClock.now - created
            if started {
                state.task.metrics.pauses.append(TaskMetrics.Pause(reason: .connectivity, start: now, end: nil, bytesHeld: 0))
                return .paused(TaskPauseEvent(reason: .connectivity, bytesHeld: 0, duration: nil))
            }
            guard let last = state.task.metrics.pauses.indices.last, state.task.metrics.pauses[last].end == nil else { return nil }
            state.task.metrics.pauses[last].end = now
            let duration = now - state.task.metrics.pauses[last].start
            return .pauseEnded(TaskPauseEvent(reason: .connectivity, bytesHeld: 0, duration: duration))
        }
        if let event { events.emit(event, for: handle) }
    }
}
