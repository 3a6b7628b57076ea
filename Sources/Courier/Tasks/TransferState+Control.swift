import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The public operations and the stops from outside an attempt, decided on the transfer's state:
/// resume, suspend and cancel requested; a stop (a write failed, the deadline passed); a failure
/// that ends the task at once. The phase decides what each means now (TaskPhaseMachine.swift); these
/// add what the body keeps and what the task ends with. The driver acts on the answer after
/// unlocking (TransferTask.swift).
extension TransferState {
    /// What a resume leads to.
    enum ResumeStep {
        /// Nothing to do (already running, completed).
        case none
        /// A stream whose consumer has bytes no later attempt could continue: it fails instead.
        case cannotContinue
        /// Start an attempt with this request; `first`: the task's first resume (arm its clocks).
        case start(URLRequest, first: Bool)
    }

    /// `resume()` on `handle`: the first attempt with `initialRequest`, or after `suspend()` the
    /// rest of the body with `Range` when that is safe, otherwise the whole request again.
    mutating func resumeRequested(handle: any SessionTask, initialRequest: URLRequest) -> ResumeStep {
        let action = phase.resumeRequested()
        guard action != .none else {
            return phase.state == .running && streamCannotContinue() ? .cannotContinue : .none
        }
        retainedHandle = handle
        let isFirstResume = action == .startFirstAttempt
        if !isFirstResume, streamCannotContinue() { return phase.state == .running ? .cannotContinue : .none }
        metrics.resumed()
        metrics.endPause()
        guard !isFirstResume else { return .start(initialRequest, first: true) }
        let request = restartRequest()
        metrics.nextKind = rangeOffset != nil ? .continuation : .restart
        return .start(request, first: false)
    }

    /// `suspend()` on `handle`: `nil` when it means nothing now; otherwise the attempt to stop
    /// (`.some(nil)` when none runs). A download's record is brought up to date first.
    mutating func suspendRequested(handle: any SessionTask) -> URLSessionTask?? {
        guard case .suspended(let stopping) = phase.suspendRequested() else { return nil }
        if let plan = file?.plan { writeRecord(plan, force: false) }
        metrics.endAttempt(.suspended)
        metrics.endPause()
        metrics.pause(.suspended, bytesHeld: received)
        if context.emitsEvents { outbox.append((.suspended, handle)) }
        return .some(stopping)
    }

    /// What a cancel or a stop leads to.
    enum StopStep {
        case none
        /// Cancel this attempt; its completion finishes the task.
        case cancel(URLSessionTask)
        /// No attempt runs: the task finishes now.
        case finish(Completion)
    }

    /// `cancel()`: an attempt that runs is cancelled (its completion finishes the task); between
    /// attempts the task finishes now, a download keeping its bytes when resume data was asked for.
    mutating func cancelRequested() -> StopStep {
        switch phase.cancelRequested() {
        // An attempt being launched is cancelled by its launcher, whose completion finishes the task.
        case .none, .leaveToLauncher: return .none
        case .cancelAttempt(let task): return .cancel(task)
        case .finishNow:
            if let plan = file?.plan { return .finish(cancelledDownload(plan)) }
            return .finish(complete(error: .cancelled(url: context.originalRequest.url)))
        }
    }

    /// A stop with `error` from outside the callbacks, once: a running attempt is cancelled and its
    /// completion reports `error`; between attempts the task finishes now. With `keepingBytes`, a
    /// download keeps what it holds for resuming. Once the task is cancelling or complete, nothing.
    mutating func stopRequested(_ error: CourierError, keepingBytes: Bool) -> StopStep {
        guard failure == nil else { return .none }
        let wasRunning = phase.state == .running
        let action = phase.stopRequested()
        if wasRunning, action != .none {
            // What the attempt's completion (or the launcher) reports.
            failure = error
            file?.keepsBytes = keepingBytes
        }
        switch action {
        // A task still being launched is not registered yet: its launcher cancels it.
        case .none, .leaveToLauncher: return .none
        case .cancelAttempt(let current): return .cancel(current)
        case .finishNow: break
        }
        if keepingBytes, let plan = file?.plan { return .finish(finishFailedDownload(error, plan)) }
        return .finish(complete(error: error))
    }

    /// The task ends now with `error`, whatever it is doing (`nil` once it has completed). With
    /// `keepingBytes`, a download keeps what it holds (an earlier run's bytes) for resuming.
    mutating func finishRequested(_ error: CourierError, handle: (any SessionTask)?, keepingBytes: Bool) -> Completion? {
        if handle != nil, retainedHandle == nil { retainedHandle = handle }
        guard phase.finishRequested() else { return nil }
        if keepingBytes, let plan = file?.plan { return finishFailedDownload(error, plan) }
        return complete(error: error)
    }
}
