import CourierTestSupport
import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a monitor sees over a task's life, in order, over real sockets.
final class EventOrderTests: CourierTestCase {
    private let seen = Box<(task: Int, event: TaskEvent)>()

    override func makeConfiguration() -> SessionManager.Configuration {
        var configuration = super.makeConfiguration()
        let seen = seen
        configuration.eventMonitors = [ClosureEventMonitor(onEvent: { task, event in seen.append((task.taskIdentifier, event)) })]
        return configuration
    }

    /// The event names of `task`, once its completion has been reported.
    private func names(of task: Int) -> [String] {
        waitUntil("the completion is reported") {
            seen.all.contains { $0.task == task && $0.event.name == "completed" }
        }
        return seen.all.filter { $0.task == task }.map(\.event.name)
    }

    private func events(of task: Int) -> [TaskEvent] {
        _ = names(of: task)
        return seen.all.filter { $0.task == task }.map(\.event)
    }

    func testEachEventOfARedirectedRetriedAndContinuedDownloadInOrder() throws {
        // Given a redirect to a file whose first answer is cut after 100,000 of 300,000 bytes
        let body = TestServer.deterministicBytes(count: 300_000, seed: 9)
        let scripted = try ScriptedServer { request, index in
            if request.target == "/old" {
                return .response(status: 301, headers: [("Location", "/file.bin"), ("Content-Length", "0")], body: Data())
            }
            if let range = request.header("Range"), let first = Int(range.dropFirst(6).dropLast()) {
                return .response(
                    status: 206,
                    headers: [
                        ("Content-Range", "bytes \(first)-\(body.count - 1)/\(body.count)"),
                        ("Content-Length", "\(body.count - first)"), ("ETag", "\"e\""),
                    ],
                    body: body.subdata(in: first..<body.count))
            }
            return .response(
                status: 200, headers: [("Content-Length", "\(body.count)"), ("ETag", "\"e\"")], body: body,
                sendingOnly: 100_000)
        }
        defer { scripted.stop() }
        var policy = DownloadPolicy()
        policy.retry.retryLimit = 2
        policy.retry.initialDelay = .milliseconds(10)
        let target = directory.appendingPathComponent("file.bin")
        // When it is downloaded
        let box = Box<DownloadTask>()
        let response: DownloadResponse? = wait(timeout: 30) { finish in
            let task = manager.downloadTask(
                with: URLRequest(url: scripted.url("/old")), to: .file(target), policy: policy, completion: finish)
            box.append(task)
            task.resume()
        }
        XCTAssertNil(response?.error)
        let task = try XCTUnwrap(box.first)
        // Then the monitor saw every step, in order (the retry asks the original URL again, with
        // Range, and follows the redirect again)
        XCTAssertEqual(
            names(of: task.taskIdentifier),
            [
                "created", "resumed", "attempt", "redirect", "attempt", "response", "retry", "attempt", "continue",
                "redirect", "attempt", "response", "published", "completed",
            ])
        let events = events(of: task.taskIdentifier)
        let attempts = events.compactMap { event -> TaskAttemptEvent? in
            if case .attemptStarted(let attempt) = event { return attempt }
            return nil
        }
        XCTAssertEqual(attempts.map(\.kind), [.initial, .redirect, .retry, .redirect])
        XCTAssertEqual(attempts.map(\.number), [0, 1, 2, 3])
        XCTAssertEqual(attempts.map { $0.request.url?.path }, ["/old", "/file.bin", "/old", "/file.bin"])
        XCTAssertEqual(attempts[2].request.value(forHTTPHeaderField: "Range"), "bytes=100000-")
        XCTAssertEqual(attempts[3].request.value(forHTTPHeaderField: "Range"), "bytes=100000-")
        for event in events {
            switch event {
            case .redirected(let redirect):
                XCTAssertTrue(redirect.followed)
                XCTAssertEqual(redirect.response.statusCode, 301)
                XCTAssertEqual(redirect.target?.path, "/file.bin")
            case .retrying(let retry):
                XCTAssertEqual(retry.bytesReceived, 100_000)
                XCTAssertEqual(retry.continuesFrom, 100_000)
                XCTAssertEqual(retry.owner, .attempt)
            case .continuing(let continuation):
                XCTAssertEqual(continuation.owner, .attempt, "the retry continues the body")
                XCTAssertEqual(continuation.offset, 100_000)
                XCTAssertEqual(continuation.validator, "\"e\"")
                XCTAssertEqual(continuation.kind, .retry)
            case .published(let file):
                XCTAssertEqual(file.standardizedFileURL, target.standardizedFileURL)
            case .completed(let completion):
                XCTAssertNil(completion.error)
                XCTAssertEqual(completion.metrics, response?.metrics)
                XCTAssertEqual(completion.metrics.attempts.map(\.statusCode), [301, 200, 301, 206])
                XCTAssertEqual(completion.metrics.resumeOffsets, [100_000])
            default:
                break
            }
        }
    }

