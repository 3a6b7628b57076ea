import Foundation
import XCTest
@testable import Courier

/// The one rule after a transport failure when the host may have no route, as a table: no
/// socket, no kernel (whether the route is gone is an argument).
final class RouteRuleTests: XCTestCase {
    private func failure(_ code: CourierError.Code) -> CourierError {
        CourierError(code: code, message: "test", url: URL(string: "http://example.com/"))
    }

    func testAFailureWithTheRouteGoneWaitsWhenAskedAndFailsNamingTheNetworkOtherwise() {
        for code in [CourierError.Code.connectionRefused, .dnsFailed, .connectionLost, .timedOut, .network] {
            XCTAssertEqual(
                RouteRule.after(failure(code), routeIsGone: true, waitsForConnectivity: true, maySendAgain: true), .waitForRoute, "\(code)")
            XCTAssertEqual(
                RouteRule.after(failure(code), routeIsGone: true, waitsForConnectivity: false, maySendAgain: true), .failUnreachable,
                "\(code)")
        }
    }

    func testARequestThatWasSentAndMayNotBeSentAgainFailsRatherThanWaits() {
        // A lost connection may have delivered the request; a refusal or a DNS failure sent nothing
        XCTAssertEqual(
            RouteRule.after(failure(.connectionLost), routeIsGone: true, waitsForConnectivity: true, maySendAgain: false),
            .failUnreachable)
        XCTAssertEqual(
            RouteRule.after(failure(.connectionRefused), routeIsGone: true, waitsForConnectivity: true, maySendAgain: false),
            .waitForRoute)
    }

    func testTheRuleDoesNotApplyWithARouteOrToOtherFailures() {
        XCTAssertNil(RouteRule.after(failure(.connectionRefused), routeIsGone: false, waitsForConnectivity: true, maySendAgain: true))
        XCTAssertNil(RouteRule.after(nil, routeIsGone: true, waitsForConnectivity: true, maySendAgain: true))
        for code in [CourierError.Code.networkUnreachable, .invalidResponse, .cancelled, .unacceptableStatusCode] {
            XCTAssertNil(RouteRule.after(failure(code), routeIsGone: true, waitsForConnectivity: true, maySendAgain: true), "\(code)")
        }
    }
}
