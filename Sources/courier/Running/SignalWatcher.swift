import Foundation
import Courier
import CourierSupport

/// Turns SIGINT/SIGTERM into calls on a dispatch queue instead of killing the process, so a
/// download can stop cleanly (keep its partial file, write its record) before exiting.
///
/// The signals are ignored at the process level (`SIG_IGN`) and observed with dispatch signal
/// sources, like `courier serve` does: a C signal handler could do almost nothing safely.
/// Used from one thread (it holds dispatch sources, which are not `Sendable`).
final class SignalWatcher {
    private let sources: [any DispatchSourceSignal]

    /// Starts watching; `handler` runs on a private serial queue, once per delivered signal.
    init(signals: [Int32], handler: @escaping @Sendable (Int32) -> Void) {
        let queue = DispatchQueue(label: "courier.signals")
        sources = signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { handler(number) }
            source.resume()
            return source
        }
    }

    /// Stops calling the handler. The signals stay ignored: the process is about to exit, and
    /// a Ctrl-C now must not cut short the messages still to be printed.
    func cancel() {
        sources.forEach { $0.cancel() }
    }
}

/// SIGINT and SIGTERM for `courier get`: the first stops whatever runs — the transfer, or the
/// copy of a finished body to stdout — and a second one leaves at once.
///
/// Under the supervisor, a signal sent to the whole process group (`timeout`, `kill -<pgid>`,
/// systemd) arrives twice: directly, and passed on by the supervisor a moment later. That copy,
/// the same signal within a second, is not a second request to stop.
final class StopSignals: Sendable {
    private struct State {
        var signal: Int32?
        var firstAt: UInt64 = 0
        var action: (@Sendable () -> Void)?
        var beforeLeaving: (@Sendable () -> Void)?
    }
    private let state = Locked(State())
    private let supervised = ProcessInfo.processInfo.environment[GetSupervisor.childVariable] != nil

    /// The first stop signal that came, if one did.
    var signal: Int32? { state.current.signal }

    /// New stop signals, watched until the watcher is cancelled (when the command is done).
    static func watching() -> (StopSignals, SignalWatcher) {
        let stops = StopSignals()
        return (stops, SignalWatcher(signals: [SIGINT, SIGTERM]) { signal in stops.received(signal) })
    }

    /// What stopping means from now on; run at once if a stop already came.
    func onStop(_ action: @escaping @Sendable () -> Void) {
        let stopped = state.withLock { state -> Bool in
            state.action = action
            return state.signal != nil
        }
        if stopped { action() }
    }

    /// Runs `work` in a task while this thread waits for its result; a stop signal calls `stop`
    /// (by default, cancels the task).
    func wait<Result: Sendable>(stop: (@Sendable () -> Void)? = nil, _ work: sending @escaping () async -> Result) -> Result? {
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

    /// What to do just before leaving at a second signal (end the progress line).
    func beforeLeaving(_ action: @escaping @Sendable () -> Void) {
        state.withLock { $0.beforeLeaving = action }
    }

    private func received(_ signal: Int32) {
        let now = DispatchTime.now().uptimeNanoseconds
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
            // A second signal while stopping: leave at once. What is on disk stays resumable (the
            // record may lag by up to a second, which the library allows for).
            beforeLeaving?()
            ProgressPrinter.writeToStandardError("courier: interrupted again; stopping now\n")
            _exit(ExitCode.forSignal(signal))
        }
    }
}
