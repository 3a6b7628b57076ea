import Foundation
import XCTest

@testable import Courier

/// A streamed body's decisions as a pure value: times are passed in, no socket and no clock.
final class StreamBodyTests: XCTestCase {
    private let start = ContinuousClock.Instant.now
    private let url = URL(string: "http://a.test/stream")

    private func body(_ policy: StreamPolicy, timed: Bool = false) -> StreamBody {
        var body = StreamBody(buffer: StreamBuffer(url: url, limit: policy.bufferLimit), policy: policy)
        // The driver armed its timer (a fact the body keeps; no timer needed to test the decisions).
        body.timesWaits = timed
        body.lastActivity = start
        return body
    }

    // MARK: - The head

    func testTheFirstValidHeadGoesToTheConsumerAndStartsTheIdleClock() {
        // Given a stream whose consumer has no head yet
        var stream = body(StreamPolicy())
        let later = start.advanced(by: .seconds(3))
        // When a head that passes validation arrives
        // Then it is delivered, and counts as the server's activity
        XCTAssertEqual(stream.headArrived(passesValidation: true, now: later), .deliver)
        XCTAssertTrue(stream.accepted)
        XCTAssertEqual(stream.lastActivity, later)
    }

    func testARetrysHeadForAHeadTheConsumerHasIsTheSameResource() {
        var stream = body(StreamPolicy())
        _ = stream.headArrived(passesValidation: true, now: start)
        XCTAssertEqual(stream.headArrived(passesValidation: true, now: start), .sameResource)
    }

    func testARefusedHeadBeforeAnyIsHeldAsAnErrorPage() {
        // Given a stream whose consumer has no head yet
        var stream = body(StreamPolicy())
        // When validation refuses the head (a 503)
        // Then its body is held as the error, and the consumer never sees a stream
        XCTAssertEqual(stream.headArrived(passesValidation: false, now: start), .holdErrorPage)
        XCTAssertFalse(stream.accepted)
    }

    func testARefusedHeadAfterTheConsumerHasOneFailsTheStream() {
        var stream = body(StreamPolicy())
        _ = stream.headArrived(passesValidation: true, now: start)
        XCTAssertEqual(stream.headArrived(passesValidation: false, now: start), .refuse)
    }

    // MARK: - Chunks

    func testAChunkWithinTheLimitIsDelivered() {
        var stream = body(StreamPolicy(bufferLimit: 100))
        XCTAssertEqual(stream.chunkArrived(count: 40, buffered: 60, canContinue: false, now: start), .deliver)
    }

    func testAChunkPastTheLimitFailsAStreamWhosePolicyFails() {
        var stream = body(StreamPolicy(bufferLimit: 100, overflow: .fail))
        XCTAssertEqual(stream.chunkArrived(count: 41, buffered: 60, canContinue: true, now: start), .overflow)
    }

    func testAChunkPastTheLimitPausesAStreamThatCanContinueWithRange() {
        // Given a pausing stream whose bytes can be continued with Range
        var stream = body(StreamPolicy(bufferLimit: 100, overflow: .pause))
        // When a chunk takes the consumer's backlog past the limit
        let decision = stream.chunkArrived(count: 41, buffered: 60, canContinue: true, now: start)
        // Then it is delivered and the stream pauses until the consumer is down to half the limit
        XCTAssertEqual(decision, .deliverThenPause(drainedTo: 50))
    }

    func testAPausingStreamThatCannotContinueOverflows() {
        var stream = body(StreamPolicy(bufferLimit: 100, overflow: .pause))
        XCTAssertEqual(stream.chunkArrived(count: 41, buffered: 60, canContinue: false, now: start), .overflow)
    }

    func testAChunkCountsAsActivityOnlyWhenWaitsAreTimed() {
        let later = start + .seconds(3)
        var untimed = body(StreamPolicy())
        _ = untimed.chunkArrived(count: 1, buffered: 0, canContinue: false, now: later)
        XCTAssertEqual(untimed.lastActivity, start)
        var timed = body(StreamPolicy(idleTimeout: .seconds(5)), timed: true)
        _ = timed.chunkArrived(count: 1, buffered: 0, canContinue: false, now: later)
        XCTAssertEqual(timed.lastActivity, later)
    }

    func testNothingIsDeliveredBeforeTheHeadIsAccepted() {
        var stream = body(StreamPolicy())
        XCTAssertFalse(stream.hasDelivered(received: 10))
        stream.accepted = true
        XCTAssertFalse(stream.hasDelivered(received: 0))
        XCTAssertTrue(stream.hasDelivered(received: 10))
    }

    // MARK: - Waits

