import Foundation

/// A queue on a shared store (``DownloadQueue/init(store:directory:manager:configuration:)``):
/// its lease engine is a ``DownloadQueueWorker``, whose rules are the fleet's in one place; the
/// queue keeps its API and its observers.
extension DownloadQueue {
    /// The worker settings of a queue's configuration: its caps, policy and refresh hook, and its
    /// ``Configuration/leasing``.
    static func workerConfiguration(_ configuration: Configuration) -> DownloadQueueWorker.Configuration {
        var worker = DownloadQueueWorker.Configuration()
        worker.name = configuration.leasing.workerName
        worker.leaseDuration = configuration.leasing.leaseDuration
        worker.pollInterval = configuration.leasing.pollInterval
        worker.maximumRunning = configuration.maximumRunning
        worker.maximumRunningPerHost = configuration.maximumRunningPerHost
        worker.policy = configuration.policy
        worker.refresher = configuration.refresher
        worker.refreshesBeforeEachAttempt = configuration.refreshesBeforeEachAttempt
        worker.refreshStatusCodes = configuration.refreshStatusCodes
        worker.maximumRefreshes = configuration.maximumRefreshes
        return worker
    }

    /// Hands a change to the streams (in order) and to the observers (on the callback queue).
    func deliver(_ change: Change) {
        let (continuations, observers) = state.withLock { (Array($0.continuations.values), Array($0.observers.values)) }
        for continuation in continuations { continuation.yield(change) }
        if !observers.isEmpty {
            callbackQueue.async { for observer in observers { observer(change) } }
        }
    }

    /// Throws ``CourierError/Code-swift.struct/invalidRequest`` for `operation` on a shared store.
    /// The store protocol has no state a request could put an item in that every process honours
    /// (a pause from one process would have to stop another's download): Docs/DownloadQueue.md.
    func refuseOnSharedStore(_ operation: String) throws(CourierError) {
        guard shared != nil else { return }
        throw CourierError(
            code: .invalidRequest,
            message: "\(operation) is not offered by a download queue on a shared store (its items are the fleet's, not this process's)")
    }

    /// Stops the worker (its running items go back to the store, queued, with their progress),
    /// then ends the change streams.
    func stopShared(_ worker: DownloadQueueWorker) async {
        await worker.stop()
        let continuations = state.withLock { state -> [AsyncStream<Change>.Continuation] in
            state.closed = true
            defer { state.continuations = [:] }
            return Array(state.continuations.values)
        }
        for continuation in continuations { continuation.finish() }
    }
}
