import CourierTestSupport
import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `TaskMetrics` over real sockets: one attempt per request on the wire, marks in order, what
/// Linux cannot know left `nil`, and the follow-ups (redirects, challenges, retries,
/// continuations, pauses, the per-host queue) each recorded as what they are.
final class TimelineTests: CourierTestCase {
    private func assertMarksInOrder(_ attempt: TaskMetrics.Attempt, file: StaticString = #filePath, line: UInt = #line) {
        let marks = [attempt.start, attempt.responseHeaders, attempt.firstBodyByte, attempt.lastBodyByte, attempt.end]
            .compactMap { $0 }
        XCTAssertEqual(marks, marks.sorted(), "marks out of order: \(attempt)", file: file, line: line)
    }

    func testAGETHasOneAttemptWithItsMarksInOrderAndWhatLinuxCannotKnowIsNil() throws {
        // Given a body sent in several writes
        let url = server.url("/bytes/100000?chunk=8192&chunk_delay_ms=2")
        // When it is fetched
        let response = data(URLRequest(url: url))
        // Then the timeline has one completed attempt with every mark, in order
        let metrics = try XCTUnwrap(response.metrics)
        XCTAssertEqual(metrics.attempts.count, 1)
        let attempt = try XCTUnwrap(metrics.attempts.first)
        XCTAssertEqual(attempt.kind, .initial)
        XCTAssertEqual(attempt.ending, .completed)
        XCTAssertEqual(attempt.statusCode, 200)
        XCTAssertEqual(attempt.method, "GET")
        XCTAssertEqual(attempt.url, url)
        XCTAssertEqual(attempt.bytesReceived, 100_000)
        XCTAssertEqual(metrics.bytesReceived, 100_000)
        XCTAssertNotNil(attempt.responseHeaders)
        XCTAssertNotNil(attempt.firstBodyByte)
        XCTAssertNotNil(attempt.lastBodyByte)
        XCTAssertLessThan(try XCTUnwrap(attempt.firstBodyByte), try XCTUnwrap(attempt.lastBodyByte), "several writes 2 ms apart")
        assertMarksInOrder(attempt)
        XCTAssertLessThanOrEqual(try XCTUnwrap(attempt.end), try XCTUnwrap(metrics.completedAt))
        XCTAssertNotNil(metrics.resumedAt)
        // No body was sent, nothing waited, nothing was retried
        XCTAssertNil(attempt.requestBodySent)
        XCTAssertEqual(attempt.bytesSent, 0)
        XCTAssertNil(attempt.queuedBehindHostCap)
        XCTAssertNil(attempt.continuesFrom)
        XCTAssertTrue(metrics.retries.isEmpty)
        XCTAssertTrue(metrics.redirects.isEmpty)
        XCTAssertEqual(metrics.redirectChain, [url])
        // And what FoundationNetworking does not report stays nil
        XCTAssertNil(attempt.domainLookup)
        XCTAssertNil(attempt.connect)
        XCTAssertNil(attempt.secureConnection)
        XCTAssertNil(attempt.reusedConnection)
        XCTAssertNil(attempt.networkProtocolName)
        XCTAssertNil(attempt.remoteAddress)
    }

    func testTheLiveTimelineIsTheOneTheResponseCarries() throws {
        let box = Box<DataTask>()
        let response: DataResponse<Data>? = wait { finish in
            let task = manager.dataTask(with: request("/get"), completion: finish)
            box.append(task)
            XCTAssertNil(task.metrics.completedAt, "not yet completed")
            XCTAssertTrue(task.metrics.attempts.isEmpty, "nothing sent before resume()")
            task.resume()
        }
        let task = try XCTUnwrap(box.first)
        XCTAssertEqual(task.metrics, response?.metrics)
        XCTAssertNotNil(task.metrics.completedAt)
    }

    func testAnUploadCountsItsBodyBytesAndWhenTheBodyWasSent() throws {
        let body = Data(repeating: 7, count: 300_000)
        let response: DataResponse<Data>? = wait { finish in
            manager.uploadTask(with: request("/sink", method: "POST"), from: .data(body), completion: finish).resume()
        }
        let attempt = try XCTUnwrap(response?.metrics?.attempts.first)
        XCTAssertEqual(attempt.bytesSent, 300_000)
        XCTAssertEqual(response?.metrics?.bytesSent, 300_000)
        let sent = try XCTUnwrap(attempt.requestBodySent)
        XCTAssertLessThanOrEqual(sent, try XCTUnwrap(attempt.responseHeaders), "the server answers after reading it all")
        XCTAssertGreaterThan(sent, attempt.start)
    }

