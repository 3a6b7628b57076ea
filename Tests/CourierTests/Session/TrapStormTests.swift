import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
import CourierSupport

/// A server that answers, thousands of times, with the responses that kill any process reading
/// them through plain FoundationNetworking 6.3.1 (Docs/Platform.md §7.1 and §7.2), mixed with good
/// answers, to every kind of task at once.
///
/// What users rely on: a service that fetches URLs it does not control survives any number of
/// such responses. Each request ends once, with a typed ``CourierError``; no download publishes a
/// file; good requests that follow on recycled connections and easy handles still get exact
/// bytes; memory and file descriptors do not grow with the number of hostile answers; and
/// ``PlatformFixes/status`` counts what the kit caught.
final class TrapStormTests: CourierTestCase {
    /// Hostile answers of each kind, in all (spread evenly over the APIs).
    private static let perKind = 1_000
    /// Requests in flight at once.
    private static let inFlight = 16

    // MARK: - The kit is there

    /// A service relies on the kit being in place without doing anything: making a manager
    /// installs it, and both trap fixes are in FoundationNetworking's import table.
    func testEveryManagerHasThePlatformKitWithBothTrapFixesActive() {
        // Given a process that made a SessionManager (the test case made one)
        // When the kit is asked what it does
        let status = PlatformFixes.status
        // Then it is active, with both trap fixes in place
        XCTAssertEqual(status.state, .active, status.reason ?? "no reason given")
        XCTAssertTrue(status.isActive(.responseHeadCutShort), "\(status)")
        XCTAssertTrue(status.isActive(.hugeContentLength), "\(status)")
    }

    // MARK: - The storm

    /// 1,000 answers of each trapping kind, and a good answer every tenth, to data tasks (callback
    /// and async), downloads, byte streams and event streams, 16 in flight, one attempt each.
    func testThousandsOfTrappingResponsesEndAsTypedErrorsWhileGoodResponsesStayExact() async throws {
        // Given the kit active with both trap fixes (without it the first hostile answer kills this process)
        let before = PlatformFixes.status
        guard before.state == .active, before.isActive(.responseHeadCutShort), before.isActive(.hugeContentLength) else {
            return XCTFail("the kit is not active with both trap fixes; the first hostile answer would kill this process: \(before)")
        }
        // and a process warmed up by a small storm (libcurl, thread pools), then measured
        _ = try await Self.runStorm(jobs: Self.jobs(perKindAndAPI: 1), configuration: stormConfiguration(), directory: directory)
        try await Self.settle()
        let residentBefore = try Self.residentBytes()
        let descriptorsBefore = Self.openDescriptors()

        // When 6,000 hostile answers, with a good one in every tenth place and last, reach five
        // APIs, 16 requests at a time
        let jobs = Self.jobs(perKindAndAPI: Self.perKind / API.allCases.count)
        let clock = ContinuousClock()
        let started = clock.now
        let report = try await Self.runStorm(jobs: jobs, configuration: stormConfiguration(), directory: directory)
        let elapsed = clock.now - started
        print("TrapStormTests: \(jobs.count) requests (\(report.hostile) hostile, \(report.good) good) in \(elapsed)")

        // Then every hostile answer ended its request with the typed error its kind calls for,
        // and every good answer arrived exact
        XCTAssertEqual(report.hostile, Hostile.allCases.count * Self.perKind)
        XCTAssertEqual(report.unexpected, [], "outcomes that differ from what each kind calls for")
        XCTAssertEqual(report.good, jobs.filter { $0.answer == nil }.count)
        // and each request completed exactly once, after exactly one attempt, with no retry
        XCTAssertEqual(report.completionProblems, [], "requests whose completions or attempts were not exactly one")
        XCTAssertEqual(report.serverProblems, [], "paths the server did not see exactly once")
        // and no download published a file for a hostile answer, or left side files behind
        XCTAssertEqual(report.filesPublishedForHostileAnswers, [])
        XCTAssertEqual(stagingFiles(in: directory), [])
        // and the kit counted at least one catch for each hostile answer of its kind
        let after = PlatformFixes.status
        for fix in [PlatformFixes.Fix.responseHeadCutShort, .hugeContentLength] {
            let grown = Self.count(fix, in: after) - Self.count(fix, in: before)
            let sent = Hostile.allCases.filter { $0.fix == fix }.count * Self.perKind
            XCTAssertGreaterThanOrEqual(grown, UInt64(sent), "\(fix): \(grown) caught for \(sent) sent")
        }

        // and once the manager is gone, memory and descriptors are back near where they started
        try await Self.settle()
        var descriptorsAfter = Self.openDescriptors()
        let deadline = Date().addingTimeInterval(10)
        while descriptorsAfter > descriptorsBefore + 4, Date() < deadline {
            try await Task.sleep(for: .milliseconds(50))
            descriptorsAfter = Self.openDescriptors()
        }
        let residentAfter = try Self.residentBytes()
        print("TrapStormTests: RSS \(residentBefore >> 20) -> \(residentAfter >> 20) MiB, fds \(descriptorsBefore) -> \(descriptorsAfter)")
        XCTAssertLessThanOrEqual(descriptorsAfter, descriptorsBefore + 4, "descriptors leaked")
        // (Under ThreadSanitizer, RSS measures the sanitizer: its shadow memory and the history it
        // keeps of every thread, and the scripted server starts one per connection.)
        if !Self.isThreadSanitized {
            XCTAssertLessThanOrEqual(
                residentAfter, residentBefore + 32 << 20, "resident memory grew by \((residentAfter - residentBefore) >> 20) MiB")
        }
    }

