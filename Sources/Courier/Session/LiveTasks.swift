import Foundation
internal import CourierSupport

/// The manager's tasks that were resumed and have not completed: running, waiting for a slot, an
/// adapter or a retry, or paused. What ``SessionManager/allTasks`` shows and
/// ``SessionManager/cancelAllTasks(producingResumeData:queue:completion:)`` stops.
///
/// The URLSession task table (``TaskDelegateTable``) cannot answer this: a task between attempts,
/// waiting for its adapters or paused has no URLSession task at that moment.
final class LiveTasks: Sendable {
    private struct State {
        var tasks: [ObjectIdentifier: any LiveTask] = [:]
        /// Called once the task has ended, with the resume data its error carries.
        var endWaiters: [ObjectIdentifier: [@Sendable (ResumeData?) -> Void]] = [:]
    }
    private let state = Locked(State())

    /// Adds a task at its first `resume()`.
    func add(_ task: any LiveTask) {
        state.withLock { $0.tasks[ObjectIdentifier(task)] = task }
    }

    /// Removes a task that ended, and tells whoever waits for its end (after the lock).
    func remove(_ task: any LiveTask, resumeData: ResumeData?) {
        let waiters = state.withLock { state -> [@Sendable (ResumeData?) -> Void] in
            let key = ObjectIdentifier(task)
            state.tasks.removeValue(forKey: key)
            return state.endWaiters.removeValue(forKey: key) ?? []
        }
        for waiter in waiters { waiter(resumeData) }
    }

    /// The live tasks now, in no order.
    var snapshot: [any LiveTask] { state.withLock { Array($0.tasks.values) } }

    /// Calls `waiter` once `task` has ended: later, or now (with no resume data) when it is not live.
    func whenEnded(_ task: any LiveTask, _ waiter: @escaping @Sendable (ResumeData?) -> Void) {
        let live = state.withLock { state -> Bool in
            let key = ObjectIdentifier(task)
            guard state.tasks[key] != nil else { return false }
            state.endWaiters[key, default: []].append(waiter)
            return true
        }
        if !live { waiter(nil) }
    }
}

/// A task the manager counts as live: a transfer (``TransferTask``) or a WebSocket
/// (``WebSocketDriver``). What ``SessionManager/allTasks``, ``SessionManager/cancelAllTasks(producingResumeData:queue:completion:)``
/// and invalidation need of it.
protocol LiveTask: AnyObject, Sendable {
    /// The public handle while the task runs.
    var liveHandle: (any SessionTask)? { get }
    /// Cancels the task for `cancelAllTasks` (a download keeps its bytes with `producingResumeData`).
    func cancelForAll(producingResumeData: Bool)
    /// The manager's session was invalidated: end the task if nothing else will.
    func sessionWasInvalidated(cancelingTasks: Bool)
}
