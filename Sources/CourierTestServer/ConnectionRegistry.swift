import CourierSupport
/// Tracks open connections so `stop()` can wake every thread blocked on one of them, and
/// counts them the way a server that limits connections does: from `accept` until the server
/// closes its end, idle keep-alive connections included — except that a connection whose client
/// has already closed it (its FIN has arrived) is not counted when a new one is accepted: under
/// load the server's connection thread can notice the end later than the accept loop takes the
/// next connection, and the count is of what the client holds open.
final class ConnectionRegistry: Sendable {
    private struct State: Sendable {
        var stopped = false
        var accepted = 0
        var open: [Int: Socket] = [:]
        /// The most connections open at once since start or the last ``resetPeak()``.
        var peakOpen = 0
    }

    private let state = Locked(State())

    /// Registers a freshly accepted socket and returns its connection ID (1, 2, 3…),
    /// or `nil` when the server is already stopping (the caller then closes the socket).
    func register(_ socket: Socket) -> Int? {
        state.withLock { state in
            if state.stopped { return nil }
            state.accepted += 1
            state.open[state.accepted] = socket
            // `poll` with no wait is a non-blocking system call, and the lock keeps the descriptors valid.
            let held = state.open.values.filter { !$0.peerHasClosed }.count
            state.peakOpen = max(state.peakOpen, held)
            return state.accepted
        }
    }

    /// Forgets a connection. Must happen before its descriptor is closed, so that `stopAll`
    /// never shuts down a descriptor number the kernel has already handed to someone else.
    func unregister(_ id: Int) {
        _ = state.withLock { $0.open.removeValue(forKey: id) }
    }

    /// Marks the registry stopped and shuts down every open connection. Returns `false` if it
    /// was already stopped. `shutdown` runs under the lock on purpose: it is a non-blocking
    /// system call (not user code), and holding the lock is what keeps the descriptor valid.
    func stopAll() -> Bool {
        state.withLock { state in
            if state.stopped { return false }
            state.stopped = true
            for socket in state.open.values { socket.shutdownBoth() }
            return true
        }
    }

    /// Whether `stopAll()` has been called.
    var isStopped: Bool { state.withLock { $0.stopped } }

    /// Total connections accepted since start.
    var acceptedCount: Int { state.withLock { $0.accepted } }

    /// Connections open now.
    var openCount: Int { state.withLock { $0.open.count } }

    /// The most connections open at once.
    var peakOpenCount: Int { state.withLock { $0.peakOpen } }

    /// Starts the peak afresh from the connections open now.
    func resetPeak() {
        state.withLock { $0.peakOpen = $0.open.count }
    }
}
