import XCTest
@testable import Courier
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

final class ConfigurationTests: XCTestCase {
    func testServerDefaultsTurnOffCookiesAndCache() {
        let configuration = SessionManager.Configuration().resolvedURLSessionConfiguration()
        XCTAssertNil(configuration.urlCache)
        XCTAssertEqual(configuration.httpCookieAcceptPolicy, .never)
        XCTAssertFalse(configuration.httpShouldSetCookies)
        XCTAssertFalse(configuration.httpCookieStorage === HTTPCookieStorage.shared, "never the shared, file-backed jar")
    }

    func testCacheIsRemovedEvenFromACallerConfiguration() {
        var configuration = SessionManager.Configuration()
        configuration.urlSessionConfiguration = .default
        XCTAssertNotNil(configuration.urlSessionConfiguration.urlCache)
        XCTAssertNil(configuration.resolvedURLSessionConfiguration().urlCache)
    }

    func testEnableCookiesUsesAPrivateJar() {
        var configuration = SessionManager.Configuration()
        configuration.enableCookies()
        let resolved = configuration.resolvedURLSessionConfiguration()
        XCTAssertEqual(resolved.httpCookieAcceptPolicy, .always)
        XCTAssertTrue(resolved.httpShouldSetCookies)
        XCTAssertNotNil(resolved.httpCookieStorage)
        XCTAssertFalse(resolved.httpCookieStorage === HTTPCookieStorage.shared)
    }

    func testTheRunningTaskCapIsURLSessionsConnectionLimitWhateverTheCallerSet() {
        // A cap above URLSession's limit and one below it both become that limit…
        for (own, cap) in [(2, 8), (6, 16), (32, 4)] {
            var configuration = SessionManager.Configuration()
            configuration.urlSessionConfiguration.httpMaximumConnectionsPerHost = own
            configuration.maximumRunningTasksPerHost = cap
            XCTAssertEqual(configuration.resolvedURLSessionConfiguration().httpMaximumConnectionsPerHost, cap, "\(own), \(cap)")
        }
        // …and with no cap the caller's limit stays.
        var uncapped = SessionManager.Configuration()
        uncapped.urlSessionConfiguration.httpMaximumConnectionsPerHost = 3
        uncapped.maximumRunningTasksPerHost = nil
        XCTAssertEqual(uncapped.resolvedURLSessionConfiguration().httpMaximumConnectionsPerHost, 3)
    }

    func testTimeoutsAreRoundedUpToWholeSeconds() {
        XCTAssertEqual(SessionManager.Configuration.wholeSeconds(0.5), 1)
        XCTAssertEqual(SessionManager.Configuration.wholeSeconds(1.2), 2)
        XCTAssertEqual(SessionManager.Configuration.wholeSeconds(30), 30)
        XCTAssertEqual(SessionManager.Configuration.wholeSeconds(-3), 60)
        XCTAssertEqual(SessionManager.Configuration.wholeSeconds(.infinity), 60)
    }

    func testRequestTimeoutIsRoundedWhenPrepared() {
        let manager = SessionManager()
        var request = URLRequest(url: URL(string: "http://127.0.0.1/")!)
        request.timeoutInterval = 0.3
        XCTAssertEqual(manager.prepared(request).timeoutInterval, 1)
    }

    func testErrorDescriptionNamesCodeURLAndUnderlyingError() {
        let error = CourierError(
            code: .timedOut, message: "too slow", url: URL(string: "http://127.0.0.1/slow"),
            underlyingError: URLError(.timedOut))
        XCTAssertTrue(error.description.hasPrefix("timedOut: too slow"), error.description)
        XCTAssertTrue(error.description.contains("http://127.0.0.1/slow"))
        XCTAssertTrue(error.description.contains("underlying"))
        XCTAssertNotEqual(CourierError.Code.timedOut, .network)
    }
}
