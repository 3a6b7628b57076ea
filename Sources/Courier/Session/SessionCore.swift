import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
internal import CourierSupport

/// Owns the one `URLSession` of a manager and guards every use of it.
///
/// Creating a task on an invalidated URLSession is a `fatalError` on Linux (Docs/Platform.md §4.3), so
/// creation and start are checked against `isInvalidated`, which only the call queue sets, on
/// the call queue. Transfers between attempts or paused have no URLSession task (and so no table
/// entry); invalidation finishes them through ``live``, which holds every resumed, unfinished task.
///
/// **Every call into URLSession runs on ``callQueue``**: creating and resuming tasks, starting
/// the next task a per-host slot frees, cancels decided inside a callback, continuations and
/// retries. FoundationNetworking's `dataTask(with:)` and `resume()` each `sync` onto its one
/// work queue (a `cancel()` can wait there up to 0.4 s), which is busy with libcurl whenever
/// transfers run. Waiting on it from the caller's thread or the manager's callback queue
/// stalled both: 16 requests in flight ran about 1.4 times faster once those calls moved here.
final class SessionCore: Sendable {
    let session: URLSession
    let table: TaskDelegateTable
    /// The manager's resumed, unfinished tasks (LiveTasks.swift).
    let live = LiveTasks()
    /// The manager's serial queue for calls into URLSession. On libdispatch's overcommit root,
    /// never the global pool: that pool is only as wide as the CPUs and runs the manager's
    /// callback queue, which a waiting call would hold up.
    let callQueue: DispatchQueue
    /// The manager's TLS policies: every request and redirect is stamped through it (TLSEnforcer.swift).
    let tls: SessionTLS
    /// The sessions a split download's further connections run in (LaneSessions.swift).
    let lanes: LaneSessions

    private struct State {
        /// ``invalidate(cancelingTasks:)`` was called: ``isInvalidated`` answers `true`.
        var isClosed = false
        /// The URLSession itself is invalidated (on ``callQueue``, after every start queued before).
        var isInvalidated = false
        var lastTaskIdentifier = 0
    }
    private let state = Locked(State())

    /// `callbackQueue`: a serial queue the delegate callbacks run on, so that work Courier sends
    /// to that same queue (the manager's own completion queue) runs next on the same thread
    /// instead of waking another one — about one thread hand-off less per request.
    init(
        configuration: URLSessionConfiguration, router: SessionDelegate, label: String, callbackQueue: DispatchQueue?,
        callQueue: DispatchQueue, tls: TLSEnforcer = TLSEnforcer(TLSPolicies()), headerDiet: Bool = false
    ) {
        self.callQueue = callQueue
        // A serial delegate queue: callbacks for one task must never overlap (Docs/Platform.md §2.9).
        // A completion queue the caller chose may be concurrent, so it never runs them.
        let serial = callbackQueue ?? DispatchQueue(label: "\(label).delegate", target: .global())
        let delegateQueue = DelegateQueue(target: serial, name: "\(label).delegate")
        self.table = router.table
        let (session, bound) = tls.makeSession {
            URLSession(configuration: configuration, delegate: router, delegateQueue: delegateQueue)
        }
        self.session = session
        // FoundationNetworking with a URLCache stores the head it was given: such a session's
        // requests get every line (Docs/Platform.md §6.18).
        self.tls = SessionTLS(
            tls, isBound: bound, headerDiet: headerDiet && configuration.urlCache == nil && HeadDiet.isSupported)
        self.lanes = LaneSessions(configuration: configuration, label: label, callQueue: callQueue, tls: tls)
    }

    /// Whether the manager was invalidated (the URLSession follows on ``callQueue``).
    var isInvalidated: Bool { state.withLock { $0.isClosed } }

    /// A new task identifier: 1, 2, 3… for the life of the manager. Courier's own, because a
    /// task may run several URLSession tasks (pause/resume, retries, redirects it re-issues).
    func nextTaskIdentifier() -> Int {
        state.withLock { state in
            state.lastTaskIdentifier += 1
            return state.lastTaskIdentifier
        }
    }