    func testRedirectHopsAreAttemptsAndTheChainNamesEveryURL() throws {
        let response = data(request("/redirect/2"))
        let metrics = try XCTUnwrap(response.metrics)
        XCTAssertEqual(metrics.attempts.map(\.kind), [.initial, .redirect, .redirect])
        XCTAssertEqual(metrics.attempts.map(\.statusCode), [302, 302, 200])
        XCTAssertEqual(metrics.attempts.map(\.ending), [.redirected, .redirected, .completed])
        XCTAssertEqual(metrics.redirectChain.map(\.path), ["/redirect/2", "/redirect/1", "/get"])
        XCTAssertEqual(metrics.redirects.map(\.followed), [true, true])
        XCTAssertEqual(metrics.redirects.map(\.statusCode), [302, 302])
        for attempt in metrics.attempts { assertMarksInOrder(attempt) }
    }

    func testARefusedRedirectLoopIsRecordedAsRefused() throws {
        let response = data(request("/redirect-loop"))
        XCTAssertEqual(response.error?.code, .redirectRefused)
        let metrics = try XCTUnwrap(response.metrics)
        XCTAssertEqual(metrics.redirects.last?.followed, false)
        XCTAssertEqual(metrics.attempts.last?.ending, .failed)
        XCTAssertTrue(metrics.redirects.dropLast().allSatisfy(\.followed))
    }

    func testA307WithABodyIsResentByCourierAsARedirectAttempt() throws {
        var post = request("/redirect-to?url=/anything&status_code=307", method: "POST")
        post.httpBody = Data("hello".utf8)
        let response: DataResponse<Data>? = wait { finish in
            manager.uploadTask(with: post, from: .data(Data("hello".utf8)), completion: finish).resume()
        }
        XCTAssertEqual(response?.response?.statusCode, 200)
        let metrics = try XCTUnwrap(response?.metrics)
        XCTAssertEqual(metrics.attempts.map(\.kind), [.initial, .redirect])
        XCTAssertEqual(metrics.attempts.map(\.method), ["POST", "POST"])
        XCTAssertEqual(metrics.attempts.map(\.ending), [.redirected, .completed])
        XCTAssertEqual(metrics.attempts.map(\.bytesSent), [5, 5], "the body went twice")
    }

    func testAnAnsweredChallengeIsAnAuthenticationAttempt() throws {
        let response: DataResponse<Data>? = wait { finish in
            manager.dataTask(with: request("/basic-auth/ann/pw"), completion: finish)
                .authenticate(with: Credential(user: "ann", password: "pw")).resume()
        }
        XCTAssertEqual(response?.response?.statusCode, 200)
        let metrics = try XCTUnwrap(response?.metrics)
        XCTAssertEqual(metrics.attempts.map(\.kind), [.initial, .authentication])
        XCTAssertEqual(metrics.attempts.map(\.statusCode), [401, 200])
        XCTAssertEqual(metrics.attempts.map(\.ending), [.challenged, .completed])
    }

    func testARetriedDownloadRecordsTheFailureTheRetryAndWhereTheNextAttemptContinued() throws {
        // Given a server that cuts its first answer after 100,000 of 300,000 bytes
        let body = TestServer.deterministicBytes(count: 300_000, seed: 5)
        let scripted = try ScriptedServer { request, index in
            if let range = request.header("Range"), let first = Int(range.dropFirst(6).dropLast()) {
                return .response(
                    status: 206,
                    headers: [
                        ("Content-Range", "bytes \(first)-\(body.count - 1)/\(body.count)"),
                        ("Content-Length", "\(body.count - first)"), ("ETag", "\"t\""),
                    ],
                    body: body.subdata(in: first..<body.count))
            }
            return .response(
                status: 200, headers: [("Content-Length", "\(body.count)"), ("ETag", "\"t\"")], body: body,
                sendingOnly: index == 0 ? 100_000 : nil)
        }
        defer { scripted.stop() }
        var policy = DownloadPolicy()
        policy.retry.retryLimit = 2
        policy.retry.initialDelay = .milliseconds(10)
        // When it is downloaded with retries
        let response: DownloadResponse? = wait(timeout: 30) { finish in
            manager.downloadTask(
                with: URLRequest(url: scripted.url("/file.bin")), to: .file(directory.appendingPathComponent("f.bin")),
                policy: policy, completion: finish
            ).resume()
        }
        XCTAssertNil(response?.error)
        // Then the timeline shows the failed attempt, the retry, and the continuation by Range
        let metrics = try XCTUnwrap(response?.metrics)
        XCTAssertEqual(metrics.attempts.map(\.kind), [.initial, .retry])
        XCTAssertEqual(metrics.attempts.map(\.ending), [.failed, .completed])
        XCTAssertEqual(metrics.attempts.map(\.statusCode), [200, 206])
        XCTAssertNotNil(metrics.attempts.first?.error)
        XCTAssertEqual(metrics.retryCount, 1)
        XCTAssertEqual(metrics.retries.first?.afterAttempt, 0)
        let delay = try XCTUnwrap(metrics.retries.first?.delay)
        XCTAssertGreaterThan(delay, .zero)
        XCTAssertEqual(metrics.resumeOffsets, [100_000])
        XCTAssertEqual(metrics.attempts.map(\.bytesReceived), [100_000, 200_000])
        XCTAssertEqual(metrics.bytesReceived, 300_000)
        // The retry started after its delay
        let failedEnd = try XCTUnwrap(metrics.attempts[0].end)
        XCTAssertGreaterThanOrEqual(metrics.attempts[1].start - failedEnd, delay - .milliseconds(1))
    }

