@testable import CourierTestServer
import XCTest

/// The pacing schedule and the per-path traffic rules, without sockets.
final class PathTrafficStateTests: XCTestCase {
    private let now = ContinuousClock.now

    func testThePacerSchedulesEveryWriteFromTheStartAtTheRate() {
        // Given a pacer at 4 MiB/s
        var pacer = RatePacer(bytesPerSecond: 4 << 20)

        // When 2 MiB are scheduled in 64 KiB writes
        var due = 0.0
        for _ in 0..<32 { due = pacer.schedule(64 * 1024) }

        // Then the first write was due after 1/64 s and the last one at exactly half a second
        XCTAssertEqual(due, 0.5, accuracy: 1e-9)
        var fresh = RatePacer(bytesPerSecond: 4 << 20)
        XCTAssertEqual(fresh.schedule(64 * 1024), 1.0 / 64, accuracy: 1e-12)
    }

    func testADividedRateStretchesOnlyTheWritesAfterIt() {
        // Given a pacer at 1 MiB/s that is divided by 20 after its first half MiB
        var pacer = RatePacer(bytesPerSecond: 1 << 20)
        _ = pacer.schedule(512 * 1024)

        // When the second half MiB is scheduled at the divided rate
        let due = pacer.schedule(512 * 1024, divisor: 20)

        // Then it takes 20 times as long as the first half
        XCTAssertEqual(due, 0.5 + 10, accuracy: 1e-9)
    }

    func testTheWriteSizeIsAboutASixtyFourthOfASecondBetweenOneAndSixtyFourKiB() {
        XCTAssertEqual(RatePacer.writeSize(bytesPerSecond: 16 << 20), 64 * 1024)
        XCTAssertEqual(RatePacer.writeSize(bytesPerSecond: 1 << 20), 16 * 1024)
        XCTAssertEqual(RatePacer.writeSize(bytesPerSecond: 1000), 1024)
    }

    func testAdmissionRefusesOverTheLimitAndRecordsTheCountThen() {
        // Given a path with two responses in flight
        var state = PathTrafficState()
        XCTAssertTrue(state.admit(id: 1, connectionID: 1, limit: 2, at: now))
        XCTAssertTrue(state.admit(id: 2, connectionID: 2, limit: 2, at: now))

        // When a third asks under a limit of two, and another after one finished
        let third = state.admit(id: 3, connectionID: 3, limit: 2, at: now)
        state.finish(id: 1)
        let fourth = state.admit(id: 4, connectionID: 4, limit: 2, at: now)

        // Then the third is refused and recorded, the fourth admitted, and the peak never passed two
        XCTAssertFalse(third)
        XCTAssertTrue(fourth)
        XCTAssertEqual(state.traffic.refusals, [PathTraffic.Refusal(at: now, inFlight: 2)])
        XCTAssertEqual(state.traffic.responses, 3)
        XCTAssertEqual(state.traffic.peakInFlight, 2)
        XCTAssertEqual(state.traffic.inFlight, 2)
    }

    func testPassingSlowAtSlowsTheOldestResponseInFlightOnce() {
        // Given three responses; the first finished, the second is the oldest in flight
        var state = PathTrafficState()
        for id in 1...3 { XCTAssertTrue(state.admit(id: id, connectionID: id * 10, limit: nil, at: now)) }
        let slowDown = (after: 100, factor: 20)
        XCTAssertEqual(state.served(id: 1, bytes: 60, slowDown: slowDown), 1)
        state.finish(id: 1)

        // When the third takes the path's total past 100 bytes, and later bytes pass it again
        let third = state.served(id: 3, bytes: 50, slowDown: slowDown)
        let second = state.served(id: 2, bytes: 10, slowDown: slowDown)
        _ = state.served(id: 3, bytes: 500, slowDown: slowDown)

        // Then the second (the oldest in flight) is slowed for good, the third is not, and only once
        XCTAssertEqual(third, 1)
        XCTAssertEqual(second, 20)
        XCTAssertEqual(state.live[3]?.rateDivisor, 1)
        XCTAssertEqual(state.traffic.slowedConnectionID, 20)
        XCTAssertEqual(state.traffic.bodyBytesServed, 620)
    }

    func testResetStartsTheCountsAfreshButKeepsResponsesInFlight() {
        // Given a path with one response done, one in flight and a refusal
        var state = PathTrafficState()
        XCTAssertTrue(state.admit(id: 1, connectionID: 1, limit: 1, at: now))
        XCTAssertFalse(state.admit(id: 2, connectionID: 2, limit: 1, at: now))
        _ = state.served(id: 1, bytes: 10, slowDown: (after: 5, factor: 2))

        // When it is reset
        state.reset()

        // Then only the response in flight remains counted, and slow_at is armed again
        XCTAssertEqual(state.traffic.inFlight, 1)
        XCTAssertEqual(state.traffic.peakInFlight, 1)
        XCTAssertEqual(state.traffic.bodyBytesServed, 0)
        XCTAssertEqual(state.traffic.refusals, [])
        XCTAssertNil(state.traffic.slowedConnectionID)
        XCTAssertFalse(state.slowed)
    }
}
