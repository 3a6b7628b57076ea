import CourierTestSupport
import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Retries as monitors see them (`EventMonitor.taskWillRetry`), and the rule for a `Retry-After`
/// longer than ``DownloadPolicy/maximumRetryAfter``: not waited for, the download fails at once.
final class DownloadRetryTests: CourierTestCase {
    private let retries = Box<TaskRetryEvent>()
    /// What the task's own state said inside the monitor: reading it takes the task's lock, so a
    /// monitor called under that lock would deadlock here instead.
    private let statesSeen = Box<TaskLifecycle.State>()
    private static let body = TestServer.deterministicBytes(count: 300_000, seed: 61)

    override func makeConfiguration() -> SessionManager.Configuration {
        var configuration = super.makeConfiguration()
        let retries = retries
        let statesSeen = statesSeen
        configuration.eventMonitors = [
            ClosureEventMonitor(onRetry: { task, event in
                statesSeen.append(task.state)
                retries.append(event)
            })
        ]
        return configuration
    }

    private func policy(retries: Int) -> DownloadPolicy {
        var policy = DownloadPolicy()
        policy.retry.retryLimit = retries
        policy.retry.initialDelay = .milliseconds(20)
        return policy
    }

    private func download(_ url: URL, policy: DownloadPolicy, name: String = "file.bin") -> DownloadResponse? {
        wait(timeout: 30) { finish in
            manager.downloadTask(
                with: URLRequest(url: url), to: .file(directory.appendingPathComponent(name)), policy: policy,
                completion: finish
            ).resume()
        }
    }

    /// The whole body with a strong ETag, or the rest of it for a `Range`.
    private static func answer(_ request: RecordedRequest, sendingOnly limit: Int? = nil) -> ScriptedServer.Reply {
        guard let range = request.header("Range"), let first = Int(range.dropFirst(6).dropLast()) else {
            return .response(
                status: 200, headers: [("Content-Length", "\(body.count)"), ("ETag", "\"r\"")], body: body,
                sendingOnly: limit)
        }
        return .response(
            status: 206,
            headers: [
                ("Content-Range", "bytes \(first)-\(body.count - 1)/\(body.count)"),
                ("Content-Length", "\(body.count - first)"), ("ETag", "\"r\""),
            ],
            body: body.subdata(in: first..<body.count), sendingOnly: limit)
    }

    private static func unavailable(retryAfter: String) -> ScriptedServer.Reply {
        .response(status: 503, headers: [("Retry-After", retryAfter), ("Content-Length", "0")], body: Data())
    }

    // MARK: - Retry events

    func testEveryRetryIsAnnouncedWithTheBytesHeldAndWhereTheNextAttemptStarts() throws {
        // Given a server that cuts the first two answers after 100,000 bytes each
        let server = try ScriptedServer { request, index in
            Self.answer(request, sendingOnly: index < 2 ? 100_000 : nil)
        }
        defer { server.stop() }
        // When the download runs with three retries
        let response = download(server.url("/file.bin"), policy: policy(retries: 3))
        // Then it succeeds after two retries, each announced once, outside the task's lock
        XCTAssertNil(response?.error)
        let events = retries.all
        XCTAssertEqual(events.map(\.retry), [1, 2])
        XCTAssertEqual(events.map(\.retryLimit), [3, 3])
        XCTAssertEqual(events.map(\.bytesReceived), [100_000, 200_000])
        XCTAssertEqual(events.map(\.continuesFrom), [100_000, 200_000], "continued with Range each time")
        XCTAssertTrue(events.allSatisfy { $0.error.code == .connectionLost }, "\(events.map(\.error))")
        XCTAssertTrue(events.allSatisfy { $0.delay > .zero && $0.delay <= .milliseconds(40) })
        XCTAssertEqual(statesSeen.all, [.running, .running])
        XCTAssertEqual(response?.report.retries, 2)
    }

    func testARetriedStatusIsAnnouncedWithItsRetryAfterDelay() throws {
        let server = try ScriptedServer { request, index in
            index == 0 ? Self.unavailable(retryAfter: "1") : Self.answer(request)
        }
        defer { server.stop() }
        let response = download(server.url("/file.bin"), policy: policy(retries: 2))
        XCTAssertNil(response?.error)
        let event = try XCTUnwrap(retries.first)
        XCTAssertEqual(retries.count, 1)
        XCTAssertEqual(event.error.statusCode, 503)
        XCTAssertEqual(event.delay, .seconds(1), "the server's Retry-After")
        XCTAssertEqual(event.bytesReceived, 0)
        XCTAssertEqual(event.continuesFrom, 0)
    }