    func testSuspendAndResumeArePausesAndTheNextAttemptContinues() throws {
        let (_, response) = fetchSuspendingOnce("/bytes/400000?chunk=8192&chunk_delay_ms=5")
        XCTAssertEqual(response?.data?.count, 400_000)
        let metrics = try XCTUnwrap(response?.metrics)
        XCTAssertEqual(metrics.attempts.first?.ending, .suspended)
        XCTAssertEqual(metrics.attempts.last?.ending, .completed)
        XCTAssertEqual(metrics.attempts.count, 2)
        XCTAssertEqual(metrics.attempts.last?.kind, .continuation, "a strong ETag: the rest with Range")
        XCTAssertEqual(metrics.pauses.map(\.reason), [.suspended])
        XCTAssertNotNil(metrics.pauses.first?.end)
        XCTAssertEqual(metrics.attempts.last?.continuesFrom, metrics.pauses.first?.bytesHeld)
    }

    func testACancelledTaskEndsItsAttemptAsCancelled() throws {
        let response: DataResponse<Data>? = wait { finish in
            let task = manager.dataTask(with: request("/delay/5000"), completion: finish)
            task.resume()
            waitUntil("the attempt started") { !task.metrics.attempts.isEmpty }
            task.cancel()
        }
        XCTAssertEqual(response?.error?.code, .cancelled)
        XCTAssertEqual(response?.metrics?.attempts.last?.ending, .cancelled)
        XCTAssertNil(response?.metrics?.attempts.last?.responseHeaders)
        XCTAssertNotNil(response?.metrics?.completedAt)
    }

    func testATaskThatNeverRanHasNoAttempts() throws {
        let response = data(URLRequest(url: URL(string: "ftp://127.0.0.1/file")!))
        XCTAssertNotNil(response.error)
        XCTAssertEqual(response.metrics?.attempts.count, 0)
        XCTAssertNotNil(response.metrics?.completedAt)
    }
}

/// The per-host queue, with a cap of one.
final class HostQueueTimelineTests: CourierTestCase {
    override func makeConfiguration() -> SessionManager.Configuration {
        var configuration = super.makeConfiguration()
        configuration.maximumRunningTasksPerHost = 1
        return configuration
    }

    func testTimeWaitingBehindTheHostCapIsMeasured() throws {
        let responses = Box<DataResponse<Data>>()
        let done = expectation(description: "both")
        done.expectedFulfillmentCount = 2
        for _ in 0..<2 {
            manager.dataTask(with: request("/delay/300")) { response in
                responses.append(response)
                done.fulfill()
            }.resume()
        }
        wait(for: [done], timeout: 15)
        let queued = responses.all.compactMap { $0.metrics?.queuedBehindHostCap }.sorted()
        XCTAssertEqual(queued.count, 2)
        XCTAssertEqual(queued.first, .zero, "the first ran at once")
        XCTAssertGreaterThanOrEqual(queued.last ?? .zero, .milliseconds(250), "the second waited for the first")
        let waited = try XCTUnwrap(responses.all.first { ($0.metrics?.queuedBehindHostCap ?? .zero) > .zero }?.metrics)
        let attempt = try XCTUnwrap(waited.attempts.first)
        XCTAssertLessThan(try XCTUnwrap(attempt.timeToHeaders), .milliseconds(2000))
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(attempt.timeToHeaders), .milliseconds(250), "the server's own delay")
    }
}
