import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Owns the one `URLSession` of a manager and guards every use of it.
///
/// Creating a task on an invalidated URLSession is a `fatalError` on Linux (PLATFORM §4.3), so
/// creation and start are checked against `isInvalidated` under the same lock that invalidation
/// takes. Transfers paused by Courier have no URLSession task (and so no table entry); they are
/// parked here so that invalidation can finish them too.
final class SessionCore: Sendable {
    let session: URLSession
    let table: TaskDelegateTable

    private struct State {
        var isInvalidated = false
        var lastTaskIdentifier = 0
        var parked: [ObjectIdentifier: TransferTask] = [:]
    }
    private let state = Locked(State())

    /// Where Courier calls into URLSession from outside its callbacks: a cancel decided inside a
    /// callback, a continuation after the disk caught up, a retry after its delay, a writer's
    /// failure. Those calls `sync` onto FoundationNetworking's work queue and can wait there (a
    /// `cancel()` during a fast transfer took up to 0.4 s). Serial, so on libdispatch's
    /// overcommit root, never the global pool: that pool is only as wide as the CPUs and runs the
    /// manager's callback queue, which a waiting call would hold up.
    static let sideQueue = DispatchQueue(label: "courier.urlsession-calls")

    /// `callbackQueue`: a serial queue the delegate callbacks run on, so that work Courier sends
    /// to that same queue (the manager's own completion queue) runs next on the same thread
    /// instead of waking another one — about one thread hand-off less per request.
    init(configuration: URLSessionConfiguration, router: SessionDelegate, label: String, callbackQueue: DispatchQueue?) {
        // A serial delegate queue: callbacks for one task must never overlap (PLATFORM §2.9).
        // A completion queue the caller chose may be concurrent, so it never runs them.
        let serial = callbackQueue ?? DispatchQueue(label: "\(label).delegate", target: .global())
        let delegateQueue = DelegateQueue(target: serial, name: "\(label).delegate")
        self.table = router.table
        self.session = URLSession(configuration: configuration, delegate: router, delegateQueue: delegateQueue)
    }

    var isInvalidated: Bool { state.withLock { $0.isInvalidated } }

    /// A new task identifier: 1, 2, 3… for the life of the manager. Courier's own, because a
    /// task may run several URLSession tasks (pause/resume, retries, redirects it re-issues).
    func nextTaskIdentifier() -> Int {
        state.withLock { state in
            state.lastTaskIdentifier += 1
            return state.lastTaskIdentifier
        }
    }

    /// Creates a URLSession task, or returns `nil` when the session is invalidated.
    func makeTask(_ make: (URLSession) -> URLSessionTask) -> URLSessionTask? {
        state.withLock { state in state.isInvalidated ? nil : make(session) }
    }

    /// Registers `delegate` for `task` (whose request goes to `origin`, the per-host cap's key)
    /// and resumes it; `false` when the session is invalidated.
    func start(_ task: URLSessionTask, origin: String, delegate: any TaskDelegate) -> Bool {
        let admission = state.withLock { state -> Bool? in
            guard !state.isInvalidated else { return nil }
            // Registered before `resume()` so no callback can miss its delegate.
            return table.admit(task, origin: origin, delegate: delegate)
        }
        guard let startsNow = admission else { return false }
        if startsNow { task.resume() }
        return true
    }

    /// Remembers a paused transfer; `false` when the session is already invalidated.
    func park(_ transfer: TransferTask) -> Bool {
        state.withLock { state in
            guard !state.isInvalidated else { return false }
            state.parked[ObjectIdentifier(transfer)] = transfer
            return true
        }
    }

    func unpark(_ transfer: TransferTask) {
        _ = state.withLock { $0.parked.removeValue(forKey: ObjectIdentifier(transfer)) }
    }

    /// Marks the session invalid and invalidates the URLSession. Returns the parked transfers,
    /// which the caller fails outside the lock. Only the first call does anything.
    func invalidate(cancelingTasks: Bool) -> [TransferTask] {
        let parked = state.withLock { state -> [TransferTask]? in
            guard !state.isInvalidated else { return nil }
            state.isInvalidated = true
            defer { state.parked = [:] }
            return Array(state.parked.values)
        }
        guard let parked else { return [] }
        // Tasks waiting behind the per-host cap can never start now: cancel them, which still
        // reports their completion (as `sessionInvalidated`).
        for waiting in table.closeAndDrainWaiting() { waiting.cancel() }
        if cancelingTasks { session.invalidateAndCancel() } else { session.finishTasksAndInvalidate() }
        return parked
    }
}
