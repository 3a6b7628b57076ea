import XCTest
@testable import Courier

/// The single-flight bookkeeping alone, as a value: no sockets, no clock.
final class AuthenticationStateTests: XCTestCase {
    private typealias State = AuthenticationState<String, Int>
    private let start = ContinuousClock.now

    private func at(_ seconds: Int) -> ContinuousClock.Instant { start + .seconds(seconds) }

    func testAFreshCredentialIsAppliedAfterItIsChecked() {
        // Given a credential
        var state = State(credential: "a", window: nil)
        // When a request arrives and the credential says it is still good
        guard case .check("a", let generation) = state.requestArrived(1, now: at(0)) else { return XCTFail("no check") }
        let action = state.credentialChecked(1, generation: generation, expired: false, now: at(0))
        // Then it is applied, and no refresh runs
        guard case .apply("a") = action else { return XCTFail("\(action)") }
        XCTAssertNil(state.refresh)
    }

    func testRequestsArrivingDuringARefreshWaitAndAreAllReleasedOnceWithTheNewCredential() {
        // Given an expired credential whose first request started a refresh
        var state = State(credential: "old", window: nil)
        guard case .startRefresh("old", let id) = state.credentialChecked(1, generation: 0, expired: true, now: at(0))
        else { return XCTFail("no refresh") }
        // When nine more requests arrive, then the refresh succeeds
        for waiter in 2...10 {
            guard case .wait = state.requestArrived(waiter, now: at(0)) else { return XCTFail("request \(waiter) did not wait") }
        }
        let release = state.refreshEnded(id: id, with: .success("new"))
        // Then all ten are released once, with the new credential, and the next one is checked afresh
        XCTAssertEqual(release?.waiters, Array(1...10))
        XCTAssertEqual(try release?.result.get(), "new")
        XCTAssertNil(state.refreshEnded(id: id, with: .success("again")), "a refresh releases its waiters once")
        guard case .check("new", 1) = state.requestArrived(11, now: at(0)) else { return XCTFail("not checked") }
    }

    func testAFailedRefreshReleasesEveryWaiterWithTheOneErrorAndKeepsTheCredential() {
        // Given a refresh with two waiters
        var state = State(credential: "old", window: nil)
        guard case .startRefresh(_, let id) = state.credentialChecked(1, generation: 0, expired: true, now: at(0))
        else { return XCTFail("no refresh") }
        _ = state.requestArrived(2, now: at(0))
        // When it fails
        let release = state.refreshEnded(id: id, with: .failure(.refreshFailed(URLError(.badServerResponse))))
        // Then both get the error, and the credential is unchanged
        XCTAssertEqual(release?.waiters, [1, 2])
        guard case .failure(let error) = release?.result else { return XCTFail("not a failure") }
        XCTAssertEqual(error.code, .refreshFailed)
        XCTAssertEqual(state.credential, "old")
        XCTAssertEqual(state.generation, 0)
    }

    func testARefusalOfTheCurrentCredentialRefreshesOnTheNextRequestButAnOlderOneDoesNot() {
        // Given a credential replaced once (generation 1)
        var state = State(credential: "a", window: nil)
        state.credentialReplaced(by: "b")
        // When the server refuses a request that carried the older one
        state.credentialRejected(generation: 0)
        // Then the next request is only checked
        guard case .check("b", 1) = state.requestArrived(1, now: at(0)) else { return XCTFail("not checked") }
        // When it refuses the current one
        state.credentialRejected(generation: 1)
        // Then the next request starts a refresh without asking the credential
        guard case .startRefresh("b", _) = state.requestArrived(2, now: at(0)) else { return XCTFail("no refresh") }
    }

    func testACredentialChangedWhileItWasCheckedIsCheckedAgain() {
        var state = State(credential: "a", window: nil)
        guard case .check(_, let generation) = state.requestArrived(1, now: at(0)) else { return XCTFail("no check") }
        state.credentialReplaced(by: "b")
        guard case .check("b", 1) = state.credentialChecked(1, generation: generation, expired: true, now: at(0))
        else { return XCTFail("the old answer was used") }
    }

    func testNoCredentialFailsTheRequest() {
        var state = State(credential: nil, window: nil)
        guard case .fail(let error) = state.requestArrived(1, now: at(0)) else { return XCTFail("did not fail") }
        XCTAssertEqual(error.code, .missingCredential)
    }

    func testTheRefreshWindowRefusesOneRefreshTooManyAndAllowsItOnceTheWindowHasPassed() {
        // Given a window of 2 refreshes in 10 s
        var state = State(credential: "a", window: RefreshWindow(interval: .seconds(10), maximumAttempts: 2))
        for (second, token) in [(0, "b"), (1, "c")] {
            guard case .startRefresh(_, let id) = state.credentialChecked(1, generation: state.generation, expired: true, now: at(second))
            else { return XCTFail("refresh at \(second) s refused") }
            _ = state.refreshEnded(id: id, with: .success(token))
        }
        // When a third is needed within the window
        let refused = state.credentialChecked(1, generation: state.generation, expired: true, now: at(2))
        // Then it fails with excessiveRefresh; ten seconds after the first, it may start again
        guard case .fail(let error) = refused else { return XCTFail("\(refused)") }
        XCTAssertEqual(error.code, .excessiveRefresh)
        XCTAssertNil(state.refresh)
        guard case .startRefresh = state.credentialChecked(1, generation: state.generation, expired: true, now: at(10))
        else { return XCTFail("still refused after the window") }
    }

    func testRefreshWindowCountsOnlyRefreshesInsideTheInterval() {
        let window = RefreshWindow(interval: .seconds(30), maximumAttempts: 2)
        XCTAssertTrue(window.allowsRefresh(at: at(0), after: []))
        XCTAssertTrue(window.allowsRefresh(at: at(40), after: [at(0), at(5), at(20)]))
        XCTAssertFalse(window.allowsRefresh(at: at(21), after: [at(0), at(5), at(20)]))
        XCTAssertEqual(RefreshWindow(), RefreshWindow(interval: .seconds(30), maximumAttempts: 5))
    }
}
