import CourierTestSupport
import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CourierSupport

final class LoggingMonitorTests: CourierTestCase {
    /// Every record of a `.trace` monitor.
    private let records = Box<LoggingMonitor.Record>()
    /// Every record of an `.info` monitor on the same manager.
    private let infoRecords = Box<LoggingMonitor.Record>()
    /// What a monitor that reads the task (its lock) saw, event by event.
    private let taskReads = Box<String>()
    /// Sink calls running right now: the event queue is serial, so never more than one.
    private let inSink = Locked(0)
    private let overlaps = Counter()

    override func makeConfiguration() -> SessionManager.Configuration {
        var configuration = super.makeConfiguration()
        let records = records
        let infoRecords = infoRecords
        let taskReads = taskReads
        let inSink = inSink
        let overlaps = overlaps
        // The test's URL carries `x=s3cret`: `x` is not a secret name, so it is added here.
        let redaction = Redaction.default.adding(queryParameters: ["x"])
        configuration.eventMonitors = [
            LoggingMonitor(level: .trace, redaction: redaction) { record in
                if inSink.withLock({
                    $0 += 1; return $0
                }) > 1 {
                    overlaps.increment()
                }
                records.append(record)
                Thread.sleep(forTimeInterval: 0.001)
                inSink.withLock { $0 -= 1 }
            },
            LoggingMonitor(level: .info, redaction: redaction) { record in infoRecords.append(record) },
            // Reads the task's state and timeline (both take the transfer's lock) from the
            // event queue: a monitor never runs under that lock, so this cannot deadlock.
            ClosureEventMonitor(onEvent: { task, event in
                let attempts = (task as? CourierTask<DataTransfer>)?.metrics.attempts.count ?? -1
                taskReads.append("\(event.name) \(task.state) \(attempts)")
            }),
        ]
        return configuration
    }

    private func waitForCompletedRecords(_ count: Int = 1, file: StaticString = #filePath, line: UInt = #line) {
        waitUntil("\(count) completed record(s) arrive", file: file, line: line) {
            records.all.filter { $0.event == "completed" }.count >= count
                && infoRecords.all.filter { $0.event == "completed" }.count >= count
        }
    }

    private func everything(_ record: LoggingMonitor.Record) -> String {
        ([record.line, record.message] + record.metadata.flatMap { [$0.key, $0.value] }).joined(separator: "\n")
    }

    // MARK: Redaction

    func testSecretsNeverReachARecordAndTheirNamesStillShow() throws {
        var components = URLComponents(url: server.url("/cookies/set?x=s3cret&access_token=s3cret&page=2"), resolvingAgainstBaseURL: false)!
        components.user = "user"
        components.password = "s3cret"
        var request = URLRequest(url: try XCTUnwrap(components.url))
        request.setValue("Bearer s3cret", forHTTPHeaderField: "Authorization")
        request.setValue("a=s3cret", forHTTPHeaderField: "Cookie")
        request.setValue("visible", forHTTPHeaderField: "X-Visible")
        let response = data(request)
        XCTAssertEqual(response.response?.statusCode, 200)
        XCTAssertTrue(
            (response.response?.allHeaderFields.description ?? "").contains("s3cret"), "the route did set cookies with the secret")
        waitForCompletedRecords()

        let all = records.all
        for record in all + infoRecords.all {
            XCTAssertFalse(everything(record).contains("s3cret"), record.line)
        }
        XCTAssertEqual(all.map(\.event), ["created", "resumed", "attempt", "response", "completed"], "one record per event, in order")
        XCTAssertEqual(Set(all.compactMap(\.taskIdentifier)).count, 1)

        let attempt = try XCTUnwrap(all.first { $0.event == "attempt" })
        XCTAssertEqual(attempt.metadata["header.authorization"], "***")
        XCTAssertEqual(attempt.metadata["header.cookie"], "***")
        XCTAssertEqual(attempt.metadata["header.x-visible"], "visible")
        XCTAssertEqual(attempt.metadata["kind"], "initial")
        XCTAssertEqual(attempt.metadata["attempt"], "0")
        let url = try XCTUnwrap(attempt.metadata["url"])
        XCTAssertTrue(url.hasPrefix("http://***@127.0.0.1:"), url)
        XCTAssertTrue(url.hasSuffix("/cookies/set?x=***&access_token=***&page=2"), url)
        XCTAssertTrue(attempt.line.contains("header.authorization=***"), attempt.line)

        let head = try XCTUnwrap(all.first { $0.event == "response" })
        XCTAssertEqual(head.metadata["header.set-cookie"], "***")
        XCTAssertEqual(head.metadata["status"], "200")
        XCTAssertEqual(head.level, .debug)

        let completed = try XCTUnwrap(all.last)
        XCTAssertEqual(completed.level, .info)
        XCTAssertEqual(completed.metadata["status"], "200")
        XCTAssertEqual(completed.metadata["method"], "GET")
        XCTAssertEqual(completed.metadata["attempts"], "1")
        XCTAssertEqual(completed.metadata["retries"], "0")
        let body = try XCTUnwrap(response.data)
        XCTAssertEqual(completed.metadata["bytes"], String(body.count))
        XCTAssertNotNil(completed.metadata["total_ms"].flatMap(Double.init))
        XCTAssertNotNil(completed.metadata["headers_ms"].flatMap(Double.init))
        XCTAssertTrue(completed.line.hasPrefix("level=info event=completed task=\(completed.taskIdentifier!) msg=\""), completed.line)
        XCTAssertTrue(completed.message.contains("GET http://***@127.0.0.1:"), completed.message)
    }

