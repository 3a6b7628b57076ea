import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
internal import CourierSupport

/// The per-task delegate table: URLSession task identifier → the Courier object driving that
/// transfer, plus the per-host admission queue. One lock around one state value; the router
/// only looks things up here.
///
/// Identifiers restart at 1 in every URLSession (Docs/Platform.md §2.8), so a table belongs to exactly
/// one session. Entries are added just before a task is resumed (or queued) and removed when
/// URLSession reports the task complete, so the table is empty whenever nothing is running.
///
/// **The per-host cap.** With five or more transfers in flight, libcurl inside URLSession closes
/// and reopens connections because FoundationNetworking never sizes libcurl's connection cache
/// (Docs/Platform.md §6: 32 to 474 new connections per 5,200 requests at 16 in flight). With at most
/// `cap` tasks running per host, the rest wait here in order and start as running ones finish,
/// and connections are reused.
final class TaskDelegateTable: Sendable {
    private struct Entry {
        let delegate: any TaskDelegate
        let host: String
        var isRunning: Bool
        /// Where the task stands between a redirect question and a cancel (``RedirectGuard``).
        var redirectGuard = RedirectGuard()
    }

    /// A cancel and a redirect answer must not cross: FoundationNetworking traps ("Received
    /// callback for HTTP redirection, but we're not waiting for it") when the answer arrives
    /// after a cancel changed its state (Docs/Platform.md §4.4). So a cancel asked for while the
    /// redirect is decided waits until the answer is given, and a redirect asked about after the
    /// cancel went out is not answered (the cancel ends the task).
    struct RedirectGuard: Sendable, Equatable {
        /// The redirect is being decided; its answer is not given yet.
        var isDeciding = false
        /// `cancel()` went to URLSession.
        var cancelSent = false
        /// A cancel waits for the redirect answer.
        var cancelWaits = false

        /// A cancel is asked for: `true` to send it now, `false` when it waits for the answer.
        mutating func cancel() -> Bool {
            guard !isDeciding else {
                cancelWaits = true
                return false
            }
            cancelSent = true
            return true
        }

        /// A redirect is asked about: `true` to decide and answer it, `false` when the cancel
        /// already went out (then it must not be answered).
        mutating func beginRedirect() -> Bool {
            guard !cancelSent else { return false }
            isDeciding = true
            return true
        }

        /// The answer was given: `true` when a cancel waited for it and must go out now.
        mutating func endRedirect() -> Bool {
            isDeciding = false
            guard cancelWaits else { return false }
            cancelWaits = false
            cancelSent = true
            return true
        }
    }

    private struct State {
        var entries: [Int: Entry] = [:]
        var running: [String: Int] = [:]
        var waiting: [String: [(identifier: Int, task: URLSessionTask)]] = [:]
        /// Attempts handed to the call queue and not yet admitted or dropped.
        var starting = 0
        var isClosed = false

        /// Removes and returns the first task waiting for `host`, in place (one hash of the host,
        /// no copy of its queue: this runs once per finished request).
        mutating func takeWaiting(for host: String) -> (identifier: Int, task: URLSessionTask)? {
            guard let index = waiting.index(forKey: host), !waiting.values[index].isEmpty else { return nil }
            let next = waiting.values[index].removeFirst()
            if waiting.values[index].isEmpty { waiting.remove(at: index) }
            return next
        }
    }

    private let state = Locked(State())
    /// The most tasks running at once per host; `nil` for no limit.
    let cap: Int?

    init(cap: Int? = nil) {
        self.cap = cap.map { max(1, $0) }
    }

    /// Counts an attempt handed to the call queue, until ``admit(_:origin:delegate:)`` or
    /// ``dropStarting()`` accounts for it: a resumed task is always counted as running or queued.
    func noteStarting() {
        state.withLock { $0.starting += 1 }
    }

    /// An attempt noted by ``noteStarting()`` will not be admitted (cancelled, paused, or the
    /// session is invalidated).
    func dropStarting() {
        state.withLock { $0.starting -= 1 }
    }

    /// Registers `task`, an attempt noted by ``noteStarting()``. Returns `true` when the caller
    /// should resume it now, `false` when it waits for a running task of the same host to finish
    /// (``remove(_:)`` then hands it back). `origin` (scheme, host and port) is passed in rather
    /// than read from `task`: reading `originalRequest` bridges a whole request on Linux.
    func admit(_ task: URLSessionTask, origin host: String, delegate: any TaskDelegate) -> Bool {
        return state.withLock { state in
            state.starting -= 1
            let runs = cap.map { (state.running[host] ?? 0) < $0 } ?? true
            state.entries[task.taskIdentifier] = Entry(delegate: delegate, host: host, isRunning: runs)
            if runs {
                state.running[host, default: 0] += 1
            } else {
                state.waiting[host, default: []].append((task.taskIdentifier, task))
            }
            return runs
        }
    }

    func delegate(for taskIdentifier: Int) -> (any TaskDelegate)? {
        state.withLock { $0.entries[taskIdentifier]?.delegate }
    }

    /// Whether a cancel of the task may go to URLSession now (``RedirectGuard/cancel()``); a task
    /// that is not in the table (not admitted yet, or finished) is cancelled now.
    func mayCancel(_ taskIdentifier: Int) -> Bool {
        state.withLock { $0.entries[taskIdentifier]?.redirectGuard.cancel() ?? true }
    }

    /// Whether a redirect of the task is to be decided and answered (``RedirectGuard/beginRedirect()``).
    func beginRedirect(_ taskIdentifier: Int) -> Bool {
        state.withLock { $0.entries[taskIdentifier]?.redirectGuard.beginRedirect() ?? true }
    }

    /// The redirect was answered: `true` when a cancel waited and must be sent now.
    func endRedirect(_ taskIdentifier: Int) -> Bool {
        state.withLock { $0.entries[taskIdentifier]?.redirectGuard.endRedirect() ?? false }
    }

    /// Removes a finished task; returns its delegate and, when it freed a slot, the waiting task
    /// to resume next (the caller resumes it, outside this lock).
    func remove(_ taskIdentifier: Int) -> (delegate: (any TaskDelegate)?, next: URLSessionTask?) {
        state.withLock { state in
            guard let entry = state.entries.removeValue(forKey: taskIdentifier) else { return (nil, nil) }
            guard entry.isRunning else {
                // Cancelled while waiting: it never ran.
                state.waiting[entry.host]?.removeAll { $0.identifier == taskIdentifier }
                return (entry.delegate, nil)
            }
            // The freed slot goes to the host's next waiting task, if any: the running count stays.
            if !state.isClosed, let next = state.takeWaiting(for: entry.host) {
                state.entries[next.identifier]?.isRunning = true
                return (entry.delegate, next.task)
            }
            state.running[entry.host, default: 1] -= 1
            return (entry.delegate, nil)
        }
    }

    /// Stops admitting waiting tasks and returns them, for invalidation to cancel (a cancelled
    /// task that never ran still reports its completion, which removes it from the table).
    func closeAndDrainWaiting() -> [URLSessionTask] {
        state.withLock { state in
            state.isClosed = true
            defer { state.waiting = [:] }
            return state.waiting.values.flatMap { $0.map(\.task) }
        }
    }

    /// Tasks running in URLSession now.
    var runningCount: Int { state.withLock { $0.running.values.reduce(0, +) } }
    /// Resumed tasks not running yet: waiting behind the per-host cap, or about to start.
    var waitingCount: Int { state.withLock { $0.waiting.values.reduce($0.starting) { $0 + $1.count } } }
}