    func testANewAttemptWaitsUnderTheHeadLimitAndForgetsAnExpiredWait() {
        // Given a stream whose last attempt's head never came
        var stream = body(StreamPolicy(headTimeout: .seconds(2), idleTimeout: .seconds(9)), timed: true)
        stream.expiredWait = .idleTimeout(.seconds(9), url: url)
        // When the next attempt starts
        let next = stream.waitRestarted(awaitingHead: true, now: start)
        // Then its clock runs under the head limit, afresh
        XCTAssertEqual(next, .seconds(2))
        XCTAssertNil(stream.expiredWait)
        XCTAssertTrue(stream.awaitingHead)
    }

    func testAnArrivedHeadMovesTheClockToTheIdleLimit() {
        var stream = body(StreamPolicy(headTimeout: .seconds(2), idleTimeout: .seconds(9)), timed: true)
        XCTAssertEqual(stream.waitRestarted(awaitingHead: false, now: start), .seconds(9))
        XCTAssertFalse(stream.awaitingHead)
    }

    func testAnUntimedStreamHasNoClockToMove() {
        var stream = body(StreamPolicy())
        XCTAssertNil(stream.waitRestarted(awaitingHead: true, now: start))
    }

    func testSilenceBeyondTheHeadLimitExpiresTheAttempt() {
        // Given an attempt waiting for its head under a 2 s limit
        var stream = body(StreamPolicy(headTimeout: .seconds(2)), timed: true)
        // When the timer fires 2 s after the attempt started
        let check = stream.waitChecked(now: start + .seconds(2), hasAttempt: true, launching: false, url: url)
        // Then the attempt expires with a timeout naming the head limit
        XCTAssertEqual(check, .expired)
        XCTAssertEqual(stream.expiredWait?.code, .timedOut)
        XCTAssertTrue(stream.expiredWait?.message.contains("no response head") == true)
    }

    func testSilenceBeyondTheIdleLimitAfterTheHeadExpiresTheAttempt() {
        var stream = body(StreamPolicy(idleTimeout: .seconds(3)), timed: true)
        _ = stream.waitRestarted(awaitingHead: false, now: start)
        XCTAssertEqual(stream.waitChecked(now: start + .seconds(4), hasAttempt: true, launching: false, url: url), .expired)
        XCTAssertTrue(stream.expiredWait?.message.contains("no bytes arrived") == true)
    }

    func testAWaitNotYetOverLooksAgainWhenItCouldBe() {
        var stream = body(StreamPolicy(idleTimeout: .seconds(5)), timed: true)
        _ = stream.waitRestarted(awaitingHead: false, now: start)
        let check = stream.waitChecked(now: start + .seconds(2), hasAttempt: true, launching: false, url: url)
        XCTAssertEqual(check, .lookAgain(after: .seconds(3)))
        XCTAssertNil(stream.expiredWait)
    }

    func testAnAttemptStillLaunchingIsLookedAtAgainInAMoment() {
        var stream = body(StreamPolicy(headTimeout: .seconds(1)), timed: true)
        let check = stream.waitChecked(now: start + .seconds(5), hasAttempt: true, launching: true, url: url)
        XCTAssertEqual(check, .lookAgain(after: .milliseconds(10)))
        XCTAssertNil(stream.expiredWait, "cancelling a task not yet registered would lose its completion")
    }

    func testTimeBetweenAttemptsIsNotSilence() {
        // Given a stream paused for its consumer (no attempt runs) long past its idle limit
        var stream = body(StreamPolicy(idleTimeout: .seconds(1)), timed: true)
        _ = stream.waitRestarted(awaitingHead: false, now: start)
        let later = start + .seconds(30)
        // When the timer fires
        let check = stream.waitChecked(now: later, hasAttempt: false, launching: false, url: url)
        // Then nothing expires, and the clock starts from now
        XCTAssertEqual(check, .lookAgain(after: .seconds(1)))
        XCTAssertEqual(stream.lastActivity, later)
    }

    func testAnExpiredWaitIsReportedOnce() {
        var stream = body(StreamPolicy(headTimeout: .seconds(1)), timed: true)
        XCTAssertEqual(stream.waitChecked(now: start + .seconds(1), hasAttempt: true, launching: false, url: url), .expired)
        XCTAssertEqual(stream.waitChecked(now: start + .seconds(2), hasAttempt: true, launching: false, url: url), .none)
    }

    func testWithoutAnIdleLimitTheHeadLimitIsLookedAtAgainForTheNextHead() {
        // Given a stream with only a head limit, whose head arrived
        var stream = body(StreamPolicy(headTimeout: .seconds(4)), timed: true)
        _ = stream.waitRestarted(awaitingHead: false, now: start)
        // When the timer fires much later
        let check = stream.waitChecked(now: start + .seconds(60), hasAttempt: true, launching: false, url: url)
        // Then silence after the head is not limited: it looks again after the head limit
        XCTAssertEqual(check, .lookAgain(after: .seconds(4)))
    }
}
