import CourierTestSupport
import XCTest

@testable import Courier

/// The task's phases as a pure value: no sockets, each test asserts on what an event returns and
/// where the machine is afterwards.
final class TaskPhaseMachineTests: XCTestCase {
    /// Stands for a URLSession task: the machine only compares attempts by identity.
    private final class Attempt {}
    private typealias Machine = TaskPhaseMachine<Attempt>

    // MARK: - Helpers

    /// A machine resumed, with attempt 1 queued and made: launching `attempt`.
    private func launching(_ attempt: Attempt) -> Machine {
        var machine = Machine()
        _ = machine.resumeRequested()
        let number = machine.attemptQueued()
        XCTAssertEqual(machine.attemptMade(attempt, number: number), .start)
        return machine
    }

    /// A machine whose attempt `attempt` is launched and running.
    private func running(_ attempt: Attempt) -> Machine {
        var machine = launching(attempt)
        XCTAssertFalse(machine.launchFinished(attempt, failureRecorded: false))
        return machine
    }

    /// A machine whose running attempt failed and that waits for the retriers.
    private func waitingForRetriers(failure: CourierError? = .cancelled(url: nil)) -> Machine {
        var machine = running(Attempt())
        machine.attemptAwaitsRetry(pendingFailure: failure)
        return machine
    }

    // MARK: - Creation and resume

    func testANewMachineIsInitializedWithNoAttempt() {
        // Given a new machine
        let machine = Machine()
        // Then it shows the public state initialized and has no attempt
        XCTAssertEqual(machine.state, .initialized)
        XCTAssertNil(machine.attempt)
        XCTAssertFalse(machine.isCompleted)
    }

    func testTheFirstResumeStartsTheFirstAttempt() {
        var machine = Machine()
        XCTAssertEqual(machine.resumeRequested(), .startFirstAttempt)
        XCTAssertEqual(machine.state, .running)
    }

    func testResumingARunningTaskDoesNothing() {
        var machine = running(Attempt())
        XCTAssertEqual(machine.resumeRequested(), .none)
        XCTAssertEqual(machine.state, .running)
    }

    func testResumingASuspendedTaskContinuesIt() {
        // Given a suspended task
        var machine = running(Attempt())
        _ = machine.suspendRequested()
        // When it is resumed
        let action = machine.resumeRequested()
        // Then the next attempt continues it (not a first attempt: no clocks are armed again)
        XCTAssertEqual(action, .continueAfterSuspension)
        XCTAssertEqual(machine.state, .running)
        XCTAssertNil(machine.attempt)
    }

    func testResumingACompletedTaskDoesNothing() {
        var machine = running(Attempt())
        machine.completed()
        XCTAssertEqual(machine.resumeRequested(), .none)
        XCTAssertEqual(machine.state, .completed)
    }

    // MARK: - Launching

    func testEachQueuedAttemptGetsTheNextNumber() {
        var machine = Machine()
        _ = machine.resumeRequested()
        XCTAssertEqual(machine.attemptQueued(), 1)
        XCTAssertEqual(machine.attemptQueued(), 2)
    }

    func testTheNewestQueuedAttemptStartsWhileTheTaskPrepares() {
        var machine = Machine()
        _ = machine.resumeRequested()
        let number = machine.attemptQueued()
        XCTAssertEqual(machine.launchDecision(number: number), .start)
    }

    func testAnOlderQueuedAttemptIsDropped() {
        // Given a task paused and resumed before its first attempt was taken from the queue
        var machine = Machine()
        _ = machine.resumeRequested()
        let first = machine.attemptQueued()
        _ = machine.suspendRequested()
        _ = machine.resumeRequested()
        let second = machine.attemptQueued()
        // Then only the second attempt starts
        XCTAssertEqual(machine.launchDecision(number: first), .dropped)
        XCTAssertEqual(machine.launchDecision(number: second), .start)
    }

    func testAQueuedAttemptOfASuspendedTaskIsDropped() {
        var machine = Machine()
        _ = machine.resumeRequested()
        let number = machine.attemptQueued()
        _ = machine.suspendRequested()
        XCTAssertEqual(machine.launchDecision(number: number), .dropped)
    }

    func testAQueuedAttemptOfACompletedTaskIsDropped() {
        var machine = Machine()
        _ = machine.resumeRequested()
        let number = machine.attemptQueued()
        XCTAssertEqual(machine.cancelRequested(), .finishNow)
        XCTAssertEqual(machine.launchDecision(number: number), .dropped)
    }

