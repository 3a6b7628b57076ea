import CourierTestSupport
import XCTest
@testable import Courier
import CourierTestServer
import CourierSupport
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The "who tries again" table (``RetryTable``) over real sockets: every kind of transfer meets
/// every failure a socket can produce, and what the monitors are told — the retry events, the
/// stream's reconnections, the queue's changes — names the table's owner, as many times as it says.
/// The no-route column needs a host the kernel has no route to, which this machine's own
/// namespace cannot give without changing its routes: RetryOwnerRouteTests asserts it through
/// the pure decisions (NetworkNamespaceTests does it end to end where it may run).
final class RetryOwnerTableTests: CourierTestCase {
    /// Who tried again, in the order the monitors heard it.
    private let owners = Locked<[RetryOwner]>([])

    private var retry: RetryPolicy {
        var retry = RetryPolicy()
        retry.retryLimit = RetryTable.retryLimit
        retry.initialDelay = .milliseconds(1)
        retry.maximumDelay = .milliseconds(5)
        retry.maximumRetryAfter = .seconds(1)
        return retry
    }

    private let reconnection = ReconnectPolicy(
        delay: .milliseconds(10), minimumDelay: .milliseconds(10), maximumDelay: .milliseconds(20),
        maximumAttempts: RetryTable.retryLimit)

    func testEveryKindAndEveryFailureIsTriedAgainByTheOwnerTheTableNames() async throws {
        for failure in RetryTable.Failure.allCases where failure != .noRoute {
            for kind in RetryTable.Kind.allCases {
                // Given a fresh failing endpoint and a manager that retries
                owners.withLock { $0 = [] }
                let expected = RetryTable.expected(kind, failure)
                // When the kind of transfer meets the failure
                try await run(kind, failing: failure, expecting: expected)
                // Then the owners announced are the table's, as many times as it says
                let seen = owners.withLock { $0 }
                let cell = "\(kind.rawValue) × \(failure.rawValue)"
                XCTAssertEqual(seen.count, expected.count, "\(cell): expected \(expected), saw \(seen)")
                XCTAssertEqual(Set(seen).count <= 1 ? seen.first : nil, expected.owner, "\(cell): expected \(expected), saw \(seen)")
            }
        }
    }

    // MARK: - One cell

    private func run(
        _ kind: RetryTable.Kind, failing failure: RetryTable.Failure, expecting expected: RetryTable.Cell
    ) async throws {
        var configuration = makeConfiguration()
        configuration.retryPolicy = retry
        if failure == .deadline { configuration.deadline = .milliseconds(300) }
        let owners = owners
        configuration.eventMonitors = [
            ClosureEventMonitor(
                onRetry: { _, event in owners.withLock { $0.append(event.owner) } },
                onStreamReconnect: { event in owners.withLock { $0.append(event.owner) } })
        ]
        if failure == .unauthorized {
            let auth = AuthenticationInterceptor(authenticator: TokenSwap(), credential: TokenSwap.Token(value: "old"))
            configuration.interceptor = Interceptor(adapters: [auth], retriers: [auth])
        }
        let manager = SessionManager(configuration: configuration)
        defer { manager.invalidate(cancelingTasks: true) }

        var stops: [() -> Void] = []
        defer { stops.forEach { $0() } }
        let url: URL
        func failing(_ way: FailingOrigin.Way) throws -> URL {
            let origin = try FailingOrigin(way, name: "retry-table")
            stops.append(origin.stop)
            return origin.url
        }
        switch failure {
        case .refused: url = try failing(.refused)
        case .reset: url = try failing(.reset)
        case .dns: url = try failing(.dns)
        case .tls: url = try failing(.tls)
        case .unavailableRetryAfter: url = try failing(.unavailable(retryAfter: "0"))
        case .deadline: url = try failing(.silent)
        case .unauthorized:
            let server = try ScriptedServer { request, _ in
                guard request.header("Authorization") == "Bearer new" else {
                    return .response(
                        status: 401, reason: "Unauthorized",
                        headers: [
                            ("WWW-Authenticate", "Bearer"), ("Content-Length", "0"),
                        ])
                }
                if request.header("Accept")?.contains("text/event-stream") == true {
                    // An event, then silence: the stream is ended by its reader, never reconnects.
                    return .response(
                        status: 200, headers: [("Content-Type", "text/event-stream")],
                        body: Data("data: ok\n\n".utf8), ending: .hang)
                }
                return .response(status: 200, headers: [("Content-Length", "2"), ("ETag", "\"v1\"")], body: Data("ok".utf8))
            }
            stops.append(server.stop)
            url = server.url("/token")
        case .noRoute:
            return XCTFail("not over sockets: RetryOwnerRouteTests")
        }
        try await perform(kind, URLRequest(url: url), on: manager)
        // The announcements are queued before the end; wait until the monitors saw them.
        let deadline = Date().addingTimeInterval(2)
        while owners.withLock({ $0.count }) < expected.count, Date() < deadline { try await Task.sleep(for: .milliseconds(5)) }
        try await Task.sleep(for: .milliseconds(20))  // room for a wrongful extra one
    }

    private func perform(_ kind: RetryTable.Kind, _ request: URLRequest, on manager: SessionManager) async throws {
        var policy = DownloadPolicy()
        policy.retry = retry
        switch kind {
        case .data:
            await withCheckedContinuation { continuation in
                manager.dataTask(with: request) { _ in continuation.resume() }.resume()
            }
        case .download, .splitDownload:
            if kind == .splitDownload { policy.split = .connections(4) }
            let destination = directory.appendingPathComponent(UUID().uuidString)
            await withCheckedContinuation { continuation in
                manager.downloadTask(with: request, to: .file(destination), policy: policy) { _ in
                    continuation.resume()
                }.resume()
            }
        case .stream:
            do {
                let (bytes, _) = try await manager.bytes(for: request)
                for try await _ in bytes {}
            } catch {}
        case .eventStream:
            do {
                for try await _ in manager.events(for: request, reconnection: reconnection) { break }
            } catch {}
        case .queueItem:
            var configuration = DownloadQueue.Configuration()
            configuration.policy = policy
            let queueDirectory = directory.appendingPathComponent("queue-\(UUID().uuidString)")
            let queue = try DownloadQueue(directory: queueDirectory, manager: manager, configuration: configuration)
            let owners = owners
            let token = queue.addObserver { change in
                if let retry = change.retry { owners.withLock { $0.append(retry) } }
            }
            defer { queue.removeObserver(token) }
            let url = try XCTUnwrap(request.url)
            let item = try queue.add(DownloadQueue.NewItem(url: url, to: directory.appendingPathComponent(UUID().uuidString)))
            let deadline = Date().addingTimeInterval(10)
            while queue.item(item.id)?.state.isFinished != true, Date() < deadline { try await Task.sleep(for: .milliseconds(5)) }
            await queue.stop()
        }
    }
}

/// Swaps the token `old` for `new` on refresh: what a server that expired a token expects.
private struct TokenSwap: Authenticator {
    struct Token: AuthenticationCredential {
        let value: String
        var requiresRefresh: Bool { false }
    }

    func apply(_ credential: Token, to request: inout URLRequest) {
        request.setValue("Bearer \(credential.value)", forHTTPHeaderField: "Authorization")
    }

    func refresh(_ credential: Token) async throws -> Token { Token(value: "new") }
}
