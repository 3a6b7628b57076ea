import CourierTestSupport
import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `AuthenticationInterceptor` over real sockets: `/bearer/{token}` answers 401 unless the request
/// carries `Bearer {token}`, so asking for a token the client does not hold expires its credential.
final class AuthenticationInterceptorTests: CourierTestCase {
    private let logged = Box<LoggingMonitor.Record>()

    override func makeConfiguration() -> SessionManager.Configuration {
        var configuration = super.makeConfiguration()
        let logged = logged
        configuration.eventMonitors = [LoggingMonitor(level: .trace) { logged.append($0) }]
        return configuration
    }

    private struct TokenEndpointError: Error, CustomStringConvertible {
        let refreshToken: String
        var description: String { "the token endpoint refused refresh token \(refreshToken)" }
    }

    /// Runs one data task per request through `auth` and returns each task's responses (one per
    /// completion, so a second completion shows).
    private func run(
        _ requests: [URLRequest], with auth: AuthenticationInterceptor<TestAuthenticator>, timeout: TimeInterval = 20,
        whileWaiting: ([DataTask]) -> Void = { _ in }
    ) -> [[DataResponse<Data>]] {
        let boxes = requests.map { _ in Box<DataResponse<Data>>() }
        let done = expectation(description: "every task completed")
        done.expectedFulfillmentCount = requests.count
        let tasks = zip(requests, boxes).map { request, box in
            manager.dataTask(with: request) { response in
                if box.append(response) == 1 { done.fulfill() }
            }
            .intercept(with: Interceptor(adapters: [auth], retriers: [auth]))
        }
        tasks.forEach { $0.resume() }
        whileWaiting(tasks)
        wait(for: [done], timeout: timeout)
        Thread.sleep(forTimeInterval: 0.05)  // room for a wrongful second completion
        return boxes.map(\.all)
    }

    private func tokens(_ path: String) -> [String?] {
        server.requests.filter { $0.path == path }.map { $0.header("Authorization") }
    }

    /// An interceptor whose credential must be refreshed first, by a refresh that waits until
    /// the test opens `gate`.
    private func gatedRefresh() -> (Gate, TestAuthenticator, AuthenticationInterceptor<TestAuthenticator>) {
        let gate = Gate()
        let authenticator = TestAuthenticator { _ in
            try await gate.wait()
            return TestCredential(token: "new")
        }
        let auth = AuthenticationInterceptor(
            authenticator: authenticator, credential: TestCredential(token: "old", requiresRefresh: true))
        return (gate, authenticator, auth)
    }

    func testTenConcurrentRequestsRefusedForAnExpiredTokenMakeOneRefreshAndAllSucceedWithTheNewToken() {
        // Given a token the server no longer accepts, and a refresh that takes a moment
        let authenticator = TestAuthenticator { _ in
            try await Task.sleep(for: .milliseconds(100))
            return TestCredential(token: "new")
        }
        let auth = AuthenticationInterceptor(authenticator: authenticator, credential: TestCredential(token: "old"))
        // When ten requests go at once and all get a 401 (answered after 300 ms, so that all ten
        // have left with the old token before the first 401 comes back)
        let responses = run(Array(repeating: request("/bearer/new?delay_ms=300"), count: 10), with: auth)
        // Then one refresh served them all, and each completed once with a 200
        XCTAssertEqual(authenticator.refreshes.count, 1)
        XCTAssertEqual(responses.map(\.count), Array(repeating: 1, count: 10))
        XCTAssertEqual(responses.compactMap { $0.first?.response?.statusCode }, Array(repeating: 200, count: 10))
        XCTAssertEqual(tokens("/bearer/new").filter { $0 == "Bearer old" }.count, 10, "ten 401s")
        XCTAssertEqual(tokens("/bearer/new").filter { $0 == "Bearer new" }.count, 10)
        XCTAssertEqual(auth.credential, TestCredential(token: "new"))
    }

    func testTenConcurrentRequestsWhoseTokenRequiresRefreshWaitForOneRefreshAndSendOnlyTheNewToken() {
        // Given a credential that knows it has expired
        let authenticator = TestAuthenticator { _ in
            try await Task.sleep(for: .milliseconds(100))
            return TestCredential(token: "new")
        }
        let auth = AuthenticationInterceptor(
            authenticator: authenticator, credential: TestCredential(token: "old", requiresRefresh: true))
        // When ten requests go at once
        let responses = run(Array(repeating: request("/bearer/new"), count: 10), with: auth)
        // Then they waited for one refresh, and nothing left with the old token
        XCTAssertEqual(authenticator.refreshes.count, 1)
        XCTAssertEqual(responses.compactMap { $0.first?.response?.statusCode }, Array(repeating: 200, count: 10))
        XCTAssertEqual(tokens("/bearer/new"), Array(repeating: "Bearer new", count: 10))
    }