    func testAMadeAttemptIsLaunchingAndCurrent() {
        let attempt = Attempt()
        let machine = launching(attempt)
        XCTAssertTrue(machine.isLaunching)
        XCTAssertTrue(machine.isCurrent(attempt))
        XCTAssertTrue(machine.isRunning(attempt))
        XCTAssertEqual(machine.state, .running)
    }

    func testAnAttemptMadeAfterTheTaskWasSuspendedIsDroppedAndNotCurrent() {
        // Given an attempt queued, then the task suspended while its URLSession task was made
        var machine = Machine()
        _ = machine.resumeRequested()
        let number = machine.attemptQueued()
        _ = machine.suspendRequested()
        let attempt = Attempt()
        // When the made task is offered
        let decision = machine.attemptMade(attempt, number: number)
        // Then it is dropped, and never becomes the current attempt
        XCTAssertEqual(decision, .dropped)
        XCTAssertFalse(machine.isCurrent(attempt))
        XCTAssertEqual(machine.state, .suspended)
    }

    func testAFinishedLaunchMakesTheAttemptRunning() {
        let attempt = Attempt()
        var machine = launching(attempt)
        XCTAssertFalse(machine.launchFinished(attempt, failureRecorded: false))
        XCTAssertFalse(machine.isLaunching)
        XCTAssertTrue(machine.isRunning(attempt))
    }

    func testAFailureRecordedDuringTheLaunchCancelsTheAttempt() {
        // Given an attempt being launched when a write error was recorded
        let attempt = Attempt()
        var machine = launching(attempt)
        // When the launch finishes
        let cancel = machine.launchFinished(attempt, failureRecorded: true)
        // Then the launcher cancels it; its completion reports the failure
        XCTAssertTrue(cancel)
        XCTAssertTrue(machine.isCurrent(attempt))
    }

    func testAnAttemptReplacedDuringItsLaunchIsCancelledByTheLauncher() {
        let attempt = Attempt()
        var machine = launching(attempt)
        machine.attemptReplaced()
        XCTAssertTrue(machine.launchFinished(attempt, failureRecorded: false))
        XCTAssertFalse(machine.isCurrent(attempt))
    }

    func testALateLaunchOfAStaleAttemptDoesNotTouchTheNewOne() {
        // Given attempt A replaced, and attempt B launching, before A's launcher looked again
        let first = Attempt()
        let second = Attempt()
        var machine = launching(first)
        machine.attemptReplaced()
        let number = machine.attemptQueued()
        _ = machine.attemptMade(second, number: number)
        // When A's launch finishes
        let cancelFirst = machine.launchFinished(first, failureRecorded: false)
        // Then A is cancelled and B is still launching
        XCTAssertTrue(cancelFirst)
        XCTAssertTrue(machine.isLaunching)
        XCTAssertTrue(machine.isCurrent(second))
    }

    // MARK: - Cancel

    func testCancelBeforeResumeFinishesNow() {
        var machine = Machine()
        XCTAssertEqual(machine.cancelRequested(), .finishNow)
        XCTAssertEqual(machine.state, .completed)
    }

    func testCancelWhileRunningCancelsTheAttempt() {
        // Given a running attempt
        let attempt = Attempt()
        var machine = running(attempt)
        // When the task is cancelled
        let action = machine.cancelRequested()
        // Then the attempt is cancelled, and it stays current: its completion ends the task
        XCTAssertEqual(action, .cancelAttempt(attempt))
        XCTAssertEqual(machine.state, .cancelling)
        XCTAssertTrue(machine.isCurrent(attempt))
        XCTAssertFalse(machine.isRunning(attempt))
    }

    func testCancelWhileLaunchingLeavesTheAttemptToItsLauncher() {
        // Given an attempt being registered and resumed
        let attempt = Attempt()
        var machine = launching(attempt)
        // When the task is cancelled
        let action = machine.cancelRequested()
        // Then nothing is cancelled yet (its completion would be lost) …
        XCTAssertEqual(action, .leaveToLauncher)
        XCTAssertEqual(machine.state, .cancelling)
        XCTAssertTrue(machine.isLaunching)
        // … and the launcher cancels it once it is registered
        XCTAssertTrue(machine.launchFinished(attempt, failureRecorded: false))
        XCTAssertFalse(machine.isLaunching)
        XCTAssertTrue(machine.isCurrent(attempt))
    }

