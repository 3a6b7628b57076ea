internal import CourierSupport
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// SIGINT and SIGTERM as a request to stop cleanly: the first stops whatever runs (``onStop(_:)``:
/// cancel a download so that it keeps its partial file and record), a second one leaves at once
/// (the `leaving` given to ``watching(signals:supervised:leaving:)``, after ``beforeLeaving(_:)``).
///
/// In a child of a ``ProcessSupervisor``, a signal sent to the whole process group (`timeout`,
/// `kill -<pgid>`, systemd) arrives twice: directly, and passed on by the supervisor a moment
/// later. That copy, the same signal within a second, is not a second request to stop.
public final class StopSignals: Sendable {
    private struct State {
        var signal: Int32?
        var firstAt: UInt64 = 0
        var action: (@Sendable () -> Void)?
        var beforeLeaving: (@Sendable () -> Void)?
    }
    private let state = Locked(State())
    private let supervised: Bool
    private let leaving: @Sendable (Int32) -> Void

    init(supervised: Bool, leaving: @escaping @Sendable (Int32) -> Void) {
        self.supervised = supervised
        self.leaving = leaving
    }

    /// The first stop signal that came, if one did.
    public var signal: Int32? { state.current.signal }

    /// New stop signals, watched until the watcher is cancelled (when the program is done).
    /// `supervised`: this process is a ``ProcessSupervisor``'s child (its copies of a signal are
    /// ignored). `leaving` is called with a second signal, after the ``beforeLeaving(_:)`` action;
    /// it should end the process (`_exit`): what is on disk must already be resumable.
    public static func watching(
        signals: [Int32] = [SIGINT, SIGTERM], supervised: Bool, leaving: @escaping @Sendable (Int32) -> Void
    ) -> (StopSignals, SignalWatcher) {
        let stops = StopSignals(supervised: supervised, leaving: leaving)
        return (stops, SignalWatcher(signals: signals) { signal in stops.received(signal, at: DispatchTime.now().uptimeNanoseconds) })
    }

    /// What stopping means from now on; run at once if a stop already came.
    public func onStop(_ action: @escaping @Sendable () -> Void) {
        let stopped = state.withLock { state -> Bool in
            state.action = action
            return state.signal != nil
        }
        if stopped { action() }
    }

    /// Runs `work` in a task while this thread waits for its result; a stop signal calls `stop`
    /// (by default, cancels the task).
    public func wait<Result: Sendable>(stop: (@Sendable () -> Void)? = nil, _ work: sending @escaping () async -> Result) -> Result? {
        let result = Locked<Result?>(nil)
        let finished = DispatchSemaphore(value: 0)
        let task = Task {
            result.set(await work())
            finished.signal()
        }
        onStop(stop ?? { task.cancel() })
        finished.wait()
        return result.current  // set before `finished` is signalled
    }

    /// What to do just before leaving at a second signal (end a progress line).
    public func beforeLeaving(_ action: @escaping @Sendable () -> Void) {
        state.withLock { $0.beforeLeaving = action }
    }

    /// `signal` came at `now` (nanoseconds of uptime): stop, ignore a supervisor's copy, or leave.
    func received(_ signal: Int32, at now: UInt64) {
        enum Step { case stop((@Sendable () -> Void)?), ignore, leave((@Sendable () -> Void)?) }
        let step = state.withLock { state -> Step in
            guard let earlier = state.signal else {
                state.signal = signal
                state.firstAt = now
                return .stop(state.action)
            }
            if supervised, earlier == signal, now - state.firstAt < 1_000_000_000 { return .ignore }
            return .leave(state.beforeLeaving)
        }
        switch step {
        case .stop(let action): action?()
        case .ignore: break
        case .leave(let beforeLeaving):
            beforeLeaving?()
            leaving(signal)
        }
    }
}