    func testLevelsOfAFailureAndOfEveryEventOfASuccess() throws {
        let failed = data(request("/status/500"))
        XCTAssertEqual(failed.error?.statusCode, 500)
        waitForCompletedRecords()
        let completed = try XCTUnwrap(records.all.last)
        XCTAssertEqual(completed.event, "completed")
        XCTAssertEqual(completed.level, .error)
        XCTAssertEqual(completed.metadata["status"], "500")
        XCTAssertEqual(completed.metadata["error"], "unacceptableStatusCode")
        XCTAssertNotNil(completed.metadata["error_message"])
        XCTAssertTrue(completed.message.contains("failed with 500"), completed.message)
        XCTAssertEqual(
            records.all.map { "\($0.event):\($0.level)" },
            ["created:debug", "resumed:debug", "attempt:debug", "response:debug", "completed:error"])
    }

    func testCancelledAndRedirectedTasksLogAtNoticeAndInfo() throws {
        let task = manager.dataTask(with: request("/delay/5000")) { _ in }
        task.resume()
        waitUntil("the attempt is logged") { records.all.contains { $0.event == "attempt" } }
        task.cancel()
        waitForCompletedRecords()
        XCTAssertEqual(records.all.last?.level, .notice)
        XCTAssertTrue(records.all.last?.message.contains("cancelled") ?? false, records.all.last?.message ?? "")

        _ = data(request("/redirect-to?url=/get%3Ftoken%3D%73%33cret&status_code=302"))
        waitForCompletedRecords(2)
        let redirect = try XCTUnwrap(records.all.first { $0.event == "redirect" })
        XCTAssertEqual(redirect.level, .info)
        XCTAssertEqual(redirect.metadata["status"], "302")
        XCTAssertEqual(redirect.metadata["followed"], "true")
        XCTAssertTrue(redirect.metadata["target"]?.hasSuffix("/get?token=***") ?? false, redirect.line)
        XCTAssertTrue(redirect.metadata["header.location"]?.hasSuffix("token=***") ?? false, redirect.line)
        XCTAssertFalse(records.all.contains { everything($0).contains("s3cret") })
    }

    func testLevelFiltering() {
        _ = data(request("/get"))
        _ = data(request("/status/404"))
        waitForCompletedRecords(2)
        let info = infoRecords.all
        XCTAssertEqual(info.map(\.event), ["completed", "completed"], "an .info monitor gets no debug records")
        XCTAssertEqual(info.map(\.level), [.info, .error])
        XCTAssertTrue(info.allSatisfy { $0.metadata.keys.allSatisfy { !$0.hasPrefix("header.") } }, "headers only at trace")
        XCTAssertTrue(records.all.contains { $0.level == .debug })

        XCTAssertEqual(LoggingMonitor.Level.allCases.map(\.rawValue), ["trace", "debug", "info", "notice", "warning", "error", "critical"])
        XCTAssertEqual(LoggingMonitor.Level.allCases, LoggingMonitor.Level.allCases.sorted())
        XCTAssertTrue(LoggingMonitor.Level.notice < .warning)
    }

