import XCTest
@testable import Courier

/// ``ReconnectPolicy``'s waits and limits, without sockets.
final class ReconnectPolicyTests: XCTestCase {
    private let now = ContinuousClock.now

    func testTheWaitIsTheServersRetryOrTheDelayRaisedToTheMinimumAndCapped() {
        let policy = ReconnectPolicy(delay: .seconds(3), minimumDelay: .milliseconds(500), maximumDelay: .seconds(60))
        let rows: [(retry: Duration?, failures: Int, wait: Duration)] = [
            (nil, 0, .seconds(3)), (.milliseconds(1500), 0, .milliseconds(1500)),
            (.zero, 0, .milliseconds(500)), (.milliseconds(1), 0, .milliseconds(500)),
            (.zero, 1, .seconds(1)), (.zero, 3, .seconds(4)), (nil, 2, .seconds(12)),
            (.seconds(999_999_999), 0, .seconds(60)), (nil, 40, .seconds(60)), (nil, -1, .seconds(3)),
        ]
        for row in rows {
            XCTAssertEqual(
                policy.wait(serverRetry: row.retry, failures: row.failures, recent: [], now: now), row.wait,
                "retry \(String(describing: row.retry)), failures \(row.failures)")
        }
    }

    func testTheLimitsAreKeptWithinSaneBoundsWhateverIsSet() {
        let policy = ReconnectPolicy(
            delay: .seconds(-1), minimumDelay: .zero, maximumDelay: .zero, maximumAttempts: -3,
            maximumReconnectionsPerMinute: 0)
        XCTAssertEqual(policy.delay, .zero)
        XCTAssertEqual(policy.minimumDelay, .milliseconds(10))
        XCTAssertEqual(policy.maximumDelay, .milliseconds(10))
        XCTAssertEqual(policy.maximumAttempts, 0)
        XCTAssertEqual(policy.maximumReconnectionsPerMinute, 1)
        XCTAssertEqual(ReconnectPolicy(maximumReconnectionsPerMinute: 100_000).maximumReconnectionsPerMinute, 600)
        // Set after creation, the properties are still held to their limits where they are used.
        var settable = ReconnectPolicy.default
        settable.minimumDelay = .zero
        settable.delay = .zero
        settable.maximumReconnectionsPerMinute = -5
        XCTAssertEqual(settable.wait(serverRetry: .zero, failures: 0, recent: [], now: now), .milliseconds(10))
        XCTAssertEqual(settable.reconnectionsPerMinute, 1)
    }

    func testTheDefaultsAreHalfASecondAtLeastAndSixtyAMinuteForGETAndHEADOnly() {
        let policy = ReconnectPolicy.default
        XCTAssertEqual(policy.delay, .seconds(3))
        XCTAssertEqual(policy.minimumDelay, .milliseconds(500))
        XCTAssertEqual(policy.maximumDelay, .seconds(60))
        XCTAssertEqual(policy.maximumAttempts, 5)
        XCTAssertEqual(policy.maximumReconnectionsPerMinute, 60)
        XCTAssertFalse(policy.reconnectsAnyMethod)
    }

    func testAFullMinuteOfReconnectionsMakesTheNextWaitForTheOldestToLeaveTheWindow() {
        let policy = ReconnectPolicy(minimumDelay: .milliseconds(10), maximumReconnectionsPerMinute: 3)
        let serverRetry = Duration.milliseconds(10)
        // Fewer than 3 in the last minute: the usual wait.
        let two = [now - .seconds(5), now - .seconds(1)]
        XCTAssertEqual(policy.wait(serverRetry: serverRetry, failures: 0, recent: two, now: now), .milliseconds(10))
        // 3 in the last minute, the oldest 20 s ago: wait 40 s, past maximumDelay.
        let three = [now - .seconds(20), now - .seconds(10), now - .seconds(1)]
        XCTAssertEqual(policy.wait(serverRetry: serverRetry, failures: 0, recent: three, now: now), .seconds(40))
        // Only the latest 3 count: an older one does not lengthen the wait.
        let four = [now - .seconds(50)] + three
        XCTAssertEqual(policy.wait(serverRetry: serverRetry, failures: 0, recent: four, now: now), .seconds(40))
        // The oldest of the 3 more than a minute ago: the usual wait.
        let old = [now - .seconds(61), now - .seconds(10), now - .seconds(1)]
        XCTAssertEqual(policy.wait(serverRetry: serverRetry, failures: 0, recent: old, now: now), .milliseconds(10))
        // A backoff longer than the window's wait wins.
        let backedOff = ReconnectPolicy(delay: .seconds(50), maximumDelay: .seconds(60), maximumReconnectionsPerMinute: 3)
        XCTAssertEqual(backedOff.wait(serverRetry: nil, failures: 0, recent: three, now: now), .seconds(50))
    }
}