    // MARK: - Kinds of answers and of requests

    /// The answers FoundationNetworking 6.3.1 traps on, each followed by FIN.
    enum Hostile: String, CaseIterable, Sendable {
        /// §7.1: `HTTP/1.1 200 OK\r\n`.
        case statusLineOnly
        /// §7.1: a status line and header lines without a body length, no blank line.
        case headerLinesWithoutLength
        /// §7.1: a status line and `Content-Length: 0\r\n`, no blank line.
        case zeroLengthWithoutBlankLine
        /// §7.1: a whole `100 Continue`, then a final status line only.
        case continueThenStatusLine
        /// §7.2: the least length whose `Double` is 2^63.
        case length2To63Minus512
        /// §7.2: the greatest signed 64-bit length.
        case length2To63Minus1

        var fix: PlatformFixes.Fix {
            switch self {
            case .length2To63Minus512, .length2To63Minus1: .hugeContentLength
            default: .responseHeadCutShort
            }
        }

        func reply(contentType: String) -> ScriptedServer.Reply {
            switch self {
            case .statusLineOnly:
                .bytes("HTTP/1.1 200 OK\r\n")
            case .headerLinesWithoutLength:
                .bytes("HTTP/1.1 200 OK\r\nContent-Type: \(contentType)\r\nETag: \"x\"\r\nConnection: close\r\n")
            case .zeroLengthWithoutBlankLine:
                .bytes("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n")
            case .continueThenStatusLine:
                .bytes("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n")
            case .length2To63Minus512:
                .response(
                    status: 200, headers: [("Content-Type", contentType), ("Content-Length", "9223372036854775296")],
                    body: Data("abc".utf8))
            case .length2To63Minus1:
                .response(
                    status: 200, headers: [("Content-Type", contentType), ("Content-Length", "9223372036854775807")],
                    body: Data("abc".utf8))
            }
        }
    }

    /// The ways a user asks.
    enum API: String, CaseIterable, Sendable {
        /// `dataTask(with:completion:)`.
        case dataTask
        /// `data(for:)`.
        case asyncData
        /// `downloadTask(with:to: .file(…), policy:completion:)`.
        case download
        /// `bytes(for:)`, read to the end.
        case bytes
        /// `events(for:reconnection: .never)`, read to the end.
        case events
    }

    /// One request: its API, and the answer the server gives (`nil`: a good one).
    struct Job: Sendable {
        let number: Int
        let api: API
        let answer: Hostile?

        var path: String { "/storm/\(api.rawValue)/\(number)" }