    func testEveryEventHasItsLevelAndRedactedFacts() throws {
        let task = manager.dataTask(with: request("/get")) { _ in }
        defer { task.cancel() }
        let seen = Box<LoggingMonitor.Record>()
        let monitor = LoggingMonitor(level: .trace) { seen.append($0) }
        let secretURL = try XCTUnwrap(URL(string: "https://u:s3cret@h.example/p?sig=s3cret"))
        let redirect = try XCTUnwrap(
            HTTPURLResponse(
                url: secretURL, statusCode: 301, httpVersion: "HTTP/1.1", headerFields: ["Location": secretURL.absoluteString]))
        let challenge = try XCTUnwrap(
            HTTPURLResponse(
                url: secretURL, statusCode: 401, httpVersion: "HTTP/1.1", headerFields: ["WWW-Authenticate": "Basic realm=x"]))
        let failure = CourierError(code: .timedOut, message: "no answer from \(secretURL.absoluteString)", url: secretURL)
        let table: [(event: TaskEvent, level: LoggingMonitor.Level, facts: [String: String])] = [
            (.suspended, .notice, [:]),
            (
                .continuing(TaskContinuationEvent(offset: 100, validator: "\"v1\"", kind: .retry)), .debug,
                ["offset": "100", "kind": "retry", "validator": "\"v1\""]
            ),
            (
                .redirected(
                    TaskRedirectEvent(
                        response: redirect, target: secretURL, followed: false, refusal: "to \(secretURL.absoluteString): a loop",
                        strippedHeaders: [], method: nil)), .notice,
                [
                    "status": "301", "followed": "false", "target": "https://***@h.example/p?sig=***",
                    "refusal": "to https://***@h.example/p?sig=***: a loop", "header.location": "https://***@h.example/p?sig=***",
                ]
            ),
            (
                .challenge(TaskChallengeEvent(response: challenge, scheme: "Basic", answered: false, reason: "no credential")), .notice,
                ["status": "401", "scheme": "Basic", "answered": "false", "reason": "no credential"]
            ),
            (
                .challenge(TaskChallengeEvent(response: challenge, scheme: "Basic", answered: true, reason: nil)), .info,
                ["answered": "true"]
            ),
            (
                .retrying(
                    TaskRetryEvent(
                        error: failure, retry: 1, retryLimit: 3, delay: .milliseconds(250), bytesReceived: 10, continuesFrom: 10)), .notice,
                [
                    "retry": "1", "retry_limit": "3", "delay_ms": "250.000", "error": "timedOut", "bytes": "10", "continues_from": "10",
                    "error_message": "no answer from https://***@h.example/p?sig=***",
                ]
            ),
            (.paused(TaskPauseEvent(reason: .disk, bytesHeld: 4096, duration: nil)), .notice, ["reason": "disk", "bytes": "4096"]),
            (
                .pauseEnded(TaskPauseEvent(reason: .consumer, bytesHeld: 4096, duration: .microseconds(1500))), .debug,
                ["reason": "consumer", "duration_ms": "1.500"]
            ),
            (
                .published(directory.appendingPathComponent("file.bin")), .info,
                ["file": directory.appendingPathComponent("file.bin").path]
            ),
            (
                .completed(
                    TaskCompletionEvent(
                        response: nil, data: nil, value: nil, fileURL: nil, error: failure, metrics: TaskMetrics(createdAt: Date()))),
                .error, ["error": "timedOut", "attempts": "0"]
            ),
        ]
        for row in table {
            monitor.receive(row.event, for: task)
            let record = try XCTUnwrap(seen.all.last)
            XCTAssertEqual(record.event, row.event.name)
            XCTAssertEqual(record.level, row.level, record.event)
            for (key, value) in row.facts { XCTAssertEqual(record.metadata[key], value, "\(record.event) \(key)") }
            XCTAssertFalse(everything(record).contains("s3cret"), record.line)
        }
        XCTAssertEqual(seen.count, table.count)
    }

    // MARK: Lines