    func testARequestThatLeftWithTheOldTokenDuringARefreshIsRetriedWithoutASecondRefresh() {
        // Given a slow request that left with the old token
        let authenticator = TestAuthenticator { _ in
            try await Task.sleep(for: .milliseconds(100))
            return TestCredential(token: "new")
        }
        let auth = AuthenticationInterceptor(authenticator: authenticator, credential: TestCredential(token: "old"))
        let slow = Box<DataResponse<Data>>()
        let slowDone = expectation(description: "slow request")
        manager.dataTask(with: request("/bearer/new?delay_ms=1500")) { if slow.append($0) == 1 { slowDone.fulfill() } }
            .intercept(with: Interceptor(adapters: [auth], retriers: [auth])).resume()
        waitUntil("the slow request reached the server") { server.requests.count == 1 }
        // When a fast request's 401 refreshes the token while the slow one is out, and then the
        // slow one's 401 arrives
        let fast = run([request("/bearer/new")], with: auth)
        XCTAssertEqual(authenticator.refreshes.count, 1, "the fast request refreshed before the slow 401 arrived")
        wait(for: [slowDone], timeout: 10)
        Thread.sleep(forTimeInterval: 0.05)
        // Then the slow request was sent again with the new token, and nothing refreshed again
        XCTAssertEqual(fast.first?.first?.response?.statusCode, 200)
        XCTAssertEqual(slow.all.map { $0.response?.statusCode }, [200])
        XCTAssertEqual(tokens("/bearer/new"), ["Bearer old", "Bearer old", "Bearer new", "Bearer new"])
        XCTAssertEqual(authenticator.refreshes.count, 1)
    }

    func testARefreshFailureFailsEveryWaitingRequestOnceWithTheOneTypedErrorAndNoSecret() throws {
        // Given an expired token whose refresh fails with an error that names the refresh token
        let authenticator = TestAuthenticator { _ in
            try await Task.sleep(for: .milliseconds(100))
            throw TokenEndpointError(refreshToken: "secret-refresh-token")
        }
        let auth = AuthenticationInterceptor(
            authenticator: authenticator, credential: TestCredential(token: "secret-access-token", requiresRefresh: true))
        // When ten requests wait for it
        let responses = run(Array(repeating: request("/bearer/new"), count: 10), with: auth)
        // Then each completed once with adaptationFailed wrapping refreshFailed, nothing was sent,
        // and no text holds a token
        XCTAssertEqual(authenticator.refreshes.count, 1)
        XCTAssertEqual(responses.map(\.count), Array(repeating: 1, count: 10))
        XCTAssertTrue(server.requests.isEmpty)
        for response in responses.compactMap(\.first) {
            let error = try XCTUnwrap(response.error)
            XCTAssertEqual(error.code, .adaptationFailed)
            let cause = try XCTUnwrap(error.underlyingError as? AuthenticationError)
            XCTAssertEqual(cause.code, .refreshFailed)
            XCTAssertTrue(cause.underlyingError is TokenEndpointError)
            XCTAssertTrue(error.message.contains("refresh failed"), error.message)
            XCTAssertFalse(error.description.contains("secret"), error.description)
        }
    }

    func testTheRefreshWindowStopsARefreshStorm() throws {
        // Given a server that refuses every token, and at most 2 refreshes a minute
        let authenticator = TestAuthenticator { TestCredential(token: "token-\($0)") }
        let auth = AuthenticationInterceptor(
            authenticator: authenticator, credential: TestCredential(token: "token-0"),
            refreshWindow: RefreshWindow(interval: .seconds(60), maximumAttempts: 2))
        // When one request is refused again after every refresh
        let response = try XCTUnwrap(run([request("/bearer/never")], with: auth).first?.first)
        // Then the third refresh is refused, and the request fails with excessiveRefresh
        XCTAssertEqual(authenticator.refreshes.count, 2)
        XCTAssertEqual(tokens("/bearer/never"), ["Bearer token-0", "Bearer token-1", "Bearer token-2"])
        XCTAssertEqual(response.error?.code, .adaptationFailed)
        XCTAssertEqual((response.error?.underlyingError as? AuthenticationError)?.code, .excessiveRefresh)
    }

