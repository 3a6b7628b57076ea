import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The platform kit in this test process (Docs/PlatformFixes.md): every `SessionManager`
/// installs it, a waiting transfer costs no CPU, and the responses that kill a process without it
/// end their task with a typed error. The same defects without the kit are shown by
/// `TrapContainmentTests` and `PlatformFixesCommandTests`, which run `courier` with
/// `COURIER_PLATFORM_FIXES=off`.
final class PlatformFixesTests: CourierTestCase {
    // MARK: - Installed and reported

    func testEverySessionManagerInstallsTheKitAndEachFixIsActive() {
        // Given a manager (made by setUp), then the kit is active in FoundationNetworking's own
        // import table, and each fix's functions are wrapped there.
        let status = PlatformFixes.status
        XCTAssertEqual(status.state, .active, status.reason ?? "")
        XCTAssertNil(status.reason)
        XCTAssertTrue(status.object?.hasSuffix("libFoundationNetworking.so") ?? false, status.object ?? "nil")
        for fix in PlatformFixes.Fix.allCases {
            XCTAssertTrue(status.isActive(fix), "\(fix) is not active")
        }
        // Installing again changes nothing.
        XCTAssertEqual(PlatformFixes.install().state, .active)
    }

    // MARK: - §6.16: a waiting transfer costs no CPU

    func testAResponseHeadThatTakesTwoSecondsCostsNoCPUOnANewConnection() {
        // Given a new manager (so a new connection: libcurl first asks to write, then to read).
        let fresh = SessionManager(configuration: makeConfiguration())
        let removedBefore = count(.staleSocketSources)
        // When the server takes two seconds to answer.
        let (response, cpu) = measuringCPU {
            wait(timeout: 15) { finish in fresh.dataTask(with: self.request("/delay/2000"), completion: finish).resume() }
        }
        // Then the wait cost almost nothing (without the kit: 1.3–1.7 s of CPU), and the fix
        // removed the write source libcurl stopped asking for.
        XCTAssertEqual(response?.response?.statusCode, 200)
        XCTAssertLessThan(cpu, 0.4, "CPU seconds for a two-second wait")
        XCTAssertGreaterThan(count(.staleSocketSources), removedBefore)
    }

    func testAnEventStreamWithEventsASecondApartCostsNoCPU() async throws {
        let fresh = SessionManager(configuration: makeConfiguration())
        let url = server.url("/sse?count=3&interval_ms=700")
        let started = cpuSeconds()
        var received = 0
        for try await _ in fresh.events(for: URLRequest(url: url), reconnection: .never) { received += 1 }
        let cpu = cpuSeconds() - started
        XCTAssertEqual(received, 3)
        XCTAssertLessThan(cpu, 0.4, "CPU seconds for about two seconds of an event stream")
    }

    // MARK: - §7.1: a response head cut short

    func testAStatusLineThenCloseIsANoResponseErrorWithOneCompletion() throws {
        try assertCutShort(ScriptedServer.Reply.bytes("HTTP/1.1 200 OK\r\n"))
    }

    func testHeaderLinesWithoutTheirBlankLineThenCloseAreCutShort() throws {
        try assertCutShort(ScriptedServer.Reply.bytes("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nETag: \"x\"\r\n"))
    }

    func testAFinalHeadCutShortAfterAnInterimContinueIsCutShort() throws {
        try assertCutShort(ScriptedServer.Reply.bytes("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n"))
    }

    private func assertCutShort(_ reply: ScriptedServer.Reply, file: StaticString = #filePath, line: UInt = #line) throws {
        let hostile = try ScriptedServer { _, _ in reply }
        defer { hostile.stop() }
        let before = count(.responseHeadCutShort)
        // When the head is cut short, then the task ends once with a typed error that says so,
        // and the process lives on.
        let response = wait { finish in
            manager.dataTask(with: URLRequest(url: hostile.url("/x")), completion: finish).resume()
        }
        let error = try XCTUnwrap(response?.error, file: file, line: line)
        XCTAssertEqual(error.code, .noResponse, error.description, file: file, line: line)
        XCTAssertTrue(error.description.contains("before the end of the response head"), error.description, file: file, line: line)
        XCTAssertEqual(count(.responseHeadCutShort), before + 1, file: file, line: line)
    }

