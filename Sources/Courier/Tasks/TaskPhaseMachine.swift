/// Where a transfer is between its creation and its single completion, as a pure value.
///
/// `TransferTask` keeps one under its lock. Each event is named for what just happened (a
/// public operation was called, an attempt was launched, an attempt stopped, a retry delay
/// elapsed) and returns what the task must do about it; the task does it after unlocking. The
/// phases carry their own data, so no flag can contradict another: the URLSession task of the
/// current attempt exists only while one is launching, running or being cancelled, and the
/// failure the retriers are deciding about exists only while the task waits for them.
///
/// `Attempt` is the URLSession task in the library and a plain class in the tests: the machine
/// only compares attempts by identity. Events that mean nothing in the current phase change
/// nothing (a late callback, `cancel()` twice). The public ``TaskLifecycle/State`` is derived
/// from the phase (``state``), so the public lifecycle's table (TaskLifecycle.swift) still holds.
/// Docs/Architecture.md ("Task phases") has the transition table.
struct TaskPhaseMachine<Attempt: AnyObject> {
    /// Where the task is.
    enum Phase {
        /// Created, not resumed yet.
        case initialized
        /// Running, between attempts: the next one is being prepared (adapters, a multipart
        /// body, the call queue) and has no URLSession task yet.
        case preparing
        /// The attempt's URLSession task is being registered and resumed. Cancelling it now
        /// would lose its completion, so stopping it is left to the launcher.
        case launching(Attempt)
        /// The attempt's URLSession task is running; its callbacks are the task's.
        case running(Attempt)
        /// A failed attempt waits for the retriers' answer or a retry delay. `pendingFailure` is
        /// what the task ends with if the retriers decline (`nil` while a delay runs, or when only
        /// validation refused the response).
        case waitingToRetry(pendingFailure: CourierError?)
        /// Stopped because the disk or the stream's consumer fell behind; continues once it caught up.
        case throttled(TaskMetrics.Pause.Reason)
        /// Paused by `suspend()`.
        case suspended
        /// `cancel()` was called while `attempt` ran; its completion ends the task. `launching`:
        /// the attempt was still being launched, and its launcher cancels it.
        case cancelling(Attempt, launching: Bool)
        /// Finished: the completion has been, or is being, delivered.
        case completed
    }

    /// The current phase.
    private(set) var phase: Phase = .initialized
    /// Numbers the attempts handed to the call queue: only the newest may start (a task paused
    /// and resumed before its first attempt started has a second one queued).
    private(set) var queuedAttempts = 0

    init() {}

    // MARK: - Reading

    /// The public state this phase shows.
    var state: TaskLifecycle.State {
        switch phase {
        case .initialized: return .initialized
        case .preparing, .launching, .running, .waitingToRetry, .throttled: return .running
        case .suspended: return .suspended
        case .cancelling: return .cancelling
        case .completed: return .completed
        }
    }

    /// The URLSession task of the current attempt, if one is launching, running or being cancelled.
    var attempt: Attempt? {
        switch phase {
        case .launching(let attempt), .running(let attempt), .cancelling(let attempt, _): return attempt
        default: return nil
        }
    }

    /// Whether `task` is the current attempt's: callbacks from any other are stale.
    func isCurrent(_ task: Attempt) -> Bool { attempt === task }

    /// Whether `task` is the current attempt's and the task runs (is not being cancelled).
    func isRunning(_ task: Attempt) -> Bool {
        switch phase {
        case .launching(let attempt), .running(let attempt): return attempt === task
        default: return false
        }
    }

    /// Whether the current attempt is still being launched (stopping it is the launcher's).
    var isLaunching: Bool {
        switch phase {
        case .launching, .cancelling(_, launching: true): return true
        default: return false
        }
    }

    /// Whether the task is paused because the disk or the consumer (`reason`) fell behind.
    func isThrottled(_ reason: TaskMetrics.Pause.Reason) -> Bool {
        if case .throttled(let waiting) = phase { return waiting == reason }
        return false
    }