    func testAnAdapterIsReportedWithTheRequestBeforeAndAfter() throws {
        let adapter = Adapter { request in
            var request = request
            request.setValue("yes", forHTTPHeaderField: "X-Adapted")
            return request
        }
        let box = Box<DataTask>()
        let response: DataResponse<Data>? = wait { finish in
            let task = manager.dataTask(with: request("/headers"), completion: finish)
                .intercept(with: Interceptor(adapters: [adapter]))
            box.append(task)
            task.resume()
        }
        XCTAssertEqual(response?.response?.statusCode, 200)
        let task = try XCTUnwrap(box.first)
        XCTAssertEqual(names(of: task.taskIdentifier), ["created", "resumed", "adapted", "attempt", "response", "completed"])
        for case .adapted(let adapted) in events(of: task.taskIdentifier) {
            XCTAssertNil(adapted.original.value(forHTTPHeaderField: "X-Adapted"))
            XCTAssertEqual(adapted.adapted.value(forHTTPHeaderField: "X-Adapted"), "yes")
            XCTAssertEqual(adapted.attempt, 0)
        }
    }

    func testChallengesAreReportedAnsweredThenRefused() throws {
        // Given a wrong password: the challenge is answered once, then the second 401 is refused
        let box = Box<DataTask>()
        let response: DataResponse<Data>? = wait { finish in
            let task = manager.dataTask(with: request("/basic-auth/ann/right"), validation: .none, completion: finish)
                .authenticate(with: Credential(user: "ann", password: "wrong"))
            box.append(task)
            task.resume()
        }
        XCTAssertEqual(response?.response?.statusCode, 401)
        let task = try XCTUnwrap(box.first)
        let challenges = events(of: task.taskIdentifier).compactMap { event -> TaskChallengeEvent? in
            if case .challenge(let challenge) = event { return challenge }
            return nil
        }
        XCTAssertEqual(challenges.map(\.answered), [true, false])
        XCTAssertEqual(challenges.map(\.scheme), ["Basic", "Basic"])
        XCTAssertNotNil(challenges.last?.reason)
        XCTAssertEqual(
            names(of: task.taskIdentifier),
            ["created", "resumed", "attempt", "response", "challenge", "attempt", "response", "challenge", "completed"])
    }

    func testARefusedRedirectSaysWhy() throws {
        let box = Box<DataTask>()
        _ = wait { (finish: @escaping @Sendable (DataResponse<Data>) -> Void) in
            let task = manager.dataTask(with: request("/redirect-loop"), completion: finish)
            box.append(task)
            task.resume()
        }
        let task = try XCTUnwrap(box.first)
        let redirects = events(of: task.taskIdentifier).compactMap { event -> TaskRedirectEvent? in
            if case .redirected(let redirect) = event { return redirect }
            return nil
        }
        XCTAssertEqual(redirects.last?.followed, false)
        XCTAssertTrue(redirects.last?.refusal?.contains("loop") ?? false, "\(String(describing: redirects.last?.refusal))")
        XCTAssertTrue(redirects.dropLast().allSatisfy(\.followed))
    }

