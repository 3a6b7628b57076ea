import XCTest
import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `courier` meeting wget and curl habits, run as people run it: usage and help, the spellings
/// of what courier does anyway, timeouts, and what it says about retries and what it keeps.
final class GetHabitsTests: CommandLineTestCase {
    private static let body = TestServer.deterministicBytes(count: 300_000, seed: 81)

    // MARK: - Usage and help

    func testNoArgumentsIsAShortUsageOnStderrAndExitTwo() throws {
        let result = try run([])
        XCTAssertEqual(result.status, 2)
        XCTAssertEqual(result.out, "")
        XCTAssertTrue(result.err.hasPrefix("usage: courier get <url>"), result.err)
        XCTAssertLessThanOrEqual(errorLines(result.err).count, 5, "short: \(result.err)")
        XCTAssertTrue(result.err.contains("courier get --help"), result.err)
    }

    func testGetHelpIsGetsOwnHelpOnStdout() throws {
        for flag in ["-h", "--help"] {
            let result = try run(["get", flag])
            XCTAssertEqual(result.status, 0, flag)
            XCTAssertEqual(result.err, "", flag)
            XCTAssertTrue(result.out.hasPrefix("courier get <url> [options]"), result.out)
            XCTAssertTrue(result.out.contains("like wget"), "the model is named")
            XCTAssertTrue(result.out.contains("-o -") && result.out.contains("Resuming does not apply to a"))
            XCTAssertTrue(result.out.contains("--connect-timeout") && result.out.contains("--timeout"))
            XCTAssertFalse(result.out.contains("courier serve"), "get's help alone")
        }
        XCTAssertEqual(try run(["help", "get"]).out, try run(["get", "--help"]).out)
    }

    func testAMistypedOptionSuggestsTheClosestOne() throws {
        let url = server.url("/bytes/10").absoluteString
        let result = try run(["get", "--retry", "3", url])
        XCTAssertEqual(result.status, 2)
        XCTAssertEqual(
            errorLines(result.err),
            ["courier: unknown option '--retry' for get; did you mean --retries?", "Run 'courier get --help' for usage."])
        let command = try run(["gte", url])
        XCTAssertEqual(command.status, 2)
        XCTAssertTrue(command.err.hasPrefix("courier: unknown command 'gte'; did you mean 'get'?"), command.err)
        let bare = try run([url])
        XCTAssertTrue(bare.err.hasPrefix("courier: '\(url)' is not a command; did you mean 'courier get \(url)'?"), bare.err)
        XCTAssertTrue(server.requests.isEmpty)
    }

    func testCurlAndWgetSpellingsDownloadAsUsual() throws {
        server.addFile("data.bin", data: Self.body)
        let result = try run(["get", "-fsSLO", "-C", "-", "--location", "-c", server.url("/files/data.bin").absoluteString])
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertEqual(result.err, "", "-s is --quiet")
        XCTAssertEqual(try Data(contentsOf: directory.appendingPathComponent("data.bin")), Self.body)
    }

    func testDashCWithAnOffsetIsAUsageErrorSayingWhy() throws {
        let result = try run(["get", "-C", "1000", server.url("/bytes/10").absoluteString])
        XCTAssertEqual(result.status, 2)
        XCTAssertTrue(result.err.contains("-C takes only '-'"), result.err)
        XCTAssertTrue(server.requests.isEmpty)
    }

    // MARK: - Timeouts

    func testConnectTimeoutIsRefusedWithTheReasonAndWhatToUseInstead() throws {
        let result = try run(["get", "--connect-timeout", "5", server.url("/bytes/10").absoluteString])
        XCTAssertEqual(result.status, 2)
        XCTAssertTrue(result.err.hasPrefix("courier: --connect-timeout is not available: FoundationNetworking"), result.err)
        XCTAssertTrue(result.err.contains("--timeout") && result.err.contains("--max-time"), result.err)
    }

    func testTimeoutFailsASilentAttemptAndRetriesIt() throws {
        let silent = try ScriptedServer { _, _ in ScriptedServer.Reply([], ending: .hang) }
        defer { silent.stop() }
        let started = Date()
        let result = try run(["get", "--timeout", "1", "--retries", "1", "-o", "x.bin", silent.url("/x.bin").absoluteString])
        XCTAssertEqual(result.status, 3, result.err)
        XCTAssertLessThan(Date().timeIntervalSince(started), 15, "two attempts of about a second, not 60 s each")
        XCTAssertEqual(silent.requests.count, 2)
        let lines = errorLines(result.err)
        XCTAssertEqual(lines.count, 2, result.err)
        XCTAssertTrue(lines.first?.hasPrefix("courier: timed out: ") ?? false, result.err)
        XCTAssertTrue(lines.first?.hasSuffix("(retry 1 of 1)") ?? false, result.err)
        XCTAssertTrue(lines.last?.hasPrefix("courier: timed out: ") ?? false, result.err)
    }

