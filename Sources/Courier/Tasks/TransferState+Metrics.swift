import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The timeline and the events of a transfer, marked on its state (events go to ``TransferState/outbox``).
extension TransferState {
    /// Opens the timeline's attempt for `request`, which is about to go to URLSession; what the
    /// last attempt's answer was is forgotten.
    mutating func noteAttempt(_ request: URLRequest) {
        brokenAnswer = nil
        let offset = rangeOffset
        let owner = metrics.nextOwner
        let attempt = metrics.beginAttempt(request, continuesFrom: offset)
        let tls = context.tls
        emit(
            .attemptStarted(
                TaskAttemptEvent(
                    number: attempt.number, kind: attempt.kind, request: request, tlsPolicy: tls.policy(for: request))))
        if let offset {
            let validator = self.validator
            emit(.continuing(TaskContinuationEvent(offset: offset, validator: validator, kind: attempt.kind, owner: owner)))
        }
    }

    /// A back-pressure pause begins (the disk or the consumer fell behind).
    mutating func notePause(_ reason: TaskMetrics.Pause.Reason) {
        metrics.endAttempt(.backPressure)
        metrics.pause(reason, bytesHeld: received)
        metrics.nextKind = .continuation
        metrics.nextOwner = .pause
        let held = received
        emit(.paused(TaskPauseEvent(reason: reason, bytesHeld: held, duration: nil)))
    }

    /// A back-pressure pause ends: the next attempt continues the body.
    mutating func notePauseEnded(_ reason: TaskMetrics.Pause.Reason) {
        let duration = metrics.endPause()
        metrics.nextKind = .continuation
        metrics.nextOwner = .pause
        let held = received
        emit(.pauseEnded(TaskPauseEvent(reason: reason, bytesHeld: held, duration: duration)))
    }

    /// A retry `owner` decided is due after `error`.
    mutating func noteRetry(_ error: CourierError, delay: Duration, owner: RetryOwner) {
        metrics.endAttempt(.failed, error: error)
        metrics.retry(error, delay: delay)
        metrics.nextOwner = owner
    }

    func progressSnapshot(_ direction: ProgressDirection) -> Progress {
        let completed = direction == .upload ? sent : received
        let total = direction == .upload ? expectedToSend : expectedToReceive
        let progress = Progress(parent: nil, userInfo: nil)
        if let total, total >= 0 {
            progress.totalUnitCount = total
            progress.completedUnitCount = min(completed, total)
        } else {
            progress.totalUnitCount = -1
            progress.completedUnitCount = completed
        }
        return progress
    }

    /// The observers to call and the snapshot to give them, when a throttled update is due.
    mutating func dueProgress(_ direction: ProgressDirection) -> ([ProgressObserver], Progress)? {
        guard !observers.isEmpty else { return nil }
        if let last = lastProgressDelivery[direction], now - last < context.progressInterval { return nil }
        let observers = observers.filter { $0.direction == direction }
        guard !observers.isEmpty else { return nil }
        lastProgressDelivery[direction] = now
        return (observers, progressSnapshot(direction))
    }
}