    /// Creates a URLSession task, or returns `nil` when the session is invalidated. On ``callQueue``
    /// only, where the URLSession is invalidated too: no invalidation can come between the check
    /// and the creation, so the lock is not held while `dataTask(with:)` waits for URLSession.
    func makeTask(_ make: (URLSession) -> URLSessionTask) -> URLSessionTask? {
        guard !state.withLock({ $0.isInvalidated }) else { return nil }
        return make(session)
    }

    /// Registers `delegate` for `task` (whose request goes to `origin`, the per-host cap's key)
    /// and resumes it; `false` when the session is invalidated. On ``callQueue``.
    func start(_ task: URLSessionTask, origin: String, delegate: any TaskDelegate) -> Bool {
        let admission = state.withLock { state -> Bool? in
            guard !state.isInvalidated else {
                table.dropStarting()
                return nil
            }
            // Registered before `resume()` so no callback can miss its delegate.
            return table.admit(task, origin: origin, delegate: delegate)
        }
        guard let startsNow = admission else { return false }
        if startsNow { task.resume() }
        return true
    }

    /// Cancels `task` from ``callQueue``; returns at once. `cancel()` waits for FoundationNetworking's
    /// work queue, which during a fast transfer took up to 0.4 s here and is held back while the
    /// delegate queue is behind (``DelegateQueue``): a cancel on the delegate queue would then wait
    /// for the very callbacks it holds up; inside `needNewBodyStream`, which runs on that work
    /// queue, it would trap. Whoever decides a cancel records why first, so the callbacks that
    /// still arrive for the task are ignored or ended by that decision.
    func cancel(_ task: URLSessionTask) {
        // Not while its redirect is being answered (TaskDelegateTable.RedirectGuard): the router
        // sends the cancel after the answer.
        callQueue.async { [table] in
            if table.mayCancel(task.taskIdentifier) { task.cancel() }
        }
    }

    /// Whether a transfer may pause: `false` once the URLSession is invalidated (nothing could
    /// continue it).
    var mayPause: Bool { state.withLock { !$0.isInvalidated } }

    /// Invalidates the session; only the first call does anything. ``isInvalidated`` is `true` at
    /// once; the URLSession is invalidated on ``callQueue`` after the starts queued there before
    /// it, so a task resumed before this call still runs, even one waiting behind the per-host
    /// cap (with `cancelingTasks`, it is then cancelled like the others). Paused transfers, and
    /// with `cancelingTasks` every live one (also one waiting for its adapters or a retry), fail
    /// with `sessionInvalidated`.
    func invalidate(cancelingTasks: Bool) {
        let first = state.withLock { state -> Bool in
            defer { state.isClosed = true }
            return !state.isClosed
        }
        guard first else { return }
        lanes.invalidate(cancelingTasks: cancelingTasks)
        callQueue.async { [self] in
            state.withLock { $0.isInvalidated = true }
            if cancelingTasks {
                // Tasks waiting behind the per-host cap must not start now: cancel them, which
                // still reports their completion (as `sessionInvalidated`).
                for waiting in table.closeAndDrainWaiting() { waiting.cancel() }
                session.invalidateAndCancel()
            } else {
                // Tasks waiting behind the cap are URLSession tasks already: they still start as
                // slots free, and URLSession ends the session after the last one.
                session.finishTasksAndInvalidate()
            }
            // Tasks with no URLSession task now: URLSession's cancel cannot reach them. Without
            // `cancelingTasks`, only the paused (nothing can resume them); those between attempts
            // find the session invalidated when they start their next one. A running attempt ends
            // through URLSession, as it always did (a download keeps its record, as after a crash).
            // WebSockets have no URLSession task at all: with `cancelingTasks` they close.
            for task in live.snapshot { task.sessionWasInvalidated(cancelingTasks: cancelingTasks) }
        }
    }
}