    /// Whether the task has completed.
    var isCompleted: Bool { state == .completed }

    // MARK: - Public operations

    /// What `resume()` leads to.
    enum ResumeAction: Equatable {
        /// Nothing: the task is running, cancelled or completed.
        case none
        /// The first attempt starts (and the task's clocks with it).
        case startFirstAttempt
        /// A suspended task continues: the next attempt asks for the rest, or starts over.
        case continueAfterSuspension
    }

    mutating func resumeRequested() -> ResumeAction {
        switch phase {
        case .initialized:
            phase = .preparing
            return .startFirstAttempt
        case .suspended:
            phase = .preparing
            return .continueAfterSuspension
        default:
            return .none
        }
    }

    /// What `suspend()` leads to.
    enum SuspendAction: Equatable {
        /// Nothing: the task is not running.
        case none
        /// The task is suspended; `stopping` is the attempt to cancel (`nil` between attempts, or
        /// while one is launching: its launcher cancels it).
        case suspended(stopping: Attempt?)
    }

    mutating func suspendRequested() -> SuspendAction {
        let stopping: Attempt?
        switch phase {
        case .running(let attempt): stopping = attempt
        case .preparing, .launching, .waitingToRetry, .throttled: stopping = nil
        case .initialized, .suspended, .cancelling, .completed: return .none
        }
        phase = .suspended
        return .suspended(stopping: stopping)
    }

    /// What a request to end the task from outside its callbacks leads to.
    enum StopAction: Equatable {
        /// Nothing: the task is already ending, or never started.
        case none
        /// Nothing runs in URLSession: the task completes now (the machine is ``Phase/completed``).
        case finishNow
        /// Cancel this attempt; its completion ends the task.
        case cancelAttempt(Attempt)
        /// The attempt is being launched: its launcher cancels it, and its completion ends the task.
        case leaveToLauncher
    }

    /// `cancel()` was called.
    mutating func cancelRequested() -> StopAction {
        switch phase {
        case .running(let attempt):
            phase = .cancelling(attempt, launching: false)
            return .cancelAttempt(attempt)
        case .launching(let attempt):
            phase = .cancelling(attempt, launching: true)
            return .leaveToLauncher
        case .initialized, .preparing, .waitingToRetry, .throttled, .suspended:
            // Between attempts (waiting to retry, in an adapter, encoding a body) nothing runs in
            // URLSession: the task can finish now; a late adapter or timer finds it completed.
            phase = .completed
            return .finishNow
        case .cancelling, .completed:
            return .none
        }
    }

    /// The task must end with a failure found outside its callbacks (a write failed, the deadline
    /// passed). A running attempt is cancelled, and its completion reports the failure the task
    /// recorded; between attempts, or suspended, the task finishes now. Not started, being
    /// cancelled or completed: nothing happens.
    mutating func stopRequested() -> StopAction {
        switch phase {
        case .running(let attempt): return .cancelAttempt(attempt)
        case .launching: return .leaveToLauncher
        case .preparing, .waitingToRetry, .throttled, .suspended:
            phase = .completed
            return .finishNow
        case .initialized, .cancelling, .completed:
            return .none
        }
    }

    /// The task ends now, whatever it was doing; `false` when it had already completed.
    mutating func finishRequested() -> Bool {
        guard !isCompleted else { return false }
        phase = .completed
        return true
    }

    /// The task's completion is being delivered.
    mutating func completed() { phase = .completed }

    // MARK: - Attempts

    /// An attempt is handed to the call queue; returns its number.
    mutating func attemptQueued() -> Int {
        queuedAttempts += 1
        return queuedAttempts
    }

    /// What becomes of an attempt taken from the call queue.
    enum LaunchDecision: Equatable {
        /// Make (or launch) it.
        case start
        /// The task is being cancelled: the attempt fails as cancelled.
        case cancelled
        /// The task was paused (the next resume makes a new attempt), completed, or a newer
        /// attempt replaced this one.
        case dropped
    }