    func testACompleteHeadWithNoBodyIsUntouched() throws {
        // Given a complete head that announces an empty body, then the close: an ordinary answer.
        let hostile = try ScriptedServer { _, _ in .bytes("HTTP/1.1 204 No Content\r\nX-Seen: yes\r\n\r\n") }
        defer { hostile.stop() }
        let before = count(.responseHeadCutShort)
        let response = wait { finish in
            manager.dataTask(with: URLRequest(url: hostile.url("/x")), completion: finish).resume()
        }
        XCTAssertNil(response?.error)
        XCTAssertEqual(response?.response?.statusCode, 204)
        XCTAssertEqual(response?.response?.value(forHTTPHeaderField: "X-Seen"), "yes")
        XCTAssertEqual(count(.responseHeadCutShort), before)
    }

    func testGoodAnswersBetweenHeadsCutShortAllSucceed() throws {
        // FoundationNetworking reuses libcurl handles: what the kit notes about one transfer must
        // never leak into the next. Every third answer is cut short, the others are whole.
        let body = Data("whole".utf8)
        let hostile = try ScriptedServer { _, index in
            index % 3 == 2
                ? .bytes("HTTP/1.1 200 OK\r\n")
                : .response(status: 200, headers: [("Content-Length", "\(body.count)")], body: body)
        }
        defer { hostile.stop() }
        var good = 0
        var cutShort = 0
        for _ in 0..<60 {
            let response = wait { finish in
                manager.dataTask(with: URLRequest(url: hostile.url("/x")), completion: finish).resume()
            }
            if response?.value == body { good += 1 } else if response?.error?.code == .noResponse { cutShort += 1 }
        }
        XCTAssertEqual(good, 40)
        XCTAssertEqual(cutShort, 20)
    }

    // MARK: - §7.2: a length FoundationNetworking cannot convert

    func testAContentLengthOf2To63Minus512IsATypedErrorNotATrap() throws {
        for length in ["9223372036854775296", "9223372036854775807"] {
            let hostile = try ScriptedServer { _, _ in
                .response(status: 200, headers: [("Content-Length", length)], body: Data("abc".utf8))
            }
            defer { hostile.stop() }
            let before = count(.hugeContentLength)
            let response = wait { finish in
                manager.dataTask(with: URLRequest(url: hostile.url("/x")), completion: finish).resume()
            }
            let error = try XCTUnwrap(response?.error, length)
            // Courier reads the length itself: no file's, so the answer is a broken one, ended
            // and retried as a lost connection would be (ContentLength.firstImpossible)
            XCTAssertEqual(error.code, .noResponse, "\(length): \(error)")
            XCTAssertTrue(error.code.isTransient)
            XCTAssertGreaterThan(count(.hugeContentLength), before, length)
        }
    }

    // MARK: - §6.17: the URL handle of every transfer's host check

    func testEveryRequestsURLHandleIsReleasedWhole() {
        // FoundationNetworking checks each transfer's host with a libcurl URL handle and frees it
        // with curl_free, losing its parts (valgrind: 15,932 bytes in 1,201 blocks for 300
        // requests without the kit, none with it). The kit releases each with curl_url_cleanup.
        let before = count(.urlHandleLeak)
        for _ in 0..<20 {
            XCTAssertNil(data(request("/bytes/16")).error)
        }
        XCTAssertGreaterThanOrEqual(count(.urlHandleLeak), before + 20)
    }

    // MARK: - Helpers

    private func count(_ fix: PlatformFixes.Fix) -> UInt64 {
        PlatformFixes.status.fixes.first { $0.fix == fix }?.count ?? 0
    }

    private func measuringCPU<T>(_ work: () -> T) -> (T, Double) {
        let started = cpuSeconds()
        let value = work()
        return (value, cpuSeconds() - started)
    }

    /// User and system CPU of this whole process.
    private func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1_000_000 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}