    func testCancelWhilePreparingFinishesNow() {
        var machine = Machine()
        _ = machine.resumeRequested()
        XCTAssertEqual(machine.cancelRequested(), .finishNow)
        XCTAssertTrue(machine.isCompleted)
    }

    func testCancelWhileWaitingToRetryFinishesNow() {
        var machine = waitingForRetriers()
        XCTAssertEqual(machine.cancelRequested(), .finishNow)
        XCTAssertTrue(machine.isCompleted)
    }

    func testCancelWhileThrottledFinishesNow() {
        var machine = running(Attempt())
        machine.attemptThrottled(.disk)
        XCTAssertEqual(machine.cancelRequested(), .finishNow)
        XCTAssertTrue(machine.isCompleted)
    }

    func testCancelWhileSuspendedFinishesNow() {
        var machine = running(Attempt())
        _ = machine.suspendRequested()
        XCTAssertEqual(machine.cancelRequested(), .finishNow)
        XCTAssertTrue(machine.isCompleted)
    }

    func testCancellingTwiceDoesNothingTheSecondTime() {
        let attempt = Attempt()
        var machine = running(attempt)
        _ = machine.cancelRequested()
        XCTAssertEqual(machine.cancelRequested(), .none)
        XCTAssertEqual(machine.state, .cancelling)
    }

    func testCancelAfterCompletionDoesNothing() {
        var machine = running(Attempt())
        machine.completed()
        XCTAssertEqual(machine.cancelRequested(), .none)
        XCTAssertEqual(machine.state, .completed)
    }

    func testAQueuedAttemptOfACancellingTaskIsCancelled() {
        // Given a running attempt being cancelled and another attempt already queued
        let attempt = Attempt()
        var machine = running(attempt)
        let number = machine.attemptQueued()
        _ = machine.cancelRequested()
        // Then the queued attempt fails as cancelled
        XCTAssertEqual(machine.launchDecision(number: number), .cancelled)
    }

    // MARK: - Suspend

    func testSuspendWhileRunningStopsTheAttempt() {
        let attempt = Attempt()
        var machine = running(attempt)
        XCTAssertEqual(machine.suspendRequested(), .suspended(stopping: attempt))
        XCTAssertEqual(machine.state, .suspended)
        XCTAssertFalse(machine.isCurrent(attempt), "its late callbacks are stale")
    }

    func testSuspendWhileLaunchingLeavesTheAttemptToItsLauncher() {
        let attempt = Attempt()
        var machine = launching(attempt)
        XCTAssertEqual(machine.suspendRequested(), .suspended(stopping: nil))
        XCTAssertTrue(machine.launchFinished(attempt, failureRecorded: false), "the launcher cancels it")
    }

    func testSuspendDuringARetryWaitCallsTheRetryOff() {
        // Given a task waiting for its retry delay
        var machine = running(Attempt())
        machine.attemptAwaitsRetry(pendingFailure: nil)
        // When it is suspended
        XCTAssertEqual(machine.suspendRequested(), .suspended(stopping: nil))
        // Then the delay's end does not start an attempt
        XCTAssertFalse(machine.retryDelayElapsed())
        XCTAssertEqual(machine.state, .suspended)
    }

    func testSuspendWhileWaitingForTheRetriersIgnoresTheirAnswer() {
        var machine = waitingForRetriers()
        _ = machine.suspendRequested()
        guard case .none = machine.retriersAnswered(retry: true) else { return XCTFail("a paused task retries nothing") }
        XCTAssertEqual(machine.state, .suspended)
    }

    func testSuspendWhileThrottledEndsTheThrottle() {
        // Given a download paused for its disk
        var machine = running(Attempt())
        machine.attemptThrottled(.disk)
        // When it is suspended, then the disk catches up
        _ = machine.suspendRequested()
        // Then the catch-up does not continue it: only resume() does
        XCTAssertFalse(machine.throttleEnded(.disk))
        XCTAssertEqual(machine.state, .suspended)
    }

    func testSuspendBeforeResumeDoesNothing() {
        var machine = Machine()
        XCTAssertEqual(machine.suspendRequested(), .none)
        XCTAssertEqual(machine.state, .initialized)
    }