        /// The body of the good answer: bytes of this request's own, or one event naming it.
        var goodBody: Data {
            api == .events
                ? Data("id: \(number)\ndata: good \(number)\n\n".utf8)
                : TestServer.deterministicBytes(count: 100 + number % 200, seed: UInt64(number))
        }

        var contentType: String { api == .events ? "text/event-stream" : "application/octet-stream" }

        var reply: ScriptedServer.Reply {
            guard let answer else {
                return .response(
                    status: 200, headers: [("Content-Type", contentType), ("Content-Length", "\(goodBody.count)")],
                    body: goodBody)
            }
            return answer.reply(contentType: contentType)
        }
    }

    /// What each hostile answer must end with, per API.
    static func expectedCode(_ hostile: Hostile, _ api: API) -> CourierError.Code {
        // A length from 2^63 - 512 up is no file's: every API ends the answer as a broken
        // connection (ContentLength.firstImpossible), as the kit's head cut short does.
        .noResponse
    }

    /// What the error's message says, per API: for a head cut short, the kit's own words (not
    /// libcurl's "Empty reply from server": the kit caught it); for a huge length, Courier's.
    static func expectedMessage(_ hostile: Hostile, _ api: API) -> String {
        switch hostile {
        case .length2To63Minus512, .length2To63Minus1:
            "claimed an impossible Content-Length"
        default:
            "the connection closed before the end of the response head (caught by Courier's platform fixes)"
        }
    }

    /// For every API, `count` answers of each hostile kind in turn, with a good answer in every
    /// tenth place and last (each API's final request shows it recovered); the APIs interleaved,
    /// so that all of them are in flight together.
    static func jobs(perKindAndAPI count: Int) -> [Job] {
        let hostilePerAPI = count * Hostile.allCases.count
        var slots: [Hostile?] = []
        var hostileSoFar = 0
        while hostileSoFar < hostilePerAPI {
            if slots.count % 10 == 9 {
                slots.append(nil)
            } else {
                slots.append(Hostile.allCases[hostileSoFar % Hostile.allCases.count])
                hostileSoFar += 1
            }
        }
        if slots.last! != nil { slots.append(nil) }
        var jobs: [Job] = []
        for slot in slots {
            for api in API.allCases { jobs.append(Job(number: jobs.count, api: api, answer: slot)) }
        }
        return jobs
    }

    /// One attempt per request, 16 at once, and a bound on each request however it goes wrong.
    private func stormConfiguration() -> SessionManager.Configuration {
        var configuration = makeConfiguration()
        configuration.retryPolicy = nil
        configuration.maximumRunningTasksPerHost = Self.inFlight
        configuration.urlSessionConfiguration.httpMaximumConnectionsPerHost = Self.inFlight
        configuration.deadline = .seconds(30)
        return configuration
    }

    // MARK: - Running a storm

    /// What a storm did, reduced to what the test asserts.
    struct Report: Sendable {
        var hostile = 0
        var good = 0
        /// `kind api: what happened` for each kind of unexpected outcome, with how often.
        var unexpected: [String] = []
        var completionProblems: [String] = []
        var serverProblems: [String] = []
        var filesPublishedForHostileAnswers: [String] = []
    }

    /// How one request ended.
    struct Outcome: Sendable {
        let job: Job
        var error: CourierError?
        var body = Data()
        var events: [String] = []
        var publishedFile = false
    }

