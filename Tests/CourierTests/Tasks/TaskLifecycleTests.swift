import XCTest
@testable import Courier

final class TaskLifecycleTests: XCTestCase {
    typealias State = TaskLifecycle.State

    /// The whole transition table: every (state, event) pair, valid or not.
    private let expected: [State: [TaskLifecycle.Event: State]] = [
        .initialized: [.resume: .running, .cancel: .cancelling],
        .running: [.suspend: .suspended, .cancel: .cancelling, .complete: .completed],
        .suspended: [.resume: .running, .cancel: .cancelling],
        .cancelling: [.complete: .completed],
        .completed: [:],
    ]
    private let events: [TaskLifecycle.Event] = [.resume, .suspend, .cancel, .complete]

    func testEveryTransitionMatchesTheTable() {
        for state in State.allCases {
            for event in events {
                XCTAssertEqual(
                    TaskLifecycle.target(of: event, from: state), expected[state]?[event],
                    "\(event) from \(state)")
            }
        }
    }

    func testInvalidTransitionsAreNoOpsThatKeepTheState() {
        var lifecycle = TaskLifecycle()
        XCTAssertNil(lifecycle.apply(.suspend), "suspend before resume")
        XCTAssertNil(lifecycle.apply(.complete), "complete before resume")
        XCTAssertEqual(lifecycle.state, .initialized)
    }

    func testRunningTaskCanBePausedAndResumedRepeatedly() {
        var lifecycle = TaskLifecycle()
        XCTAssertEqual(lifecycle.apply(.resume), .init(from: .initialized, to: .running))
        for _ in 0..<3 {
            XCTAssertEqual(lifecycle.apply(.suspend), .init(from: .running, to: .suspended))
            XCTAssertNil(lifecycle.apply(.suspend), "second suspend is a no-op")
            XCTAssertEqual(lifecycle.apply(.resume), .init(from: .suspended, to: .running))
            XCTAssertNil(lifecycle.apply(.resume), "second resume is a no-op")
        }
    }

    func testCancelTwiceAndResumeAfterCompletionChangeNothing() {
        var lifecycle = TaskLifecycle()
        _ = lifecycle.apply(.resume)
        XCTAssertNotNil(lifecycle.apply(.cancel))
        XCTAssertNil(lifecycle.apply(.cancel))
        XCTAssertNil(lifecycle.apply(.resume), "a cancelling task cannot be resumed")
        XCTAssertEqual(lifecycle.apply(.complete), .init(from: .cancelling, to: .completed))
        for event in events { XCTAssertNil(lifecycle.apply(event)) }
        XCTAssertEqual(lifecycle.state, .completed)
        XCTAssertTrue(lifecycle.isFinished)
    }

    func testCancelBeforeResumeGoesStraightToCancelling() {
        var lifecycle = TaskLifecycle()
        XCTAssertEqual(lifecycle.apply(.cancel), .init(from: .initialized, to: .cancelling))
        XCTAssertFalse(lifecycle.isFinished)
    }
}
