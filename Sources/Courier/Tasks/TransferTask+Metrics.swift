import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The timeline and the events of a transfer: marks made under the transfer's lock, events
/// queued from there (queuing only enqueues; monitors run on the manager's event queue).
extension TransferTask {
    /// The task's timeline so far.
    var metrics: TaskMetrics { locked { $0.metrics.metrics } }
}

extension TransferTask {
    func urlTaskLeftHostQueue(_ task: URLSessionTask) {
        locked { state in
            if state.phase.isCurrent(task) { state.metrics.leftHostQueue() }
        }
    }
}
