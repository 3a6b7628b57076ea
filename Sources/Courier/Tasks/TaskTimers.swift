import Foundation
internal import CourierSupport

/// A task's timers — the whole-task deadline and a stream's wait timer — kept by the driver.
/// `TransferState` says when the wait timer must fire next (`TransferState.nextWaitCheck`) and
/// never touches a timer; `TransferTask.locked(_:)` moves it after unlocking, and the task's
/// completion ends both (Docs/Architecture.md, "The driver and its state").
final class TaskTimers: Sendable {
    private struct State {
        var deadline: (any DispatchSourceTimer)?
        var wait: (any DispatchSourceTimer)?
        /// The task completed: a timer handed over now is cancelled at once.
        var ended = false
    }
    private let state = Locked(State())

    /// Keeps `timer` as the deadline's; `false` (and the timer cancelled) when the task ended.
    func keepDeadline(_ timer: any DispatchSourceTimer) -> Bool {
        keep(timer) { $0.deadline = timer }
    }

    /// Keeps `timer` as the stream's wait timer; `false` (and the timer cancelled) when the task ended.
    func keepWait(_ timer: any DispatchSourceTimer) -> Bool {
        keep(timer) { $0.wait = timer }
    }

    /// The wait timer fires `delay` from now (none: nothing to move).
    func moveWait(after delay: Duration) {
        state.withLock { $0.wait }?.schedule(deadline: .now() + max(0, delay.seconds))
    }

    /// The task completed: both timers are cancelled, and any handed over later too.
    func end() {
        let timers = state.withLock { state -> [any DispatchSourceTimer] in
            state.ended = true
            defer { state.deadline = nil; state.wait = nil }
            return [state.deadline, state.wait].compactMap { $0 }
        }
        for timer in timers { timer.cancel() }
    }

    private func keep(_ timer: any DispatchSourceTimer, _ store: (inout State) -> Void) -> Bool {
        let kept = state.withLock { state -> Bool in
            guard !state.ended else { return false }
            store(&state)
            return true
        }
        if !kept { timer.cancel() }
        return kept
    }
}