    /// A listening socket that never accepts, its backlog already full: the kernel drops further
    /// SYNs, so a client's connect() hangs. --timeout bounds that too.
    func testTimeoutBoundsConnecting() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        XCTAssertGreaterThanOrEqual(listener, 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try withUnsafeMutablePointer(to: &address) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                guard bind(listener, raw, length) == 0, listen(listener, 0) == 0, getsockname(listener, raw, &length) == 0 else {
                    throw CocoaError(.featureUnsupported)
                }
            }
        }
        var fillers: [Int32] = []
        defer { fillers.forEach { close($0) } }
        for _ in 0..<3 {
            let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            _ = fcntl(filler, F_SETFL, fcntl(filler, F_GETFL) | O_NONBLOCK)
            _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(filler, $0, length) } }
            fillers.append(filler)
        }
        usleep(200_000)
        let port = UInt16(bigEndian: address.sin_port)
        let started = Date()
        let result = try run(["get", "--timeout", "1", "--retries", "0", "-o", "x.bin", "http://127.0.0.1:\(port)/x.bin"])
        XCTAssertEqual(result.status, 3, result.err)
        XCTAssertLessThan(Date().timeIntervalSince(started), 10, "not libcurl's 300 s connect timeout, nor the default 60 s")
        XCTAssertTrue(result.err.hasPrefix("courier: timed out: "), result.err)
    }

    // MARK: - Retries and what is kept

    func testRetriesAreAnnouncedAndTheFinalFailureSaysWhatIsKept() throws {
        server.addFile("data.bin", data: Self.body)
        let url = server.url("/files/data.bin?close_after=100000")
        let result = try run(["get", "--retries", "1", "-o", "out.bin", url.absoluteString])
        XCTAssertEqual(result.status, 3, result.err)
        let lines = errorLines(result.err)
        XCTAssertEqual(lines.count, 2, result.err)
        XCTAssertTrue(lines[0].hasPrefix("courier: network error: "), result.err)
        // The delay is backoff with jitter: 125 to 250 ms.
        XCTAssertTrue(lines[0].contains(" (97.7 KiB received); retrying in 0."), result.err)
        XCTAssertTrue(lines[0].hasSuffix(" s, continuing from there (retry 1 of 1)"), result.err)
        XCTAssertTrue(lines[1].hasPrefix("courier: network error: "), result.err)
        XCTAssertTrue(lines[1].hasSuffix("(\(url)); 195.3 KiB kept — run the same command again to resume"), result.err)
        XCTAssertEqual(try listing(), [".out.bin.courier-partial", ".out.bin.courier-resume"])
    }

    func testQuietLeavesOutRetryLinesButNotTheError() throws {
        server.addFile("data.bin", data: Self.body)
        let result = try run([
            "get", "-q", "--retries", "1", "-o", "out.bin", server.url("/files/data.bin?close_after=100000").absoluteString,
        ])
        XCTAssertEqual(result.status, 3, result.err)
        XCTAssertEqual(errorLines(result.err).count, 1, result.err)
        XCTAssertTrue(result.err.contains("kept — run the same command again to resume"), result.err)
    }

    func testARetryAfterBeyondWhatCourierWaitsStopsAtOnceSayingWhatTheServerAsked() throws {
        let started = Date()
        let url = server.url("/status/503?retry_after=999999")
        let result = try run(["get", "-o", "busy.bin", url.absoluteString])
        XCTAssertEqual(result.status, 4, result.err)
        XCTAssertLessThan(Date().timeIntervalSince(started), 10, "no 120 s waits")
        XCTAssertEqual(server.requests.count, 1)
        XCTAssertEqual(
            errorLines(result.err),
            [
                "courier: HTTP 503 Service Unavailable from \(url): the server asked to be retried after 999999 s (11.6 days), "
                    + "and courier waits at most 120 s, so it stopped instead of retrying"
            ])
        XCTAssertEqual(try listing(), [])
    }

    /// With `--retries 0` nothing is retried, so a long Retry-After is not why courier stopped:
    /// the line is the status alone (it said "courier waits at most 120 s" from a default policy).
    func testWithRetriesZeroALongRetryAfterIsNotGivenAsTheReason() throws {
        let url = server.url("/status/503?retry_after=999999")
        let result = try run(["get", "--retries", "0", "-o", "busy.bin", url.absoluteString])
        XCTAssertEqual(result.status, 4, result.err)
        XCTAssertEqual(server.requests.count, 1)
        XCTAssertEqual(errorLines(result.err), ["courier: HTTP 503 Service Unavailable from \(url)"])
    }

    func testARetryAfterBeyondWhatCourierWaitsKeepsTheBytesAlreadyReceived() throws {
        let server = try ScriptedServer { _, index in
            index == 0
                ? .response(
                    status: 200, headers: [("Content-Length", "\(Self.body.count)"), ("ETag", "\"b\"")], body: Self.body,
                    sendingOnly: 100_000)
                : .response(status: 503, headers: [("Retry-After", "86400"), ("Content-Length", "0")])
        }
        defer { server.stop() }
        let result = try run(["get", "-o", "b.bin", server.url("/b.bin").absoluteString])
        XCTAssertEqual(result.status, 4, result.err)
        let lines = errorLines(result.err)
        XCTAssertEqual(lines.count, 2, result.err)
        XCTAssertTrue(lines[0].contains("continuing from there (retry 1 of 3)"), result.err)
        XCTAssertTrue(lines[1].contains("asked to be retried after 86400 s (24.0 hours)"), result.err)
        XCTAssertTrue(lines[1].hasSuffix("; 97.7 KiB kept — run the same command again to resume"), result.err)
        XCTAssertEqual(try listing(), [".b.bin.courier-partial", ".b.bin.courier-resume"])
    }
}