    func testLinesNeverBreakWhateverTheInput() throws {
        var encoded = request("/anything/a%0D%0Ab?note=%0D%0Ainjected=1&token=%0A")
        encoded.setValue("a%0D%0Ab", forHTTPHeaderField: "X-Encoded")
        _ = data(encoded)
        var raw = request("/get")
        raw.setValue("one\r\ntwo\u{2028}three\u{1B}[31m", forHTTPHeaderField: "X-Raw")
        _ = data(raw)
        waitForCompletedRecords(2)
        for record in records.all + infoRecords.all {
            XCTAssertFalse(record.line.contains("\n") || record.line.contains("\r") || record.line.contains("\u{2028}"), record.line)
            XCTAssertFalse(record.message.contains("\n"), record.message)
        }
        let attempts = records.all.filter { $0.event == "attempt" }
        XCTAssertTrue(attempts.contains { $0.metadata["header.x-encoded"] == "a%0D%0Ab" })
        XCTAssertTrue(attempts.first?.metadata["url"]?.hasSuffix("?note=%0D%0Ainjected=1&token=***") ?? false)
        // FoundationNetworking drops a header value with a line break before it is sent; if one
        // ever gets through, it is escaped. `Record` below takes raw line breaks directly.
        if let rawValue = attempts.last?.metadata["header.x-raw"] {
            XCTAssertEqual(rawValue, #"one\r\ntwo\u{2028}three\u{1B}[31m"#)
        }

        let record = LoggingMonitor.Record(
            level: .warning, event: "custom", taskIdentifier: 7, message: "two\nlines \"quoted\" a=b \\",
            metadata: ["b": "plain", "a": "", "key with space": "x\r\ny", "url": "http://h/?a=1"])
        XCTAssertEqual(
            record.line,
            #"level=warning event=custom task=7 msg="two\\nlines \"quoted\" a=b \\" a="" b=plain key_with_space="x\\r\\ny" url="http://h/?a=1""#
        )
        XCTAssertEqual(record.message, #"two\nlines "quoted" a=b \"#)
        XCTAssertEqual(record.metadata["key with space"], #"x\r\ny"#)
    }

    // MARK: Where the sink runs

    func testSinkRunsOneRecordAtATimeOffTheTransfersLock() {
        let group = DispatchGroup()
        for path in ["/get", "/bytes/20000?chunk=4096&chunk_delay_ms=2", "/status/503", "/json"] {
            group.enter()
            manager.dataTask(with: request(path)) { _ in group.leave() }.resume()
        }
        XCTAssertEqual(group.wait(timeout: .now() + 15), .success)
        waitForCompletedRecords(4)
        waitUntil("the reading monitor saw every completion") { taskReads.all.filter { $0.hasPrefix("completed ") }.count == 4 }
        XCTAssertEqual(overlaps.count, 0, "the event queue is serial")
        XCTAssertTrue(taskReads.all.filter { $0.hasPrefix("completed ") }.allSatisfy { !$0.hasSuffix(" -1") }, "\(taskReads.all)")
    }

    func testStandardErrorMonitorWritesOneLinePerRecord() throws {
        let monitor = LoggingMonitor.standardError(level: .info, redaction: .none)
        XCTAssertEqual(monitor.redaction, .none)
        // Standard error goes to a pipe for a moment; the test's own output may not use it then.
        var ends: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&ends), 0)
        let saved = dup(2)
        dup2(ends[1], 2)
        monitor.sessionDidInvalidate(error: nil)
        monitor.sessionDidInvalidate(error: CourierError(code: .network, message: "gone\nat http://u:p@h/"))
        LoggingMonitor.standardError(level: .error).sessionDidInvalidate(error: nil)
        dup2(saved, 2)
        close(saved)
        close(ends[1])
        let output = FileHandle(fileDescriptor: ends[0], closeOnDealloc: true).readDataToEndOfFile()
        // `.none` shows what the monitor is given; a CourierError's own message is always masked
        // (Redaction.default), so the user info is not in it to show.
        XCTAssertEqual(
            String(decoding: output, as: UTF8.self),
            """
            level=info event=invalidated msg="the session was invalidated"
            level=warning event=invalidated msg="the session was invalidated: network: gone\\\\nat http://***@h/" error="network: gone\\\\nat http://***@h/"

            """)
    }

    func testFilteredMonitorsBuildNothing() {
        // Nothing reaches `.critical`: no record is built or written.
        let silent = Counter()
        let filtered = LoggingMonitor(level: .critical) { _ in silent.increment() }
        let task = manager.dataTask(with: request("/get")) { _ in }
        filtered.taskDidCreate(task)
        filtered.taskDidResume(task)
        filtered.sessionDidInvalidate(error: nil)
        XCTAssertEqual(silent.count, 0)
        task.cancel()
    }
}
