import XCTest
@testable import Courier

/// ``ReconnectState``, an event stream's reconnect decisions, without sockets.
final class ReconnectStateTests: XCTestCase {
    private let now = ContinuousClock.now
    private let policy = ReconnectPolicy(
        delay: .seconds(1), minimumDelay: .milliseconds(100), maximumDelay: .seconds(10), maximumAttempts: 2,
        maximumReconnectionsPerMinute: 3)
    private let lost = CourierError(code: .connectionLost, message: "reset")

    private func state(reconnects: Bool = true) -> ReconnectState {
        ReconnectState(policy: policy, reconnects: reconnects, pausesOnOverflow: false)
    }

    func testTheFirstStepConnectsAndANormalEndReconnectsAfterTheServersRetry() {
        var state = state()
        XCTAssertEqual(state.nextStep(serverRetry: nil, now: now), .connect)
        state.connecting(at: now)
        state.eventDelivered()
        state.connectionEnded(nil)
        XCTAssertEqual(state.nextStep(serverRetry: .milliseconds(300), now: now), .reconnect(after: .milliseconds(300), number: 1))
        XCTAssertNil(state.lastError, "a normal end has no error")
        XCTAssertEqual(state.failures, 0, "the connection delivered an event")
    }

    func testFailuresInARowDoubleTheWaitAndEndTheSequenceWithTheLastError() {
        var state = state()
        state.connecting(at: now)
        state.connectFailed(lost)
        XCTAssertEqual(state.nextStep(serverRetry: nil, now: now), .reconnect(after: .seconds(1), number: 1))
        state.connecting(at: now)
        state.connectFailed(lost)
        XCTAssertEqual(state.nextStep(serverRetry: nil, now: now), .reconnect(after: .seconds(2), number: 2))
        state.connecting(at: now)
        state.connectFailed(lost)
        XCTAssertEqual(state.nextStep(serverRetry: nil, now: now), .fail(lost), "past maximumAttempts")
    }

    func testAnEventResetsTheFailuresButNotTheRate() {
        var state = state()
        state.connecting(at: now)
        for second in 1...3 {
            state.connectFailed(lost)
            state.connecting(at: now + .seconds(second))
            state.eventDelivered()
            state.connectionEnded(nil)
        }
        XCTAssertEqual(state.failures, 0)
        XCTAssertEqual(state.recent.count, 3)
        // Three reconnections within the minute: the next waits for the oldest to leave it.
        XCTAssertEqual(state.nextStep(serverRetry: nil, now: now + .seconds(4)), .reconnect(after: .seconds(57), number: 4))
    }

    func testConnectionsEndingWithoutAnEventAreGivenUpOnWithAnErrorNotAnEnd() {
        var state = state()
        for _ in 0..<3 {
            state.connecting(at: now)
            state.connectionEnded(nil)
        }
        guard case .fail(let error) = state.nextStep(serverRetry: nil, now: now) else { return XCTFail("not a failure") }
        XCTAssertEqual(error.code, .invalidResponse)
        XCTAssertTrue(error.message.contains("3 times in a row without an event"), error.message)
    }

    func testARequestThatIsNotSentAgainEndsWithItsResponse() {
        var post = state(reconnects: false)
        post.connecting(at: now)
        post.connectionEnded(nil)
        XCTAssertEqual(post.nextStep(serverRetry: nil, now: now), .end)
        post.connectionEnded(lost)
        XCTAssertEqual(post.nextStep(serverRetry: nil, now: now), .fail(lost))
    }

    func testNeverReconnectingEndsNormallyOrWithTheError() {
        var never = ReconnectState(policy: .never, reconnects: true, pausesOnOverflow: false)
        never.connecting(at: now)
        never.eventDelivered()
        never.connectionEnded(nil)
        XCTAssertEqual(never.nextStep(serverRetry: nil, now: now), .end)
        never.connectionEnded(lost)
        XCTAssertEqual(never.nextStep(serverRetry: nil, now: now), .fail(lost))
    }

    func testAPauseForTheConsumerIsNotAFailure() {
        var state = ReconnectState(policy: policy, reconnects: true, pausesOnOverflow: true)
        state.connecting(at: now)
        state.connectionEnded(CourierError(code: .bufferOverflow, message: "behind"))
        XCTAssertEqual(state.failures, 0)
        XCTAssertEqual(state.nextStep(serverRetry: .milliseconds(100), now: now), .reconnect(after: .milliseconds(100), number: 1))
    }
}

extension ReconnectStateTests {
    func testALostRouteReconnectsAsAFailureWhoseWaitIsAWaitForTheRoute() {
        // Given a stream whose connection ended because the host had no route
        var state = state()
        state.connecting(at: now)
        let unreachable = CourierError(code: .networkUnreachable, message: "no route")
        XCTAssertTrue(state.mayReconnect(after: unreachable))
        state.connectionEnded(unreachable)

        // Then it reconnects on the policy's schedule, its wait a wait for the route, never shorter than the minimum
        XCTAssertTrue(state.waitsForRoute)
        XCTAssertEqual(state.nextStep(serverRetry: nil, now: now), .reconnect(after: .seconds(1), number: 1))
        XCTAssertEqual(state.earliestReconnection(now: now), .milliseconds(100))

        // And a request that is not sent again does not
        XCTAssertFalse(self.state(reconnects: false).mayReconnect(after: unreachable))
    }

    func testARouteComingBackNeverBringsAReconnectionPastTheRate() {
        // Given three reconnections (the policy's rate) in the last minute, the last one without a route
        var state = state()
        state.connecting(at: now)
        for second in 0..<3 {
            state.connectFailed(CourierError(code: .networkUnreachable, message: "no route"))
            state.connecting(at: now + .seconds(second))
        }
        state.connectFailed(CourierError(code: .networkUnreachable, message: "no route"))

        // Then the earliest reconnection waits for the oldest to be a minute old
        XCTAssertEqual(state.earliestReconnection(now: now + .seconds(10)), .seconds(50))
    }
}
