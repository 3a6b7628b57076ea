import XCTest

@testable import Courier

/// A cancel and a redirect answer never cross (FoundationNetworking traps when an answer comes
/// after a cancel): the rule as a pure value.
final class RedirectGuardTests: XCTestCase {
    func testACancelWithNoRedirectPendingGoesOutAtOnce() {
        var guarded = TaskDelegateTable.RedirectGuard()
        XCTAssertTrue(guarded.cancel())
        XCTAssertTrue(guarded.cancelSent)
    }

    func testACancelDuringTheDecisionWaitsForTheAnswerAndThenGoesOut() {
        var guarded = TaskDelegateTable.RedirectGuard()
        XCTAssertTrue(guarded.beginRedirect())
        XCTAssertFalse(guarded.cancel(), "not while the answer is pending")
        XCTAssertFalse(guarded.cancelSent)
        XCTAssertTrue(guarded.endRedirect(), "the waiting cancel goes out after the answer")
        XCTAssertTrue(guarded.cancelSent)
    }

    func testARedirectAskedAboutAfterTheCancelWentOutIsNotAnswered() {
        var guarded = TaskDelegateTable.RedirectGuard()
        XCTAssertTrue(guarded.cancel())
        XCTAssertFalse(guarded.beginRedirect())
    }

    func testARedirectWithoutACancelIsAnsweredAndLeavesNothingPending() {
        var guarded = TaskDelegateTable.RedirectGuard()
        XCTAssertTrue(guarded.beginRedirect())
        XCTAssertFalse(guarded.endRedirect())
        XCTAssertEqual(guarded, TaskDelegateTable.RedirectGuard())
        // A second redirect of the same task later is answered too
        XCTAssertTrue(guarded.beginRedirect())
        XCTAssertFalse(guarded.endRedirect())
    }

    func testTwoCancelsDuringOneDecisionSendOneCancel() {
        var guarded = TaskDelegateTable.RedirectGuard()
        XCTAssertTrue(guarded.beginRedirect())
        XCTAssertFalse(guarded.cancel())
        XCTAssertFalse(guarded.cancel())
        XCTAssertTrue(guarded.endRedirect())
        XCTAssertFalse(guarded.endRedirect())
    }
}