    /// Whether the attempt numbered `number`, taken from the call queue, may start.
    func launchDecision(number: Int) -> LaunchDecision {
        guard queuedAttempts == number else { return .dropped }
        switch phase {
        case .preparing: return .start
        case .cancelling: return .cancelled
        default: return .dropped
        }
    }

    /// The URLSession task for attempt `number` was made; when it may start, the attempt is
    /// launching with it.
    mutating func attemptMade(_ attempt: Attempt, number: Int) -> LaunchDecision {
        let decision = launchDecision(number: number)
        if decision == .start { phase = .launching(attempt) }
        return decision
    }

    /// `attempt` is registered and resumed. `true` when it must be cancelled now: the task was
    /// cancelled, paused or moved on meanwhile, or `failureRecorded` (a write error) stops it.
    mutating func launchFinished(_ attempt: Attempt, failureRecorded: Bool) -> Bool {
        switch phase {
        case .launching(let launching) where launching === attempt:
            phase = .running(attempt)
            return failureRecorded
        case .cancelling(let cancelling, launching: true) where cancelling === attempt:
            phase = .cancelling(attempt, launching: false)
            return true
        default:
            return true
        }
    }

    // MARK: - Between attempts

    /// The current attempt is dropped for another request that continues the task now (a
    /// redirect Courier re-sends, a challenge answered, an answer that restarts the body, a
    /// short body continued).
    mutating func attemptReplaced() {
        guard state == .running else { return }
        phase = .preparing
    }

    /// The current attempt stops because the disk or the consumer fell behind.
    mutating func attemptThrottled(_ reason: TaskMetrics.Pause.Reason) {
        guard state == .running else { return }
        phase = .throttled(reason)
    }

    /// The disk or the consumer caught up: `true` when the task continues (it is still waiting
    /// for `reason`, not paused, cancelled or failed meanwhile).
    mutating func throttleEnded(_ reason: TaskMetrics.Pause.Reason) -> Bool {
        guard case .throttled(let waiting) = phase, waiting == reason else { return false }
        phase = .preparing
        return true
    }

    /// The current attempt failed and the task waits: for the retriers' answer (with the failure
    /// it ends with if they decline), or for a retry delay (`nil`).
    mutating func attemptAwaitsRetry(pendingFailure: CourierError?) {
        guard state == .running else { return }
        phase = .waitingToRetry(pendingFailure: pendingFailure)
    }

    /// What the retriers' answer leads to.
    enum RetryAnswerAction {
        /// Nothing: the task was cancelled or paused meanwhile.
        case none
        /// The retriers declined: the task ends with this failure.
        case finish(CourierError?)
        /// Retry: the task plans the next attempt and waits for its delay.
        case retry
    }

    /// The retriers answered (`retry`: whether they retry).
    mutating func retriersAnswered(retry: Bool) -> RetryAnswerAction {
        guard case .waitingToRetry(let pending) = phase else { return .none }
        if retry {
            phase = .waitingToRetry(pendingFailure: nil)
            return .retry
        }
        return .finish(pending)
    }

    /// A retry delay elapsed: `true` when the next attempt starts (the task still waits for it).
    mutating func retryDelayElapsed() -> Bool {
        guard case .waitingToRetry = phase else { return false }
        phase = .preparing
        return true
    }
}

// Attempts are compared by identity: the machine never looks inside one.
extension TaskPhaseMachine.SuspendAction {
    static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs, rhs) {
        case (.none, .none): return true
        case (.suspended(let a), .suspended(let b)): return a === b
        default: return false
        }
    }
}

extension TaskPhaseMachine.StopAction {
    static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs, rhs) {
        case (.none, .none), (.finishNow, .finishNow), (.leaveToLauncher, .leaveToLauncher): return true
        case (.cancelAttempt(let a), .cancelAttempt(let b)): return a === b
        default: return false
        }
    }
}