    func testSuspendWhileCancellingDoesNothing() {
        var machine = running(Attempt())
        _ = machine.cancelRequested()
        XCTAssertEqual(machine.suspendRequested(), .none)
        XCTAssertEqual(machine.state, .cancelling)
    }

    // MARK: - A failure from outside the callbacks (deadline, write error)

    func testAStopWhileRunningCancelsTheAttemptAndKeepsTheTaskRunning() {
        // Given a running attempt
        let attempt = Attempt()
        var machine = running(attempt)
        // When the deadline passes
        let action = machine.stopRequested()
        // Then the attempt is cancelled; its completion reports the recorded failure
        XCTAssertEqual(action, .cancelAttempt(attempt))
        XCTAssertTrue(machine.isRunning(attempt))
    }

    func testAStopWhileLaunchingLeavesTheAttemptToItsLauncher() {
        var machine = launching(Attempt())
        XCTAssertEqual(machine.stopRequested(), .leaveToLauncher)
    }

    func testAStopBetweenAttemptsFinishesNow() {
        var machine = running(Attempt())
        machine.attemptAwaitsRetry(pendingFailure: nil)
        XCTAssertEqual(machine.stopRequested(), .finishNow)
        XCTAssertTrue(machine.isCompleted)
    }

    func testAStopWhileSuspendedFinishesNow() {
        var machine = running(Attempt())
        _ = machine.suspendRequested()
        XCTAssertEqual(machine.stopRequested(), .finishNow)
        XCTAssertTrue(machine.isCompleted)
    }

    func testAStopBeforeResumeOrWhileCancellingDoesNothing() {
        var fresh = Machine()
        XCTAssertEqual(fresh.stopRequested(), .none)
        var cancelling = running(Attempt())
        _ = cancelling.cancelRequested()
        XCTAssertEqual(cancelling.stopRequested(), .none)
        XCTAssertEqual(cancelling.state, .cancelling)
    }

    func testFinishingIsOnceOnly() {
        var machine = Machine()
        XCTAssertTrue(machine.finishRequested())
        XCTAssertFalse(machine.finishRequested())
        XCTAssertEqual(machine.state, .completed)
    }

    // MARK: - Retries

    func testTheRetriersDecliningEndTheTaskWithThePendingFailure() {
        // Given a failed attempt whose failure the retriers are asked about
        let failure = CourierError.cancelled(url: URL(string: "http://a.test/"))
        var machine = waitingForRetriers(failure: failure)
        // When they decline
        guard case .finish(let ending) = machine.retriersAnswered(retry: false) else { return XCTFail("expected finish") }
        // Then the task ends with that failure
        XCTAssertEqual(ending?.code, failure.code)
    }

    func testTheRetriersRetryingWaitForTheDelayWithoutAPendingFailure() {
        var machine = waitingForRetriers()
        guard case .retry = machine.retriersAnswered(retry: true) else { return XCTFail("expected retry") }
        guard case .waitingToRetry(let pending) = machine.phase else { return XCTFail("expected a retry wait") }
        XCTAssertNil(pending)
    }

    func testTheRetryDelayElapsingPreparesTheNextAttempt() {
        var machine = running(Attempt())
        machine.attemptAwaitsRetry(pendingFailure: nil)
        XCTAssertTrue(machine.retryDelayElapsed())
        XCTAssertEqual(machine.state, .running)
        XCTAssertNil(machine.attempt)
        let number = machine.attemptQueued()
        XCTAssertEqual(machine.launchDecision(number: number), .start)
    }

    func testARetryDelayElapsingTwiceStartsOneAttempt() {
        var machine = running(Attempt())
        machine.attemptAwaitsRetry(pendingFailure: nil)
        XCTAssertTrue(machine.retryDelayElapsed())
        XCTAssertFalse(machine.retryDelayElapsed())
    }

    func testAnAnswerFromTheRetriersAfterCancelIsIgnored() {
        var machine = waitingForRetriers()
        _ = machine.cancelRequested()
        guard case .none = machine.retriersAnswered(retry: false) else { return XCTFail("a completed task finishes once") }
    }

    func testAFailedAttemptIsNoLongerCurrent() {
        let attempt = Attempt()
        var machine = running(attempt)
        machine.attemptAwaitsRetry(pendingFailure: nil)
        XCTAssertFalse(machine.isCurrent(attempt))
        XCTAssertEqual(machine.state, .running)
    }

    // MARK: - Follow-ups and back-pressure

