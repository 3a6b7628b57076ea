import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
internal import CourierSupport

/// Every task at once: a snapshot of the live tasks, and cancelling them all.
extension SessionManager {
    /// The manager's live tasks, by ``SessionTask/taskIdentifier``: every task resumed and not yet
    /// completed, whether it is running, waiting for a slot under
    /// ``Configuration/maximumRunningTasksPerHost``, waiting for its adapters or a retry, or
    /// paused. A task that was created and never resumed is not live. (Darwin's
    /// `URLSession.allTasks`; Alamofire's `withAllRequests`.)
    ///
    /// A snapshot: tasks start and end meanwhile. Each handle answers its own state, requests,
    /// response and progress, and can be cancelled.
    public var allTasks: [any SessionTask] {
        core.live.snapshot.compactMap(\.liveHandle).sorted { $0.taskIdentifier < $1.taskIdentifier }
    }

    /// Cancels every live task (see ``allTasks``); each completes once, as by its own `cancel()`,
    /// with ``CourierError/Code-swift.struct/cancelled``. The manager stays usable: tasks made
    /// afterwards run as usual. (Alamofire's `cancelAllRequests`.)
    ///
    /// With `producingResumeData`, each download keeps what it has on disk, as
    /// ``CourierTask/cancel(producingResumeData:)`` does: its error carries the resume data.
    ///
    /// `completion` runs once on `queue` when every task cancelled has ended, with the resume data
    /// of each download that produced some, by task identifier. After it, none of those tasks
    /// writes or delivers anything more (their own completions may still be on their way).
    public func cancelAllTasks(
        producingResumeData: Bool = false, queue: CallbackQueue = .default,
        completion: (@Sendable (_ resumeData: [Int: ResumeData]) -> Void)? = nil
    ) {
        let tasks = core.live.snapshot
        let group = DispatchGroup()
        let collected = Locked<[Int: ResumeData]>([:])
        for task in tasks {
            guard let handle = task.liveHandle else { continue }
            let identifier = handle.taskIdentifier
            group.enter()
            core.live.whenEnded(task) { resumeData in
                if let resumeData { collected.withLock { $0[identifier] = resumeData } }
                group.leave()
            }
            task.cancelForAll(producingResumeData: producingResumeData)
        }
        guard let completion else { return }
        let delivery = settings(for: queue).delivery
        group.notify(queue: .global()) {
            let resumeData = collected.withLock { $0 }
            delivery.run { completion(resumeData) }
        }
    }

    /// Cancels every live task and returns once they have all ended; see
    /// ``cancelAllTasks(producingResumeData:queue:completion:)``. Returns the resume data of each
    /// download that produced some, by task identifier.
    @discardableResult
    public func cancelAllTasks(producingResumeData: Bool = false) async -> [Int: ResumeData] {
        await withCheckedContinuation { continuation in
            cancelAllTasks(producingResumeData: producingResumeData, queue: .immediate) { continuation.resume(returning: $0) }
        }
    }
}

extension TransferTask: LiveTask {
    /// The public handle while the task runs (held strongly from `resume()` to completion).
    var handle: (any SessionTask)? { state.withLock { $0.retainedHandle ?? $0.handle } }

    var liveHandle: (any SessionTask)? { handle }

    func cancelForAll(producingResumeData: Bool) {
        guard let handle else { return }
        if producingResumeData, isDownload {
            cancelProducingResumeData(handle: handle) { _ in }
        } else {
            cancel(handle: handle)
        }
    }

    func sessionWasInvalidated(cancelingTasks: Bool) {
        // A running attempt ends through URLSession; only a task out of its reach is ended here.
        guard isOutOfURLSessionsReach(pausedOnly: !cancelingTasks) else { return }
        stop(with: .sessionInvalidated(url: originalRequest.url), keepingBytes: false)
    }

    /// Whether the body goes to a file.
    var isDownload: Bool { state.withLock { $0.file != nil } }

    /// Whether no URLSession task runs the current attempt (so URLSession's cancel cannot reach
    /// the task); with `pausedOnly`, only when `suspend()` paused it. Read in one look at the phase.
    func isOutOfURLSessionsReach(pausedOnly: Bool) -> Bool {
        state.withLock { state in
            state.phase.attempt == nil && (!pausedOnly || state.phase.state == .suspended)
        }
    }
}