    /// Runs `jobs` against a new scripted server with a new manager, both gone when it returns.
    private static func runStorm(
        jobs: [Job], configuration: SessionManager.Configuration, directory: URL
    ) async throws -> Report {
        let server = try ScriptedServer { request, _ in
            guard let number = Int(request.target.split(separator: "/").last ?? ""), jobs.indices.contains(number) else {
                return .bytes("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
            }
            return jobs[number].reply
        }
        defer { server.stop() }
        let monitor = CompletionMonitor()
        var configuration = configuration
        configuration.eventMonitors = [monitor]
        let callbacks = Tally()
        var outcomes: [Outcome] = []
        do {
            let manager = SessionManager(configuration: configuration)
            defer { manager.invalidate(cancelingTasks: true) }
            let next = Locked(0)
            let take: @Sendable () -> Job? = {
                next.withLock { index in
                    guard index < jobs.count else { return nil }
                    defer { index += 1 }
                    return jobs[index]
                }
            }
            outcomes = await withTaskGroup(of: [Outcome].self) { group in
                for _ in 0..<inFlight {
                    group.addTask {
                        var done: [Outcome] = []
                        while let job = take() {
                            done.append(await run(job, manager: manager, server: server, directory: directory, callbacks: callbacks))
                        }
                        return done
                    }
                }
                var all: [Outcome] = []
                for await part in group { all += part }
                return all
            }
            // Monitors are called on the manager's event queue, after the fact: wait for them,
            // then leave room for a wrongful second completion to show up.
            let deadline = Date().addingTimeInterval(10)
            while monitor.completions < jobs.count, Date() < deadline { try await Task.sleep(for: .milliseconds(10)) }
            try await Task.sleep(for: .milliseconds(100))
        }
        return report(outcomes, jobs: jobs, monitor: monitor, callbacks: callbacks, server: server)
    }

    private static func run(
        _ job: Job, manager: SessionManager, server: ScriptedServer, directory: URL, callbacks: Tally
    ) async -> Outcome {
        var outcome = Outcome(job: job)
        let request = URLRequest(url: server.url(job.path))
        switch job.api {
        case .dataTask:
            let response: DataResponse<Data> = await withCheckedContinuation { continuation in
                manager.dataTask(with: request) { response in
                    if callbacks.record(job.number) == 1 { continuation.resume(returning: response) }
                }.resume()
            }
            outcome.error = response.error
            outcome.body = response.value ?? Data()
        case .asyncData:
            do {
                outcome.body = try await manager.data(for: request).0
            } catch {
                outcome.error = error
            }
        case .download:
            let destination = directory.appendingPathComponent("storm-\(job.number).bin")
            var policy = DownloadPolicy()
            policy.retry.retryLimit = 0
            let response: DownloadResponse = await withCheckedContinuation { continuation in
                manager.downloadTask(with: request, to: .file(destination), policy: policy) { response in
                    if callbacks.record(job.number) == 1 { continuation.resume(returning: response) }
                }.resume()
            }
            outcome.error = response.error
            if FileManager.default.fileExists(atPath: destination.path) {
                outcome.publishedFile = true
                outcome.body = (try? Data(contentsOf: destination)) ?? Data()
                try? FileManager.default.removeItem(at: destination)
            }
        case .bytes:
            do {
                let (stream, _) = try await manager.bytes(for: request)
                for try await chunk in stream.chunks { outcome.body.append(chunk) }
            } catch {
                outcome.error = error
            }
        case .events:
            do {
                for try await event in manager.events(for: request, reconnection: .never) { outcome.events.append(event.data) }
            } catch {
                outcome.error = error
            }
        }
        return outcome
    }

    private static func report(
        _ outcomes: [Outcome], jobs: [Job], monitor: CompletionMonitor, callbacks: Tally, server: ScriptedServer
    ) -> Report {
        var report = Report()
        var unexpected: [String: Int] = [:]
        for outcome in outcomes {
            let job = outcome.job
            let what: String?
            if let hostile = job.answer {
                report.hostile += 1
                let expected = expectedCode(hostile, job.api)
                if let error = outcome.error {
                    what =
                        error.code == expected && error.message.contains(expectedMessage(hostile, job.api))
                        ? nil : "\(error.code) (expected \(expected)): \(error.message)"
                } else {
                    what = "no error (expected \(expected)); \(outcome.body.count) bytes, \(outcome.events.count) events"
                }
                if outcome.publishedFile { report.filesPublishedForHostileAnswers.append(job.path) }
            } else {
                report.good += 1
                if let error = outcome.error {
                    what = "good answer failed: \(error.code): \(error.message)"
                } else if job.api == .events {
                    what = outcome.events == ["good \(job.number)"] ? nil : "good events differ: \(outcome.events)"
                } else if job.api == .download && !outcome.publishedFile {
                    what = "good download published nothing"
                } else {
                    what = outcome.body == job.goodBody ? nil : "good body differs (\(outcome.body.count) bytes)"
                }
            }
            if let what { unexpected["\(job.answer?.rawValue ?? "good") \(job.api): \(what)", default: 0] += 1 }
        }
        report.unexpected = unexpected.sorted { $0.key < $1.key }.map { "\($0.value)x \($0.key)" }
        if outcomes.count != jobs.count { report.unexpected.append("\(outcomes.count) outcomes for \(jobs.count) jobs") }

        let seen = monitor.snapshot
        let asked = Dictionary(server.requests.map { ($0.target, 1) }, uniquingKeysWith: +)
        for job in jobs {
            let counts = seen[job.path] ?? MonitorCounts()
            if counts.completions != 1 || counts.attempts != 1 || counts.retries != 0 {
                report.completionProblems.append(
                    "\(job.path): \(counts.completions) completions, \(counts.attempts) attempts, \(counts.retries) retries")
            }
            if job.api == .dataTask || job.api == .download, callbacks.count(job.number) != 1 {
                report.completionProblems.append("\(job.path): completion handler called \(callbacks.count(job.number)) times")
            }
            if asked[job.path] != 1 { report.serverProblems.append("\(job.path): \(asked[job.path] ?? 0) requests") }
        }
        return report
    }

    // MARK: - Measuring the process

    private static func count(_ fix: PlatformFixes.Fix, in status: PlatformFixes.Status) -> UInt64 {
        status.fixes.first { $0.fix == fix }?.count ?? 0
    }

    /// VmRSS of this process, in bytes, once the allocator has handed free memory back: what
    /// stays is what is held, not what glibc keeps cached in its per-thread arenas.
    private static func residentBytes() throws -> Int {
        if let trim = dlsym(nil, "malloc_trim") {  // glibc's; not in the Glibc module
            _ = unsafeBitCast(trim, to: (@convention(c) (Int) -> Int32).self)(0)
        }
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try XCTUnwrap(status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") })
        let kilobytes = try XCTUnwrap(line.split(separator: " ").dropFirst().first.flatMap { Int($0) })
        return kilobytes * 1024
    }

    /// Whether this process runs under ThreadSanitizer.
    private static let isThreadSanitized = dlsym(nil, "__tsan_init") != nil

    /// How many file descriptors this process has open.
    private static func openDescriptors() -> Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).count
    }

