import XCTest
@testable import Courier
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// ``Backoff``, the one backoff of requests, downloads and event-stream reconnection, without sockets.
final class BackoffTests: XCTestCase {
    private let defaults = Backoff(initial: .milliseconds(250), maximum: .seconds(30), maximumRetryAfter: .seconds(120))

    func testTheBaseDoublesFromTheInitialDelayUpToTheMaximum() {
        let bases = (1...10).map { defaults.base(attempt: $0) }
        XCTAssertEqual(
            bases,
            [
                .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(16),
                .seconds(30), .seconds(30), .seconds(30),
            ],
            "the table in Backoff's doc comment")
        XCTAssertEqual(defaults.base(attempt: 0), .milliseconds(250), "below 1 counts as 1")
        XCTAssertEqual(defaults.base(attempt: -5), .milliseconds(250))
    }

    func testEqualJitterStaysBetweenHalfTheBaseAndTheBase() {
        for attempt in 1...12 {
            let base = defaults.base(attempt: attempt)
            XCTAssertEqual(defaults.delay(attempt: attempt, random: { _ in 0 }), base / 2, "attempt \(attempt): lowest")
            XCTAssertEqual(defaults.delay(attempt: attempt, random: { _ in 1 }), base, "attempt \(attempt): highest")
            for _ in 0..<50 {
                let delay = defaults.delay(attempt: attempt)
                XCTAssertTrue(delay >= base / 2 && delay <= base, "attempt \(attempt): \(delay)")
            }
        }
        // A random source out of range is held to it.
        XCTAssertEqual(defaults.delay(attempt: 1, random: { _ in 7 }), .milliseconds(250))
        XCTAssertEqual(defaults.delay(attempt: 1, random: { _ in -7 }), .milliseconds(125))
    }

    func testNoJitterIsTheBaseItself() {
        let exact = Backoff(initial: .seconds(3), maximum: .seconds(60), jitter: .none)
        XCTAssertEqual((1...7).map { exact.delay(attempt: $0) }, [3, 6, 12, 24, 48, 60, 60].map { Duration.seconds($0) })
    }

    func testRetryAfterSecondsAndDatesReplaceTheBackoffUpToTheCap() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        XCTAssertEqual(defaults.delay(attempt: 5, retryAfter: "2", now: now), .seconds(2), "seconds, no jitter")
        XCTAssertEqual(defaults.delay(attempt: 1, retryAfter: " 0 ", now: now), .zero)
        XCTAssertEqual(
            defaults.delay(attempt: 1, retryAfter: "Tue, 14 Nov 2023 22:14:20 GMT", now: now), .seconds(60), "an HTTP date")
        XCTAssertEqual(
            defaults.delay(attempt: 1, retryAfter: "Tue, 14 Nov 2023 22:00:00 GMT", now: now), .zero, "a date in the past")
        XCTAssertEqual(defaults.delay(attempt: 1, retryAfter: "3600", now: now), .seconds(120), "capped")
        XCTAssertEqual(defaults.delay(attempt: 1, retryAfter: "Fri, 31 Dec 9999 23:59:59 GMT", now: now), .seconds(120))
        // Unreadable: the backoff.
        for unreadable in ["soon", "-5", "", "1.5", "0x10"] {
            let delay = defaults.delay(attempt: 1, retryAfter: unreadable, now: now)
            XCTAssertTrue(delay >= .milliseconds(125) && delay <= .milliseconds(250), "\(unreadable): \(delay)")
        }
    }

    func testHugeValuesNeverTrap() {
        let now = Date()
        let huge = Backoff(initial: .seconds(Int64.max / 4), maximum: .seconds(Int64.max / 2), maximumRetryAfter: .seconds(Int64.max / 2))
        XCTAssertEqual(huge.base(attempt: Int.max), .seconds(Int64.max / 2))
        let jittered = huge.delay(attempt: Int.max, random: { _ in 1 })
        XCTAssertTrue(jittered <= .seconds(Int64.max / 2) && jittered >= .seconds(Int64.max / 4), "\(jittered)")
        XCTAssertEqual(huge.delay(attempt: 1, retryAfter: String(repeating: "9", count: 400), now: now), .seconds(1_000_000_000))
        let zero = Backoff(initial: .zero, maximum: .seconds(1))
        XCTAssertEqual(zero.base(attempt: Int.max), .zero, "a zero initial delay stays zero, and the doubling stops")
        let negative = Backoff(initial: .seconds(-1), maximum: .seconds(-1), maximumRetryAfter: .seconds(-1))
        XCTAssertEqual(negative.delay(attempt: 3, retryAfter: "5", now: now), .zero)
        XCTAssertEqual(negative.delay(attempt: 3), .zero)
    }

    func testTheRequestedDelayIsUncappedAndRoundedUp() throws {
        func response(_ retryAfter: String?) -> HTTPURLResponse {
            HTTPURLResponse(
                url: URL(string: "http://h/")!, statusCode: 503, httpVersion: "HTTP/1.1",
                headerFields: retryAfter.map { ["Retry-After": $0] } ?? [:])!
        }
        XCTAssertEqual(Backoff.requestedDelay(of: response("999999")), .seconds(999_999))
        XCTAssertEqual(Backoff.requestedDelay(of: response("99999999999")), .seconds(1_000_000_000), "at most 10⁹ s")
        XCTAssertNil(Backoff.requestedDelay(of: response(nil)))
    }

    func testEveryPolicyTakesItsDelaysFromBackoff() {
        var retry = RetryPolicy()
        retry.initialDelay = .milliseconds(100)
        retry.maximumDelay = .seconds(1)
        XCTAssertEqual(retry.backoff, Backoff(initial: .milliseconds(100), maximum: .seconds(1), maximumRetryAfter: .seconds(120)))
        XCTAssertEqual(
            DownloadPolicy().retry.backoff, Backoff(initial: .milliseconds(250), maximum: .seconds(30), maximumRetryAfter: .seconds(120)))
        let reconnect = ReconnectPolicy(delay: .seconds(3), minimumDelay: .milliseconds(500), maximumDelay: .seconds(60))
        let now = ContinuousClock.now
        for failures in 0..<8 {
            XCTAssertEqual(
                reconnect.wait(serverRetry: nil, failures: failures, recent: [], now: now),
                Backoff(initial: .seconds(3), maximum: .seconds(60), jitter: .none).delay(attempt: failures + 1))
        }
    }
}
