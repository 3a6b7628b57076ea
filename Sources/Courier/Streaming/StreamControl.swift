import Foundation
internal import CourierSupport

/// The `cancel()` of a sequence that makes its own connections (``EventStream``,
/// ``JSONLineStream``): shared by the sequence and its iterator, so a `cancel()` from anywhere
/// reaches the connection in flight, the head being waited for, and a wait between reconnections.
///
/// Once cancelled it stays cancelled: a connection registered afterwards is cancelled at once, and
/// a wait returns at once.
final class StreamControl: Sendable {
    private struct State {
        var isCancelled = false
        /// The current connection's task, from its creation (before its head) to its end.
        var task: StreamTask?
        /// The wait between reconnections in progress, and its number (a late timer of an earlier
        /// wait must not end a later one).
        var waiter: (number: Int, continuation: CheckedContinuation<Void, Never>)?
        var waits = 0
    }
    private let state = Locked(State())

    /// Whether ``cancel()`` was called.
    var isCancelled: Bool { state.withLock { $0.isCancelled } }

    /// Cancels the connection in flight and ends a wait; every later connection is cancelled as
    /// it is made. Idempotent; callable from any thread.
    func cancel() {
        let (task, waiter) = state.withLock { state -> (StreamTask?, CheckedContinuation<Void, Never>?) in
            state.isCancelled = true
            defer {
                state.task = nil
                state.waiter = nil
            }
            return (state.task, state.waiter?.continuation)
        }
        task?.cancel()
        waiter?.resume()
    }

    /// A new connection's task, right after it is made; cancelled at once when the stream is.
    func connecting(_ task: StreamTask) {
        let cancelled = state.withLock { state -> Bool in
            if !state.isCancelled { state.task = task }
            return state.isCancelled
        }
        if cancelled { task.cancel() }
    }

    /// The connection is over.
    func disconnected() {
        state.withLock { $0.task = nil }
    }

    /// Waits `duration`, or less when the stream or the calling Swift task is cancelled, or when
    /// `endsEarly` calls the closure it is given (from any thread, at most once counts; a call
    /// after this wait is over ends nothing); `false` when cut short by a cancellation.
    func wait(_ duration: Duration, endsEarly: ((_ wake: @escaping @Sendable () -> Void) -> Void)? = nil) async -> Bool {
        let number = state.withLock { state -> Int in
            state.waits += 1
            return state.waits
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    // The Swift task's flag is set before its handler runs: checked under the
                    // lock, no cancellation falls between this and the handler.
                    if state.isCancelled || Task.isCancelled { return true }
                    state.waiter = (number, continuation)
                    return false
                }
                if now { return continuation.resume() }
                DispatchQueue.global().asyncAfter(deadline: .now() + max(0, duration.seconds)) { [weak self] in
                    self?.endWait(number)
                }
                // Called after the waiter is registered, so an early wake finds it.
                endsEarly? { [weak self] in self?.endWait(number) }
            }
        } onCancel: {
            endWait(number)
        }
        return !isCancelled && !Task.isCancelled
    }

    /// Ends wait `number` if it is still the one waiting.
    private func endWait(_ number: Int) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter, waiter.number == number else { return nil }
            state.waiter = nil
            return waiter.continuation
        }
        waiter?.resume()
    }
}
