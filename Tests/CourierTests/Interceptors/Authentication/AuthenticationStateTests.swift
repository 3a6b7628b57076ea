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

    func testNoCredentialMakesTheFirstRequestObtainOneWhileTheOthersWait() {
        // Given no credential
        var state = State(credential: nil, window: RefreshWindow(interval: .seconds(10), maximumAttempts: 1))
        // When three requests arrive
        guard case .startRefresh(nil, let id) = state.requestArrived(1, now: at(0)) else { return XCTFail("nothing obtained") }
        guard case .wait = state.requestArrived(2, now: at(0)), case .wait = state.requestArrived(3, now: at(0))
        else { return XCTFail("a second request did not wait") }
        // Then the first obtains one credential for all three
        let release = state.refreshEnded(id: id, with: .success("first"))
        XCTAssertEqual(release?.waiters, [1, 2, 3])
        XCTAssertEqual(state.credential, "first")
        // And obtaining it counted toward no window: a refusal may still refresh once
        state.credentialRejected(generation: state.generation)
        guard case .startRefresh("first", _) = state.requestArrived(4, now: at(1)) else { return XCTFail("refusal refused") }
    }

    func testTheRefreshWindowRefusesOneRefusalTooManyAndAllowsItOnceTheWindowHasPassed() {
        // Given a window of 2 refreshes in 10 s, and two credentials refused in a row, each refreshed
        var state = State(credential: "a", window: RefreshWindow(interval: .seconds(10), maximumAttempts: 2))
        for (second, token) in [(0, "b"), (1, "c")] {
            state.credentialRejected(generation: state.generation)
            guard case .startRefresh(_, let id) = state.requestArrived(1, now: at(second))
            else { return XCTFail("refresh at \(second) s refused") }
            _ = state.refreshEnded(id: id, with: .success(token))
        }
        // When the third credential is refused within the window
        state.credentialRejected(generation: state.generation)
        let refused = state.requestArrived(1, now: at(2))
        // Then its refresh fails with excessiveRefresh; ten seconds after the first, it may start again
        guard case .fail(let error) = refused else { return XCTFail("\(refused)") }
        XCTAssertEqual(error.code, .excessiveRefresh)
        XCTAssertNil(state.refresh)
        guard case .startRefresh = state.requestArrived(1, now: at(10))
        else { return XCTFail("still refused after the window") }
    }

    /// What makes a request need a refresh, in the table below.
    private enum Need {
        /// The credential says it requires a refresh.
        case expired
        /// The server refused the current credential.
        case refused
        /// There is no credential.
        case none
    }

    /// Runs `needs` (second, why) through a state with `window`, each refresh succeeding at once;
    /// returns, per row, whether the refresh started (`true`) or failed with excessiveRefresh.
    private func refreshes(_ needs: [(Int, Need)], window: RefreshWindow) -> [Bool] {
        var state = State(credential: "token-0", window: window)
        var started: [Bool] = []
        var token = 0
        for (second, need) in needs {
            switch need {
            case .refused: state.credentialRejected(generation: state.generation)
            case .none: state.credentialReplaced(by: nil)
            case .expired: break
            }
            var action = state.requestArrived(1, now: at(second))
            if case .check(_, let generation) = action {
                action = state.credentialChecked(1, generation: generation, expired: need == .expired, now: at(second))
            }
            switch action {
            case .startRefresh(_, let id):
                token += 1
                _ = state.refreshEnded(id: id, with: .success("token-\(token)"))
                started.append(true)
            case .fail(let error):
                XCTAssertEqual(error.code, .excessiveRefresh, "at \(second) s")
                started.append(false)
            default:
                XCTFail("no refresh at \(second) s: \(action)")
            }
        }
        return started
    }

    func testTheRefreshWindowCountsOnlyRefreshesThatAnswerARefusal() {
        let window = RefreshWindow(interval: .seconds(10), maximumAttempts: 2)
        // (why each refresh is needed, at which second) -> which ones start
        let table: [(needs: [(Int, Need)], started: [Bool], why: String)] = [
            (
                (0...9).map { ($0, .expired) }, Array(repeating: true, count: 10),
                "expiries never count: 10 in 10 s all start"
            ),
            (
                (0...9).map { ($0, .none) }, Array(repeating: true, count: 10),
                "obtaining a missing credential never counts"
            ),
            (
                [(0, .refused), (1, .refused), (2, .refused), (3, .refused)], [true, true, false, false],
                "a refusal after each refresh: the third and fourth in the window fail"
            ),
            (
                [(0, .refused), (1, .expired), (2, .expired), (3, .refused), (4, .expired), (5, .refused)],
                [true, true, true, true, true, false],
                "expiries between refusals neither count nor reset the count"
            ),
            (
                [(0, .refused), (5, .refused), (10, .refused), (15, .refused)], [true, true, true, true],
                "refusals spread wider than the window all start"
            ),
        ]
        for row in table {
            XCTAssertEqual(refreshes(row.needs, window: window), row.started, row.why)
        }
    }

    func testRefreshWindowCountsOnlyRefreshesInsideTheInterval() {
        let window = RefreshWindow(interval: .seconds(30), maximumAttempts: 2)
        XCTAssertTrue(window.allowsRefresh(at: at(0), after: []))
        XCTAssertTrue(window.allowsRefresh(at: at(40), after: [at(0), at(5), at(20)]))
        XCTAssertFalse(window.allowsRefresh(at: at(21), after: [at(0), at(5), at(20)]))
        XCTAssertEqual(RefreshWindow(), RefreshWindow(interval: .seconds(30), maximumAttempts: 5))
    }
}
