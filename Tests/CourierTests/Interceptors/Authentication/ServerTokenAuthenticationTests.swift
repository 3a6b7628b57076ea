import CourierTestSupport
import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A bearer token from the test server's own issuer; it says it requires a refresh once
/// `expires` has passed (never, when `nil`).
struct ServerToken: AuthenticationCredential, Equatable {
    let token: String
    var expires: ContinuousClock.Instant?

    var requiresRefresh: Bool { expires.map { ContinuousClock.now >= $0 } ?? false }
}

/// Gets its tokens from `TestServer.issueToken()`, the way a token endpoint that revokes the
/// previous token does (`/authorized/…` accepts only the last one issued); each lasts `lifetime`.
/// With `serverAccepts` false it makes up tokens the server never issued: a refresh loop.
struct ServerTokenAuthenticator: Authenticator {
    let server: TestServer
    var lifetime: Duration?
    var delay: Duration = .milliseconds(100)
    var serverAccepts = true
    let refreshes = Counter()
    let obtained = Counter()

    func apply(_ credential: ServerToken, to request: inout URLRequest) {
        request.setValue("Bearer \(credential.token)", forHTTPHeaderField: "Authorization")
    }

    func refresh(_ credential: ServerToken) async throws -> ServerToken {
        let number = refreshes.increment()
        return try await issue(orMakeUp: "refused-\(number)")
    }

    func obtainCredential() async throws -> ServerToken {
        obtained.increment()
        return try await issue(orMakeUp: "refused-first")
    }

    private func issue(orMakeUp madeUp: String) async throws -> ServerToken {
        try await Task.sleep(for: delay)
        let token = serverAccepts ? server.issueToken() : madeUp
        return ServerToken(token: token, expires: lifetime.map { ContinuousClock.now + $0 })
    }
}

/// `AuthenticationInterceptor` against a server that revokes tokens on its side
/// (`/authorized/…`, Docs/TestServer.md), over real sockets: event streams refresh like every
/// other task (issue 31, item 1), the refresh window counts only refusals, and an interceptor may
/// start without a credential (item 2).
final class ServerTokenAuthenticationTests: CourierTestCase {
    private let retries = Box<TaskRetryEvent>()

    /// A manager whose interceptor is `auth` (adapter and retrier), telling `retries` about every retry.
    private func makeManager(with auth: AuthenticationInterceptor<ServerTokenAuthenticator>) -> SessionManager {
        var configuration = makeConfiguration()
        configuration.interceptor = Interceptor(adapters: [auth], retriers: [auth])
        let retries = retries
        configuration.eventMonitors = [ClosureEventMonitor(onRetry: { _, event in retries.append(event) })]
        return SessionManager(configuration: configuration)
    }

