import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The timeline and the events of a transfer: marks made under the transfer's lock, events
/// queued from there (queuing only enqueues; monitors run on the manager's event queue).
extension TransferTask {
    /// Queues `event` for this task's monitors; builds nothing when nobody listens.
    func emit(_ event: @autoclosure () -> TaskEvent, _ state: State) {
        guard events.isActive else { return }
        events.emit(event(), for: state.retainedHandle ?? state.handle)
    }

    /// Opens the timeline's attempt for `request`, which is about to go to URLSession.
    func noteAttempt(_ request: URLRequest, _ state: inout State) {
        let offset = state.rangeOffset
        let attempt = state.metrics.beginAttempt(request, continuesFrom: offset)
        emit(.attemptStarted(TaskAttemptEvent(number: attempt.number, kind: attempt.kind, request: request)), state)
        if let offset {
            emit(.continuing(TaskContinuationEvent(offset: offset, validator: state.validator, kind: attempt.kind)), state)
        }
    }

    /// A back-pressure pause begins (the disk or the consumer fell behind).
    func notePause(_ reason: TaskMetrics.Pause.Reason, _ state: inout State) {
        state.metrics.endAttempt(.backPressure)
        state.metrics.pause(reason, bytesHeld: state.received)
        state.metrics.nextKind = .continuation
        emit(.paused(TaskPauseEvent(reason: reason, bytesHeld: state.received, duration: nil)), state)
    }

    /// A back-pressure pause ends: the next attempt continues the body.
    func notePauseEnded(_ reason: TaskMetrics.Pause.Reason, _ state: inout State) {
        let duration = state.metrics.endPause()
        state.metrics.nextKind = .continuation
        emit(.pauseEnded(TaskPauseEvent(reason: reason, bytesHeld: state.received, duration: duration)), state)
    }

    /// A retry is decided after `error`.
    func noteRetry(_ error: CourierError, delay: Duration, _ state: inout State) {
        state.metrics.endAttempt(.failed, error: error)
        state.metrics.retry(error, delay: delay)
    }

    /// The task's timeline so far.
    var metrics: TaskMetrics { state.withLock { $0.metrics.metrics } }
}

extension TransferTask {
    func urlTaskLeftHostQueue(_ task: URLSessionTask) {
        state.withLock { state in
            if state.phase.isCurrent(task) { state.metrics.leftHostQueue() }
        }
    }
}