    func testCredentialsStrippedOnACrossOriginRedirectAreNamed() throws {
        let other = try TestServer()
        defer { other.stop() }
        var request = request("/redirect-to?url=\(other.url("/headers").absoluteString)")
        request.setValue("Bearer s", forHTTPHeaderField: "Authorization")
        let box = Box<DataTask>()
        _ = wait { (finish: @escaping @Sendable (DataResponse<Data>) -> Void) in
            let task = manager.dataTask(with: request, completion: finish)
            box.append(task)
            task.resume()
        }
        let task = try XCTUnwrap(box.first)
        let redirect = events(of: task.taskIdentifier).compactMap { event -> TaskRedirectEvent? in
            if case .redirected(let redirect) = event { return redirect }
            return nil
        }.first
        XCTAssertEqual(redirect?.strippedHeaders, ["Authorization"])
        XCTAssertEqual(task.metrics.redirects.first?.strippedHeaders, ["Authorization"])
    }

    func testSuspendAndResumeAreReportedAndTheContinuationNamesItsOffset() throws {
        let (fetched, response) = fetchSuspendingOnce("/bytes/300000?chunk=8192&chunk_delay_ms=5")
        XCTAssertEqual(response?.data?.count, 300_000)
        let task = try XCTUnwrap(fetched)
        XCTAssertEqual(
            names(of: task.taskIdentifier),
            ["created", "resumed", "attempt", "response", "suspended", "resumed", "attempt", "continue", "response", "completed"])
    }

    func testBackPressurePausesAreReportedAndTimed() throws {
        // Given a disk slower than the network (the writer's test seam)
        let content = TestServer.deterministicBytes(count: 2 * 1024 * 1024, seed: 3)
        server.addFile("slow.bin", data: content, etag: "\"v\"")
        var policy = DownloadPolicy()
        policy.maximumBufferedBytes = 256 * 1024
        policy.simulatedDisk = DiskWriter.Simulation(bytesPerSecond: 8 * 1024 * 1024, failsAfterBytes: nil)
        let box = Box<DownloadTask>()
        // When it downloads
        let response: DownloadResponse? = wait(timeout: 60) { finish in
            let task = manager.downloadTask(
                with: request("/files/slow.bin"), to: .file(directory.appendingPathComponent("slow.bin")), policy: policy,
                completion: finish)
            box.append(task)
            task.resume()
        }
        XCTAssertNil(response?.error)
        let task = try XCTUnwrap(box.first)
        // Then every pause is reported, ended, and continued by Range
        let events = events(of: task.taskIdentifier)
        let pauses = events.compactMap { event -> TaskPauseEvent? in
            if case .paused(let pause) = event { return pause }
            return nil
        }
        let ends = events.compactMap { event -> TaskPauseEvent? in
            if case .pauseEnded(let pause) = event { return pause }
            return nil
        }
        XCTAssertGreaterThan(pauses.count, 0, "the disk is 8 MiB/s")
        XCTAssertEqual(ends.count, pauses.count)
        XCTAssertTrue(pauses.allSatisfy { $0.reason == .disk && $0.duration == nil })
        XCTAssertTrue(ends.allSatisfy { ($0.duration ?? .zero) > .zero })
        let metrics = try XCTUnwrap(response?.metrics)
        XCTAssertEqual(metrics.pauses.count, pauses.count)
        XCTAssertEqual(metrics.attempts.filter { $0.ending == .backPressure }.count, pauses.count)
        XCTAssertEqual(metrics.attempts.dropFirst().map(\.kind), Array(repeating: .continuation, count: pauses.count))
        XCTAssertEqual(metrics.resumeOffsets, metrics.pauses.map(\.bytesHeld))
        XCTAssertEqual(response?.report.diskPauses, pauses.count)
    }
}
