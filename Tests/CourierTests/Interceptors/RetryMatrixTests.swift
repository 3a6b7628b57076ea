import CourierTestSupport
import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One retry model, over real sockets: every kind of task — data, download, stream
/// (`bytes(for:)`) and event stream — meets every kind of failure, and each makes the attempts
/// the one definition of transient (``CourierError/Code-swift.struct/isTransient``) and the one
/// retry decision say, ending with the same typed error. Every policy allows 2 retries (an
/// event stream: 2 reconnections), so "retried" is 3 attempts and "not retried" is 1.
final class RetryMatrixTests: CourierTestCase {
    enum Kind: String, CaseIterable { case data, download, stream, eventStream }

    enum Failure: String, CaseIterable {
        case refused, reset, dns, tls, unavailableRetryAfter, retryAfterBeyondCap, deadline
    }

    /// What one cell expects: attempts made, and the final code.
    struct Expectation {
        let attempts: Int
        let code: CourierError.Code
    }

    /// The table. An event stream ends at any refused status without reconnecting (WHATWG), so
    /// its 503 is one attempt; everything else is the same for every kind.
    static func expected(_ kind: Kind, _ failure: Failure) -> Expectation {
        switch failure {
        case .refused: return Expectation(attempts: 3, code: .connectionRefused)
        case .reset: return Expectation(attempts: 3, code: .connectionLost)
        case .dns: return Expectation(attempts: 1, code: .dnsFailed)
        case .tls: return Expectation(attempts: 1, code: .tlsFailed)
        case .unavailableRetryAfter:
            return Expectation(attempts: kind == .eventStream ? 1 : 3, code: .unacceptableStatusCode)
        case .retryAfterBeyondCap: return Expectation(attempts: 1, code: .unacceptableStatusCode)
        case .deadline: return Expectation(attempts: 1, code: .deadlineExceeded)
        }
    }

    /// What one cell did: the error, the attempts the client announced (retries and
    /// reconnections, plus the first), and the attempts the server saw (`nil` without a server).
    struct Outcome {
        let error: CourierError?
        let clientAttempts: Int
        let serverAttempts: Int?
    }

    private var retry: RetryPolicy {
        var retry = RetryPolicy()
        retry.retryLimit = 2
        retry.initialDelay = .milliseconds(1)
        retry.maximumDelay = .milliseconds(5)
        retry.maximumRetryAfter = .seconds(2)
        return retry
    }

    private let reconnection = ReconnectPolicy(
        delay: .milliseconds(10), minimumDelay: .milliseconds(10), maximumDelay: .milliseconds(20), maximumAttempts: 2)

    func testEveryKindMakesTheAttemptsTheOneRetryModelSaysForEveryFailure() async throws {
        for failure in Failure.allCases {
            for kind in Kind.allCases {
                // Given a fresh failing endpoint and a manager that retries
                let outcome = try await run(kind, failing: failure)
                // Then the attempts and the final error are the table's
                let expected = Self.expected(kind, failure)
                let cell = "\(kind.rawValue) × \(failure.rawValue)"
                XCTAssertEqual(outcome.error?.code, expected.code, "\(cell): \(String(describing: outcome.error))")
                XCTAssertEqual(outcome.clientAttempts, expected.attempts, "\(cell): attempts announced")
                if let seen = outcome.serverAttempts {
                    XCTAssertEqual(seen, expected.attempts, "\(cell): attempts the server saw")
                }
                if failure == .retryAfterBeyondCap, kind != .eventStream {
                    XCTAssertTrue(
                        outcome.error?.message.contains("11.6 days") == true || kind != .download,
                        "\(cell): a download names the delay asked for: \(outcome.error?.message ?? "")")
                }
            }
        }
    }

    // MARK: - One cell

    private func run(_ kind: Kind, failing failure: Failure) async throws -> Outcome {
        let announced = Counter()
        var configuration = makeConfiguration()
        configuration.retryPolicy = retry
        if failure == .deadline { configuration.deadline = .milliseconds(300) }
        configuration.eventMonitors = [
            ClosureEventMonitor(
                onRetry: { _, _ in announced.increment() }, onStreamReconnect: { _ in announced.increment() })
        ]
        let manager = SessionManager(configuration: configuration)
        defer { manager.invalidate(cancelingTasks: true) }

        let way: FailingOrigin.Way
        switch failure {
        case .refused: way = .refused
        case .reset: way = .reset
        case .dns: way = .dns
        case .tls: way = .tls
        case .unavailableRetryAfter: way = .unavailable(retryAfter: "0")
        case .retryAfterBeyondCap: way = .unavailable(retryAfter: "999999")
        case .deadline: way = .silent
        }
        let origin = try FailingOrigin(way, name: "retry-matrix")
        defer { origin.stop() }
        let url = origin.url

        let error = await perform(kind, URLRequest(url: url), on: manager)
        // The announcements are queued before the task's end; wait until the monitors saw them.
        let expected = Self.expected(kind, failure).attempts - 1
        let deadline = Date().addingTimeInterval(2)
        while announced.count < expected, Date() < deadline { try await Task.sleep(for: .milliseconds(5)) }
        try await Task.sleep(for: .milliseconds(20))  // room for a wrongful extra one
        return Outcome(error: error, clientAttempts: announced.count + 1, serverAttempts: origin.attempts)
    }

    private func perform(_ kind: Kind, _ request: URLRequest, on manager: SessionManager) async -> CourierError? {
        switch kind {
        case .data:
            return await withCheckedContinuation { continuation in
                manager.dataTask(with: request) { continuation.resume(returning: $0.error) }.resume()
            }
        case .download:
            var policy = DownloadPolicy()
            policy.retry = retry
            let destination = directory.appendingPathComponent(UUID().uuidString)
            return await withCheckedContinuation { continuation in
                manager.downloadTask(with: request, to: .file(destination), policy: policy) {
                    continuation.resume(returning: $0.error)
                }.resume()
            }
        case .stream:
            do {
                let (bytes, _) = try await manager.bytes(for: request)
                for try await _ in bytes {}
                return nil
            } catch {
                return error
            }
        case .eventStream:
            do {
                for try await _ in manager.events(for: request, reconnection: reconnection) {}
                return nil
            } catch {
                return error
            }
        }
    }
}