    func testAReplacedAttemptIsStaleAndTheNextOneMayStart() {
        // Given a 307 Courier re-sends itself (or a 401 answered): the attempt is replaced
        let attempt = Attempt()
        var machine = running(attempt)
        machine.attemptReplaced()
        // Then its late callbacks are stale, and the follow-up request starts
        XCTAssertFalse(machine.isCurrent(attempt))
        let number = machine.attemptQueued()
        XCTAssertEqual(machine.launchDecision(number: number), .start)
    }

    func testAThrottledTaskContinuesWhenItsOwnReasonEnds() {
        // Given a stream paused because its consumer fell behind
        var machine = running(Attempt())
        machine.attemptThrottled(.consumer)
        XCTAssertTrue(machine.isThrottled(.consumer))
        // Then the disk catching up means nothing, the consumer catching up continues it
        XCTAssertFalse(machine.throttleEnded(.disk))
        XCTAssertTrue(machine.throttleEnded(.consumer))
        XCTAssertFalse(machine.isThrottled(.consumer))
        XCTAssertEqual(machine.state, .running)
    }

    func testAThrottleEndsOnce() {
        var machine = running(Attempt())
        machine.attemptThrottled(.disk)
        XCTAssertTrue(machine.throttleEnded(.disk))
        XCTAssertFalse(machine.throttleEnded(.disk))
    }

    func testBetweenAttemptEventsDoNothingOnceCancelling() {
        // Given a task being cancelled
        let attempt = Attempt()
        var machine = running(attempt)
        _ = machine.cancelRequested()
        // When late decisions of its attempt arrive
        machine.attemptReplaced()
        machine.attemptThrottled(.disk)
        machine.attemptAwaitsRetry(pendingFailure: nil)
        // Then it is still cancelling, and its attempt is still current
        XCTAssertEqual(machine.state, .cancelling)
        XCTAssertTrue(machine.isCurrent(attempt))
    }

    func testAStaleAttemptIsNeitherCurrentNorRunning() {
        let machine = running(Attempt())
        let other = Attempt()
        XCTAssertFalse(machine.isCurrent(other))
        XCTAssertFalse(machine.isRunning(other))
    }

    // MARK: - The public lifecycle

    /// Every public state the machine goes through follows TaskLifecycle's table: over random
    /// walks of events, a change of public state is one the table allows.
    func testEveryPublicStateChangeIsOneTheLifecycleAllows() {
        var generator = SplitMix64(seed: 21)
        for _ in 0..<300 {
            var machine = Machine()
            var attempts: [Attempt] = []
            for _ in 0..<20 {
                let before = machine.state
                let event = Int(generator.next() % 12)
                let lifecycleEvent = apply(event, to: &machine, attempts: &attempts)
                let after = machine.state
                guard before != after else { continue }
                let allowed = lifecycleEvent.flatMap { TaskLifecycle.target(of: $0, from: before) }
                // `cancel()` between attempts completes at once: cancelling and completed in one step.
                let viaCancelling =
                    lifecycleEvent == .cancel && after == .completed
                    && TaskLifecycle.target(of: .cancel, from: before) == .cancelling
                XCTAssertTrue(allowed == after || viaCancelling, "event \(event): \(before) → \(after)")
            }
        }
    }

    /// Applies event number `event`; returns the lifecycle event it stands for, if any.
    private func apply(_ event: Int, to machine: inout Machine, attempts: inout [Attempt]) -> TaskLifecycle.Event? {
        switch event {
        case 0:
            _ = machine.resumeRequested()
            return .resume
        case 1:
            _ = machine.suspendRequested()
            return .suspend
        case 2:
            _ = machine.cancelRequested()
            return .cancel
        case 3:
            _ = machine.stopRequested()
            return .cancel
        case 4:
            let attempt = Attempt()
            attempts.append(attempt)
            _ = machine.attemptMade(attempt, number: machine.attemptQueued())
        case 5:
            if let attempt = attempts.last { _ = machine.launchFinished(attempt, failureRecorded: false) }
        case 6: machine.attemptReplaced()
        case 7: machine.attemptThrottled(.disk)
        case 8: _ = machine.throttleEnded(.disk)
        case 9: machine.attemptAwaitsRetry(pendingFailure: nil)
        case 10: _ = machine.retryDelayElapsed()
        default:
            if machine.state == .running || machine.state == .cancelling {
                machine.completed()
                return .complete
            }
        }
        return nil
    }
}
