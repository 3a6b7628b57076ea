import XCTest
@testable import Courier

/// ``StreamPolicy``'s waits and the URLSession timeout derived from them, without sockets.
final class StreamPolicyTests: XCTestCase {
    func testTheHeadLimitIsTheHeadTimeoutElseTheIdleTimeout() {
        XCTAssertNil(StreamPolicy().headLimit)
        XCTAssertEqual(StreamPolicy(idleTimeout: .seconds(5)).headLimit, .seconds(5))
        XCTAssertEqual(StreamPolicy(headTimeout: .seconds(90), idleTimeout: .seconds(5)).headLimit, .seconds(90))
        XCTAssertEqual(StreamPolicy(headTimeout: .seconds(90)).headLimit, .seconds(90))
    }

    func testURLSessionNeverCutsAWaitThePolicyAllows() {
        let unlimited = StreamPolicy.unlimitedURLSessionTimeout
        let rows: [(head: Duration?, idle: Duration?, timeout: TimeInterval)] = [
            (nil, nil, unlimited),
            // A limit on the head only: the silence after it has none.
            (.seconds(90), nil, unlimited),
            // Both limits: the longer, in whole seconds rounded up, plus one.
            (nil, .milliseconds(300), 2), (nil, .seconds(5), 6), (.seconds(90), .seconds(5), 91),
            (.milliseconds(2500), .milliseconds(300), 4),
            // Never more than "no limit".
            (.seconds(1_000_000_000), .seconds(1), unlimited),
        ]
        for row in rows {
            let policy = StreamPolicy(headTimeout: row.head, idleTimeout: row.idle)
            XCTAssertEqual(
                policy.urlSessionTimeout, row.timeout, "head \(String(describing: row.head)), idle \(String(describing: row.idle))")
            if let limit = policy.headLimit, row.idle != nil, policy.urlSessionTimeout < unlimited {
                XCTAssertGreaterThan(policy.urlSessionTimeout, max(limit, row.idle!).seconds)
            }
        }
        // A year: finite, so FoundationNetworking's millisecond timer can hold it.
        XCTAssertEqual(unlimited, 365 * 86_400)
    }
}