    func testCancellingAWaitingRequestCompletesItAsCancelledAndLeavesTheOthersWaiting() {
        // Given three requests waiting for a refresh that waits for the test
        let (gate, authenticator, auth) = gatedRefresh()
        let responses = run(Array(repeating: request("/bearer/new"), count: 3), with: auth) { tasks in
            waitUntil("all three wait") { auth.waitingRequestCount == 3 }
            // When the first is cancelled
            let cancelled = Date()
            tasks[0].cancel()
            waitUntil("the cancelled task completed", timeout: 2) { tasks[0].state == .completed }
            XCTAssertLessThan(Date().timeIntervalSince(cancelled), 2)
            XCTAssertNotEqual(tasks[1].state, .completed, "the others still wait")
            gate.open()
        }
        // Then it completed once as cancelled; the others once with the new token
        XCTAssertEqual(responses.map(\.count), [1, 1, 1])
        XCTAssertEqual(responses[0].first?.error?.code, .cancelled)
        XCTAssertEqual(responses[1...].compactMap { $0.first?.response?.statusCode }, [200, 200])
        XCTAssertEqual(tokens("/bearer/new"), ["Bearer new", "Bearer new"])
        XCTAssertEqual(authenticator.refreshes.count, 1)
    }

    func testARefreshThatHangsFailsItsWaitersWhenItsTimeoutPasses() throws {
        // Given a refresh that never ends by itself, and a 200 ms refresh timeout
        let authenticator = TestAuthenticator { _ in
            try await Task.sleep(for: .seconds(60))
            return TestCredential(token: "new")
        }
        let auth = AuthenticationInterceptor(
            authenticator: authenticator, credential: TestCredential(token: "old", requiresRefresh: true),
            refreshTimeout: .milliseconds(200))
        // When two requests wait for it
        let responses = run(Array(repeating: request("/bearer/new"), count: 2), with: auth, timeout: 5)
        // Then both fail once with refreshTimedOut
        XCTAssertEqual(responses.map(\.count), [1, 1])
        for response in responses.compactMap(\.first) {
            XCTAssertEqual((response.error?.underlyingError as? AuthenticationError)?.code, .refreshTimedOut)
        }
    }

    func testInvalidatingTheManagerWhileRequestsWaitCompletesEachOnceWhenTheRefreshEndsAndSendsNothing() {
        // Given three requests waiting for a refresh that waits for the test
        let (gate, _, auth) = gatedRefresh()
        let responses = run(Array(repeating: request("/bearer/new"), count: 3), with: auth, timeout: 5) { _ in
            waitUntil("all three wait") { auth.waitingRequestCount == 3 }
            // When the manager goes away, and then the refresh ends
            manager.invalidate(cancelingTasks: true)
            gate.open()
        }
        // Then the refresh released each once, each task completed once as invalidated, and
        // nothing was sent. (Invalidation does not reach a task whose adapter has not answered:
        // Interceptors.md; `refreshTimeout` bounds that wait.)
        XCTAssertEqual(auth.waitingRequestCount, 0)
        XCTAssertEqual(responses.map(\.count), [1, 1, 1])
        XCTAssertEqual(responses.map { $0.first?.error?.code }, Array(repeating: .sessionInvalidated, count: 3))
        XCTAssertTrue(server.requests.isEmpty)
    }

    func testNeitherTokenAppearsInAnyLogRecordOrError() throws {
        // Given a refused token, a refresh to a new one, and a trace-level log
        let authenticator = TestAuthenticator { _ in TestCredential(token: "new-secret-token") }
        let auth = AuthenticationInterceptor(
            authenticator: authenticator, credential: TestCredential(token: "old-secret-token"))
        // When a request is refused, refreshed and sent again
        let response = try XCTUnwrap(run([request("/bearer/new-secret-token")], with: auth).first?.first)
        // Then it succeeded, and no log record names either token
        XCTAssertEqual(response.response?.statusCode, 200)
        XCTAssertEqual(tokens("/bearer/new-secret-token"), ["Bearer old-secret-token", "Bearer new-secret-token"])
        XCTAssertFalse(logged.all.isEmpty)
        for record in logged.all {
            let text = record.message + " " + record.metadata.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            XCTAssertFalse(text.contains("old-secret-token"), text)
            XCTAssertFalse(text.replacingOccurrences(of: "/bearer/new-secret-token", with: "").contains("new-secret-token"), text)
        }
    }
}