    func testALastFailureIsNotAnnouncedAsARetry() {
        let response = download(server.url("/status/503"), policy: policy(retries: 1))
        XCTAssertEqual(response?.error?.statusCode, 503)
        XCTAssertEqual(server.requests.count, 2)
        XCTAssertEqual(retries.count, 1, "one retry, then the failure: nothing more to announce")
    }

    func testARetrierDecisionIsAnnouncedWithoutALimit() {
        var retryPolicy = RetryPolicy()
        retryPolicy.initialDelay = .milliseconds(1)
        let response: DataResponse<Data>? = wait { finish in
            manager.dataTask(with: request("/status/503"), completion: finish)
                .intercept(with: Interceptor(retriers: [retryPolicy])).resume()
        }
        XCTAssertEqual(response?.error?.statusCode, 503)
        XCTAssertEqual(retries.all.map(\.retry), [1, 2])
        XCTAssertEqual(retries.all.map(\.retryLimit), [nil, nil], "the retrier knows its limit, Courier does not")
        XCTAssertTrue(retries.all.allSatisfy { $0.error.statusCode == 503 })
    }

    func testARetryIsPostedAsANotification() throws {
        let server = try ScriptedServer { request, index in
            index == 0 ? Self.unavailable(retryAfter: "0") : Self.answer(request)
        }
        defer { server.stop() }
        let notified = Box<TaskRetryEvent>()
        let observer = NotificationCenter.default.addObserver(forName: .courierTaskWillRetry, object: nil, queue: nil) {
            if let event = $0.userInfo?[CourierNotificationKey.retry] as? TaskRetryEvent { notified.append(event) }
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        var configuration = makeConfiguration()
        configuration.postsNotifications = true
        let posting = SessionManager(configuration: configuration)
        defer { posting.invalidate(cancelingTasks: true) }
        let response: DownloadResponse? = wait { finish in
            posting.downloadTask(
                with: URLRequest(url: server.url("/n.bin")), to: .file(directory.appendingPathComponent("n.bin")),
                policy: policy(retries: 1), completion: finish
            ).resume()
        }
        XCTAssertNil(response?.error)
        XCTAssertEqual(notified.all.map(\.retry), [1])
    }

    // MARK: - Retry-After beyond the cap

    func testARetryAfterBeyondTheCapEndsTheRetriesAtOnceNamingTheDelay() {
        // Given a 503 asking for 999999 s, and a policy that would retry three times
        let started = Date()
        // When the download runs
        let response = download(server.url("/status/503?retry_after=999999"), policy: policy(retries: 3))
        // Then it fails at once, with the status, saying what the server asked
        XCTAssertLessThan(Date().timeIntervalSince(started), 5, "neither 999999 s nor the 120 s cap was waited")
        XCTAssertEqual(server.requests.count, 1, "not retried")
        let error = response?.error
        XCTAssertEqual(error?.code, .unacceptableStatusCode)
        XCTAssertEqual(error?.statusCode, 503)
        XCTAssertTrue(error?.message.contains("999999 s (11.6 days)") ?? false, error?.message ?? "")
        XCTAssertTrue(error?.message.contains("not retried") ?? false, error?.message ?? "")
        XCTAssertEqual(retries.count, 0)
        XCTAssertEqual(response?.report.retries, 0)
    }

    func testARetryAfterBeyondTheCapKeepsTheBytesReceivedForResuming() throws {
        // Given a server that cuts the body after 100,000 bytes, then asks for a day's pause
        let server = try ScriptedServer { request, index in
            index == 0 ? Self.answer(request, sendingOnly: 100_000) : Self.unavailable(retryAfter: "86400")
        }
        defer { server.stop() }
        let destination = directory.appendingPathComponent("kept.bin")
        // When the download runs
        let response = download(server.url("/kept.bin"), policy: policy(retries: 3), name: "kept.bin")
        // Then the first retry meets the 503 and the download ends there, its bytes resumable
        XCTAssertEqual(server.requests.count, 2)
        XCTAssertEqual(response?.error?.statusCode, 503)
        XCTAssertTrue(response?.error?.message.contains("86400 s (24.0 hours)") ?? false, response?.error?.message ?? "")
        XCTAssertEqual(response?.error?.resumeData?.bytesOnDisk, 100_000)
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path))
        XCTAssertEqual(retries.count, 1, "only the cut was retried")
    }

    func testARetryAfterWithinTheCapIsWaitedFor() throws {
        let server = try ScriptedServer { request, index in
            index == 0 ? Self.unavailable(retryAfter: "1") : Self.answer(request)
        }
        defer { server.stop() }
        var policy = policy(retries: 1)
        policy.retry.maximumRetryAfter = .seconds(1)
        let started = Date()
        XCTAssertNil(download(server.url("/w.bin"), policy: policy)?.error)
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 0.9)
    }

    // MARK: - Pure parts

    func testARefusedRetryAfterIsNamedOnlyWhenThePolicyWouldOtherwiseHaveRetried() {
        func failure(_ status: Int, retryAfter: String?) -> CourierError {
            let response = HTTPURLResponse(
                url: URL(string: "http://h/")!, statusCode: status, httpVersion: "HTTP/1.1",
                headerFields: retryAfter.map { ["Retry-After": $0] } ?? [:])!
            return CourierError(code: .unacceptableStatusCode, message: "HTTP \(status)", response: response)
        }
        var policy = RetryPolicy()
        policy.maximumRetryAfter = .seconds(120)
        // A retryable status whose Retry-After is over the cap: that is why it was not retried
        XCTAssertEqual(policy.refusedRetryAfter(for: failure(503, retryAfter: "600")), .seconds(600))
        XCTAssertEqual(policy.refusedRetryAfter(for: failure(429, retryAfter: "121")), .seconds(121))
        // Within the cap, or without one: it is retried, so nothing was refused
        XCTAssertNil(policy.refusedRetryAfter(for: failure(503, retryAfter: "120")))
        XCTAssertNil(policy.refusedRetryAfter(for: failure(503, retryAfter: nil)))
        // A status the policy never retries, a method it does not retry, or no retries at all: not the reason
        XCTAssertNil(policy.refusedRetryAfter(for: failure(404, retryAfter: "600")))
        XCTAssertNil(policy.refusedRetryAfter(for: failure(503, retryAfter: "600"), method: "POST"))
        policy.retryLimit = 0
        XCTAssertNil(policy.refusedRetryAfter(for: failure(503, retryAfter: "600")))
    }

    func testRequestedRetryDelayReadsSecondsAndDatesUncapped() throws {
        func response(_ retryAfter: String?) -> HTTPURLResponse {
            HTTPURLResponse(
                url: URL(string: "http://h/")!, statusCode: 503, httpVersion: "HTTP/1.1",
                headerFields: retryAfter.map { ["Retry-After": $0] } ?? [:])!
        }
        XCTAssertEqual(RetryPolicy.requestedRetryDelay(of: response("999999")), .seconds(999_999))
        XCTAssertEqual(RetryPolicy.requestedRetryDelay(of: response(" 5 ")), .seconds(5))
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        XCTAssertEqual(
            RetryPolicy.requestedRetryDelay(of: response("Tue, 14 Nov 2023 22:30:00 GMT"), now: now), .seconds(1000))
        XCTAssertNil(RetryPolicy.requestedRetryDelay(of: response(nil)))
        XCTAssertNil(RetryPolicy.requestedRetryDelay(of: response("soon")))
        XCTAssertNil(RetryPolicy.requestedRetryDelay(of: response("-5")))
    }

    func testDelaysAreDescribedWithALargerUnitWhenItHelps() {
        XCTAssertEqual(Backoff.describe(.seconds(120)), "120 s")
        XCTAssertEqual(Backoff.describe(.milliseconds(1500)), "1.5 s")
        XCTAssertEqual(Backoff.describe(.seconds(600)), "600 s (10.0 minutes)")
        XCTAssertEqual(Backoff.describe(.seconds(7200)), "7200 s (2.0 hours)")
        XCTAssertEqual(Backoff.describe(.seconds(999_999)), "999999 s (11.6 days)")
    }
}