    /// Gives released managers and closed connections a moment to wind down.
    private static func settle() async throws {
        try await Task.sleep(for: .milliseconds(500))
    }
}

/// Per-request counts of what the manager reported.
private struct MonitorCounts: Sendable {
    var attempts = 0
    var retries = 0
    var completions = 0
}

/// Counts attempts, retries and completions per request path.
private final class CompletionMonitor: EventMonitor {
    private let counts = Locked<[String: MonitorCounts]>([:])
    private let completed = Locked(0)

    var completions: Int { completed.withLock { $0 } }
    var snapshot: [String: MonitorCounts] { counts.withLock { $0 } }

    func taskDidStartAttempt(_ task: any SessionTask, event: TaskAttemptEvent) {
        counts.withLock { $0[Self.path(task), default: MonitorCounts()].attempts += 1 }
    }

    func taskWillRetry(_ task: any SessionTask, event: TaskRetryEvent) {
        counts.withLock { $0[Self.path(task), default: MonitorCounts()].retries += 1 }
    }

    func taskDidComplete(_ task: any SessionTask, event: TaskCompletionEvent) {
        counts.withLock { $0[Self.path(task), default: MonitorCounts()].completions += 1 }
        completed.withLock { $0 += 1 }
    }

    private static func path(_ task: any SessionTask) -> String {
        task.originalRequest.url?.path ?? "?"
    }
}

/// How many times each request's completion handler ran.
private final class Tally: Sendable {
    private let counts = Locked<[Int: Int]>([:])

    /// Counts one call for `number`; returns how many there have been.
    func record(_ number: Int) -> Int {
        counts.withLock { counts in
            counts[number, default: 0] += 1
            return counts[number]!
        }
    }

    func count(_ number: Int) -> Int { counts.withLock { $0[number] ?? 0 } }
}
