import XCTest
@testable import Courier
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The one rule for sending a request again by itself (AutomaticResend.swift), row by row.
final class AutomaticResendTests: XCTestCase {
    private func request(_ method: String?) -> URLRequest {
        var request = URLRequest(url: URL(string: "http://127.0.0.1/v1/chat/completions")!)
        if let method { request.httpMethod = method }
        return request
    }

    func testOnlyGETAndHEADReconnectUnlessTheCallerOptsIn() {
        let rows: [(method: String?, optedIn: Bool, allowed: Bool)] = [
            (nil, false, true), ("GET", false, true), ("get", false, true), ("HEAD", false, true),
            ("POST", false, false), ("PUT", false, false), ("PATCH", false, false), ("DELETE", false, false),
            ("OPTIONS", false, false), ("PROPFIND", false, false),
            ("POST", true, true), ("PATCH", true, true), ("GET", true, true),
        ]
        for row in rows {
            XCTAssertEqual(
                AutomaticResend.isAllowed(.reconnection, for: request(row.method), optedIn: row.optedIn), row.allowed,
                "\(row.method ?? "default") opted in: \(row.optedIn)")
        }
    }

    func testOnlyAGETIsContinuedWithRangeOptedInOrNot() {
        let rows: [(method: String?, allowed: Bool)] = [
            (nil, true), ("GET", true), ("HEAD", false), ("POST", false), ("PUT", false), ("DELETE", false),
        ]
        for row in rows {
            for optedIn in [false, true] {
                XCTAssertEqual(
                    AutomaticResend.isAllowed(.rangeContinuation, for: request(row.method), optedIn: optedIn), row.allowed,
                    "\(row.method ?? "default") opted in: \(optedIn)")
            }
        }
    }
}