    private func chatRequest(_ number: Int) -> URLRequest {
        var request = request("/authorized/sse?count=3&ids=0&done=1", method: "POST")
        request.httpBody = Data(#"{"stream":true,"messages":[{"role":"user","content":"question \#(number)"}]}"#.utf8)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        return request
    }

    private static func events(_ manager: SessionManager, _ request: URLRequest) async throws(CourierError) -> [String] {
        var events: [String] = []
        for try await event in manager.events(for: request) {
            events.append(event.data)
            if events.count >= 20 { break }  // a stream that reconnects cannot run forever
        }
        return events
    }

    /// The `Authorization` headers the server saw with `body`, in arrival order.
    private func tokens(sentWith body: Data?) -> [String?] {
        server.requests.filter { $0.body == body }.map { $0.header("Authorization") }
    }

    func testFiveConcurrentEventStreamPostsRefusedForARevokedTokenMakeOneRefreshAndAllComplete() async throws {
        // Given a token the server revoked on its side while the client still holds it
        let first = server.issueToken()
        let authenticator = ServerTokenAuthenticator(server: server)
        let auth = AuthenticationInterceptor(authenticator: authenticator, credential: ServerToken(token: first))
        let manager = makeManager(with: auth)
        defer { manager.invalidate(cancelingTasks: true) }
        server.revokeToken()
        // When five LLM-style POST streams start at once
        let requests = (1...5).map(chatRequest)
        let results = await withTaskGroup(of: Result<[String], CourierError>.self) { group in
            for request in requests {
                group.addTask {
                    do throws(CourierError) { return .success(try await Self.events(manager, request)) } catch {
                        return .failure(error)
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        // Then one refresh served them all, and every stream delivered its whole answer
        XCTAssertEqual(authenticator.refreshes.count, 1)
        for result in results {
            XCTAssertEqual(try result.get(), ["event 1", "event 2", "event 3", "[DONE]"])
        }
        // And each POST reached the server at most twice: refused with the revoked token, then
        // accepted with the new one; each refusal was retried where monitors see it
        for request in requests {
            let sent = tokens(sentWith: request.httpBody)
            XCTAssertEqual(sent.last, "Bearer token-2", "\(sent)")
            XCTAssertTrue(sent == ["Bearer token-2"] || sent == ["Bearer \(first)", "Bearer token-2"], "\(sent)")
        }
        let refused = server.requests.filter { $0.header("Authorization") == "Bearer \(first)" }.count
        XCTAssertGreaterThan(refused, 0, "the revoked token was sent")
        // Monitors hear of retries on their own queue: the last event may come after the error.
        waitUntil("every retry event arrives") { retries.all.count >= refused }
        XCTAssertEqual(retries.all.count, refused)
        XCTAssertEqual(retries.all.map { $0.error.response?.statusCode }, Array(repeating: 401, count: refused))
        // And a later stream goes with the new token, once
        server.clearRequests()
        let later = try await Self.events(manager, chatRequest(6))
        XCTAssertEqual(later.last, "[DONE]")
        XCTAssertEqual(server.requests.map { $0.header("Authorization") }, ["Bearer token-2"])
        XCTAssertEqual(auth.credential?.token, "token-2")
    }

    func testAnEventStreamWhoseEveryNewTokenIsRefusedEndsWithExcessiveRefreshAfterTheWindow() async throws {
        // Given a server that refuses every token the authenticator gets, and 2 refreshes in 60 s
        var authenticator = ServerTokenAuthenticator(server: server)
        authenticator.serverAccepts = false
        authenticator.delay = .milliseconds(10)
        let auth = AuthenticationInterceptor(
            authenticator: authenticator, credential: ServerToken(token: "refused-0"),
            refreshWindow: RefreshWindow(interval: .seconds(60), maximumAttempts: 2))
        let manager = makeManager(with: auth)
        defer { manager.invalidate(cancelingTasks: true) }
        // When a POST stream starts
        do {
            let events = try await Self.events(manager, chatRequest(1))
            XCTFail("a refused stream delivered \(events)")
        } catch {
            // Then it fails with excessiveRefresh after two refreshes: three refused sends, each
            // retried, the third's retry refused by the window
            XCTAssertEqual(error.code, .adaptationFailed, "\(error)")
            XCTAssertEqual((error.underlyingError as? AuthenticationError)?.code, .excessiveRefresh, "\(error)")
        }
        XCTAssertEqual(authenticator.refreshes.count, 2)
        XCTAssertEqual(
            server.requests.map { $0.header("Authorization") },
            ["Bearer refused-0", "Bearer refused-1", "Bearer refused-2"])
        // Monitors hear of retries on their own queue: the last event may come after the error.
        waitUntil("the third retry event arrives") { retries.all.count >= 3 }
        XCTAssertEqual(retries.all.count, 3)
    }

    func testAnEventStreamConnectionIsNotRetriedByTheManagersRetryPolicy() async throws {
        // Given a manager whose retry policy retries a 503, and a valid token
        let authenticator = ServerTokenAuthenticator(server: server)
        let auth = AuthenticationInterceptor(authenticator: authenticator, credential: ServerToken(token: server.issueToken()))
        var configuration = makeConfiguration()
        configuration.interceptor = Interceptor(adapters: [auth], retriers: [auth])
        configuration.retryPolicy = RetryPolicy()
        let manager = SessionManager(configuration: configuration)
        defer { manager.invalidate(cancelingTasks: true) }
        // When an event stream is answered 503
        do {
            let events = try await Self.events(manager, request("/authorized/status/503"))
            XCTFail("a 503 delivered \(events)")
        } catch {
            // Then it fails with the 503 after one request: only the refusal retrier was asked
            XCTAssertEqual(error.code, .unacceptableStatusCode, "\(error)")
        }
        XCTAssertEqual(server.requests.count, 1)
        XCTAssertEqual(authenticator.refreshes.count, 0)
    }

    func testTokensThatExpireOftenRefreshMoreOftenThanTheRefreshWindowAllowsWithoutExcessiveRefresh() throws {
        // Given tokens that last 150 ms, and a window of 2 refreshes in 60 s
        var authenticator = ServerTokenAuthenticator(server: server)
        authenticator.lifetime = .milliseconds(150)
        authenticator.delay = .milliseconds(10)
        let auth = AuthenticationInterceptor(
            authenticator: authenticator,
            credential: ServerToken(token: server.issueToken(), expires: .now + .milliseconds(150)),
            refreshWindow: RefreshWindow(interval: .seconds(60), maximumAttempts: 2))
        let manager = makeManager(with: auth)
        defer { manager.invalidate(cancelingTasks: true) }
        // When eight requests go one after another, each after its token expired
        var statuses: [Int?] = []
        for _ in 1...8 {
            Thread.sleep(forTimeInterval: 0.2)
            let response: DataResponse<Data>? = wait { finish in
                manager.dataTask(with: request("/authorized/get"), completion: finish).resume()
            }
            XCTAssertNil(response?.error, "\(String(describing: response?.error))")
            statuses.append(response?.response?.statusCode)
        }
        // Then every request refreshed and succeeded: scheduled refreshes are no loop
        XCTAssertEqual(statuses, Array(repeating: 200, count: 8))
        XCTAssertEqual(authenticator.refreshes.count, 8)
        XCTAssertEqual(server.requests.count, 8, "no request was refused")
    }

    func testConcurrentFirstRequestsOfAnInterceptorWithoutACredentialObtainOneOnce() {
        // Given an interceptor made without a credential
        let authenticator = ServerTokenAuthenticator(server: server)
        let auth = AuthenticationInterceptor(authenticator: authenticator)
        let manager = makeManager(with: auth)
        defer { manager.invalidate(cancelingTasks: true) }
        // When five requests go at once
        let responses = Box<DataResponse<Data>>()
        let done = expectation(description: "every task completed")
        done.expectedFulfillmentCount = 5
        for _ in 1...5 {
            manager.dataTask(with: request("/authorized/get")) {
                responses.append($0); done.fulfill()
            }.resume()
        }
        wait(for: [done], timeout: 15)
        // Then one of them obtained the first credential, the others waited for it, and each
        // went once with it
        XCTAssertEqual(authenticator.obtained.count, 1)
        XCTAssertEqual(authenticator.refreshes.count, 0)
        XCTAssertEqual(responses.all.map { $0.response?.statusCode }, Array(repeating: 200, count: 5))
        XCTAssertEqual(server.requests.map { $0.header("Authorization") }, Array(repeating: "Bearer token-1", count: 5))
        XCTAssertEqual(auth.credential?.token, "token-1")
    }
}
