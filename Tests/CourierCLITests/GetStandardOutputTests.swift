import XCTest
import Courier
import CourierTestServer
@testable import courier
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `courier get -o -`: the body streams to stdout as it arrives, and what is there is always a
/// prefix of the true body (continued by Range, never repeated or spliced, across retries and
/// crashes); everything else on stderr; nothing left behind. `--whole` keeps the staged body
/// that is copied out only once complete and verified.
final class GetStandardOutputTests: CommandLineTestCase {
    private static let body = TestServer.deterministicBytes(count: 300_000, seed: 71)
    /// The child's TMPDIR, where `-o -` stages the body: checked empty after every run.
    private var temporary: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        temporary = logs.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
    }

    private func get(_ arguments: [String], platformFixes: Bool = true) throws -> Outcome {
        var environment = ["TMPDIR": temporary.path]
        if !platformFixes { environment[PlatformFixes.environmentVariable] = "off" }
        return try run(["get", "-o", "-"] + arguments, environment: environment)
    }

    private func staged() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: temporary.path)
    }

    /// What the last run wrote to stdout, as bytes.
    private func lastOutput() throws -> Data {
        try Data(contentsOf: logs.appendingPathComponent("\(launches).out"))
    }

    func testTheBodyGoesToStdoutAndEverythingElseToStderr() throws {
        server.addFile("data.bin", data: Self.body)
        // 19 writes 100 ms apart: about two seconds, so at least one progress line.
        let result = try get([server.url("/files/data.bin?chunk=16384&chunk_delay_ms=100").absoluteString])
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertEqual(try lastOutput(), Self.body, "stdout is the body, exactly")
        XCTAssertEqual(
            server.requests.last?.header("Accept-Encoding"), "identity",
            "the representation's own bytes, asked by the library's paused stream")
        let lines = errorLines(result.err)
        XCTAssertTrue(lines.contains { $0.contains(" of 293.0 KiB (") }, "progress on stderr: \(result.err)")
        XCTAssertTrue(lines.last?.hasPrefix("courier: wrote 293.0 KiB to stdout (in ") ?? false, result.err)
        XCTAssertEqual(try listing(), [], "nothing in the working directory")
        XCTAssertEqual(try staged(), [], "the staging directory is gone")
    }

    /// `--timeout` is the stream's policy now that URLSession's request timeout no longer
    /// applies to streams: a silent attempt still fails after it and is retried.
    func testTimeoutFailsASilentStreamAndRetriesIt() throws {
        let silent = try ScriptedServer { _, _ in ScriptedServer.Reply([], ending: .hang) }
        defer { silent.stop() }
        let started = Date()
        let result = try get(["--timeout", "1", "--retries", "1", silent.url("/x.bin").absoluteString])
        XCTAssertEqual(result.status, 3, result.err)
        XCTAssertLessThan(Date().timeIntervalSince(started), 15, "two attempts of about a second, not 60 s each")
        XCTAssertEqual(silent.requests.count, 2)
        XCTAssertEqual(result.out, "")
        let lines = errorLines(result.err)
        XCTAssertTrue(lines.first?.hasPrefix("courier: timed out: ") ?? false, result.err)
        XCTAssertTrue(lines.first?.hasSuffix("(retry 1 of 1)") ?? false, result.err)
        XCTAssertTrue(lines.last?.hasPrefix("courier: timed out: ") ?? false, result.err)
    }

    func testAFailedDownloadWritesNothingToStdout() throws {
        for whole in [[], ["--whole"]] {
            let result = try get(whole + [server.url("/status/404?body=gone").absoluteString])
            XCTAssertEqual(result.status, 4, result.err)
            XCTAssertEqual(result.out, "")
            XCTAssertEqual(
                errorLines(result.err),
                ["courier: HTTP 404 Not Found from \(server.url("/status/404?body=gone")); nothing was written to stdout"])
            XCTAssertEqual(try staged(), [])
        }
    }

    // MARK: - Streaming

    /// The point of streaming: a reader of the pipe gets the first bytes while the server is
    /// still sending the rest.
    func testTheFirstBytesReachThePipeBeforeTheBodyEnds() throws {
        // 40 bytes spread over four seconds.
        let url = server.url("/drip?numbytes=40&duration_ms=4000").absoluteString
        var ends: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&ends), 0)
        let reader = ends[0]
        defer { close(reader) }
        let writer = FileHandle(fileDescriptor: ends[1], closeOnDealloc: true)
        let started = Date()
        let child = try start(["get", "-o", "-", "-q", url], environment: ["TMPDIR": temporary.path], standardOutput: writer)
        try writer.close()  // the child has its own copy; ours would keep the pipe open forever

        var received = Data()
        var firstByteAfter: TimeInterval?
        var runningAtFirstByte = false
        var buffer = [UInt8](repeating: 0, count: 64)
        while Date().timeIntervalSince(started) < 20 {
            var descriptor = pollfd(fd: reader, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 100) > 0 else { continue }
            let count = read(reader, &buffer, buffer.count)
            if count <= 0 { break }  // end of the pipe: the child is done
            if firstByteAfter == nil {
                firstByteAfter = Date().timeIntervalSince(started)
                runningAtFirstByte = child.process.isRunning
            }
            received.append(contentsOf: buffer[0..<count])
        }
        let result = finish(child)
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertEqual(received, Data(repeating: UInt8(ascii: "*"), count: 40), "the whole body, once")
        let first = try XCTUnwrap(firstByteAfter, "no byte arrived")
        XCTAssertTrue(runningAtFirstByte, "the first byte came while the body was still arriving")
        XCTAssertLessThan(first, 3, "the first byte came long before the four-second body ended")
        XCTAssertGreaterThan(Date().timeIntervalSince(started), 3.5, "and the body did take its four seconds")
    }

    func testACutBodyWithoutAValidatorExitsNonZeroWithThePrefixWritten() throws {
        server.addFile("data.bin", data: Self.body)
        let result = try get(
            ["--retries", "3", server.url("/files/data.bin?no_validators=1&close_after=100000").absoluteString])
        XCTAssertEqual(result.status, ExitCode.network, result.err)
        XCTAssertEqual(try lastOutput(), Self.body.prefix(100_000), "exactly what arrived, a prefix of the body")
        let last = errorLines(result.err).last ?? ""
        XCTAssertTrue(last.hasPrefix("courier: network error: "), last)
        XCTAssertTrue(
            last.contains(
                "; the output is incomplete: 97.7 KiB (100000 bytes) were written to stdout (the server sent no ETag or Last-Modified"),
            last)
        XCTAssertEqual(server.requests.count, 1, "never started over: the bytes on stdout cannot be taken back")
        XCTAssertEqual(try staged(), [])
    }

    func testACutBodyWithAValidatorIsContinuedByRangeToTheExactBody() throws {
        server.addFile("data.bin", data: Self.body)
        let result = try get(["--retries", "5", server.url("/files/data.bin?close_after=100000").absoluteString])
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertEqual(try lastOutput(), Self.body)
        XCTAssertTrue(result.err.contains("continuing from there (retry 1 of 5)"), result.err)
        XCTAssertTrue(result.err.contains("; 2 retries)"), "the summary counts them: \(result.err)")
        XCTAssertEqual(server.requests.map { $0.header("Range") }, [nil, "bytes=100000-", "bytes=200000-"])
        XCTAssertTrue(server.requests.last?.header("If-Range")?.hasPrefix("\"") ?? false, "only if the body is the same")
        XCTAssertEqual(try staged(), [])
    }

    func testTheChecksumIsCheckedAtTheEndAndAMismatchSaysNotToTrustTheOutput() throws {
        server.addFile("data.bin", data: Self.body)
        let url = server.url("/files/data.bin").absoluteString
        let right = try get(["--sha256", SHA256.hexString(SHA256.hash(Self.body)), url])
        XCTAssertEqual(right.status, 0, right.err)
        XCTAssertEqual(try lastOutput(), Self.body)

        let wrong = SHA256.hexString(SHA256.hash(Data("other".utf8)))
        let result = try get(["--sha256", wrong, url])
        XCTAssertEqual(result.status, ExitCode.integrity, result.err)
        XCTAssertEqual(try lastOutput(), Self.body, "streamed before it could be checked")
        XCTAssertEqual(
            errorLines(result.err).last,
            "courier: integrity check failed: the body's SHA-256 is \(SHA256.hexString(SHA256.hash(Self.body))), not \(wrong); "
                + "the 293.0 KiB (300000 bytes) written to stdout must not be trusted")
        XCTAssertEqual(try staged(), [])
    }

    func testAnUnverifiableBodyIsRefusedBeforeAnyByteUnlessAccepted() throws {
        let refused = try get([server.url("/gzip").absoluteString])
        XCTAssertEqual(refused.status, ExitCode.integrity, refused.err)
        XCTAssertEqual(refused.out, "")
        XCTAssertTrue(
            refused.err.contains("gzip-encoded body although identity was asked")
                && refused.err.contains("so nothing was written to stdout (--accept-unverified writes it anyway"),
            refused.err)

        let accepted = try get(["--accept-unverified", server.url("/gzip").absoluteString])
        XCTAssertEqual(accepted.status, 0, accepted.err)
        XCTAssertTrue(accepted.out.contains("\"gzipped\":true"), accepted.out)
        XCTAssertTrue(accepted.err.contains("courier: warning: the body written to stdout was unverified"), accepted.err)

        // A body only the connection closing ends: no Content-Length, not chunked.
        let closing = try ScriptedServer { _, _ in .response(status: 200, headers: [], body: Data("abc".utf8)) }
        defer { closing.stop() }
        let unannounced = try get([closing.url("/x").absoluteString])
        XCTAssertEqual(unannounced.status, ExitCode.integrity, unannounced.err)
        XCTAssertEqual(unannounced.out, "")
        XCTAssertTrue(unannounced.err.contains("the server announced no length"), unannounced.err)
    }

    func testAnInterruptedStreamLeavesAPrefixAndSaysHowMuch() throws {
        let contents = TestServer.deterministicBytes(count: 1024 * 1024, seed: 72)
        server.addFile("slow.bin", data: contents)
        for (signal, status) in [(SIGINT, Int32(130)), (SIGTERM, Int32(143))] {
            let child = try start(
                ["get", "-o", "-", server.url("/files/slow.bin?chunk=16384&chunk_delay_ms=40").absoluteString],
                environment: ["TMPDIR": temporary.path])
            waitUntil("bytes on stdout", timeout: 20) {
                ((try? FileManager.default.attributesOfItem(atPath: child.stdout.path)[.size] as? Int) ?? 0) > 0
            }
            kill(child.process.processIdentifier, signal)
            let stopped = finish(child, timeout: 15)
            XCTAssertEqual(stopped.status, status, stopped.err)
            let written = try Data(contentsOf: child.stdout)
            XCTAssertGreaterThan(written.count, 0)
            XCTAssertLessThan(written.count, contents.count)
            XCTAssertEqual(written, contents.prefix(written.count), "a prefix of the body")
            XCTAssertEqual(
                errorLines(stopped.err).last,
                "courier: interrupted; the output is incomplete: \(StandardOutputRecord.amount(Int64(written.count))) were written to stdout"
            )
            XCTAssertEqual(try staged(), [], "nothing is left in TMPDIR")
            XCTAssertEqual(try listing(), [])
        }
    }

    /// A reader that goes away (`| head -c 10`) is an error said on stderr, not a silent death
    /// by SIGPIPE the supervisor would report as a killed process.
    func testAClosedPipeIsReportedAsAWriteError() throws {
        server.addFile("data.bin", data: Self.body)
        for whole in [[], ["--whole"]] {
            var ends: [Int32] = [0, 0]
            XCTAssertEqual(pipe(&ends), 0)
            close(ends[0])  // nobody will read
            let writer = FileHandle(fileDescriptor: ends[1], closeOnDealloc: true)
            let child = try start(
                ["get", "-o", "-"] + whole + [server.url("/files/data.bin").absoluteString],
                environment: ["TMPDIR": temporary.path], standardOutput: writer)
            try writer.close()
            let result = finish(child)
            XCTAssertEqual(result.reason, .exit, result.err)
            XCTAssertEqual(result.status, 6, result.err)
            XCTAssertTrue(result.err.contains("courier: cannot write to stdout (Broken pipe) after 0 B of 293.0 KiB"), result.err)
            XCTAssertTrue(result.err.contains("the output is incomplete"), result.err)
            XCTAssertEqual(try staged(), [])
        }
    }

    // MARK: - Streaming across crashes (without the platform kit, so that the trap does kill the child)

    /// A trap kills the child after it wrote half the body. The next child asks for the body
    /// again, checks it is the same (ETag, length), reads the half already on stdout without
    /// writing it, and writes the rest: stdout is the body, once.
    func testARestartAfterACrashContinuesAfterTheBytesOnStdout() throws {
        let half = Self.body.count / 2
        let etag = "\"s\""
        let hostile = try ScriptedServer { request, index in
            switch index {
            case 0:  // half of the body, then the connection ends: the child writes it and retries
                return .response(
                    status: 200, headers: [("Content-Length", "\(Self.body.count)"), ("ETag", etag)],
                    body: Self.body, sendingOnly: half)
            case 1:  // that retry traps, killing the child
                return .bytes("HTTP/1.1 200 OK\r\n")
            default:
                return .response(status: 200, headers: [("Content-Length", "\(Self.body.count)"), ("ETag", etag)], body: Self.body)
            }
        }
        defer { hostile.stop() }
        let result = try get(["--retries", "3", hostile.url("/file.bin").absoluteString], platformFixes: false)
        XCTAssertEqual(result.reason, .exit, result.err)
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertEqual(try lastOutput(), Self.body, "every byte once, in order")
        let requests = hostile.requests
        XCTAssertEqual(requests.count, 3, result.err)
        XCTAssertEqual(requests[1].header("Range"), "bytes=\(half)-", "the first child continued by Range")
        XCTAssertNil(requests[2].header("Range"), "the second child read the body again, writing only what was missing")
        XCTAssertTrue(
            result.err.contains("crashed (signal 4, SIGILL)") || result.err.contains("crashed (signal 5, SIGTRAP)"), result.err)
        XCTAssertTrue(result.err.contains("continuing after the 146.5 KiB (150000 bytes) already on stdout (1 of 3)"), result.err)
        XCTAssertTrue(result.err.contains("continued from 146.5 KiB"), "the summary says so: \(result.err)")
        XCTAssertEqual(try staged(), [])
    }

    /// The second child finds another body behind the same URL: it cannot continue, and says so.
    func testARestartThatFindsAChangedBodyFails() throws {
        let half = Self.body.count / 2
        let hostile = try ScriptedServer { _, index in
            switch index {
            case 0:
                return .response(
                    status: 200, headers: [("Content-Length", "\(Self.body.count)"), ("ETag", "\"one\"")],
                    body: Self.body, sendingOnly: half)
            case 1:
                return .bytes("HTTP/1.1 200 OK\r\n")
            default:
                return .response(status: 200, headers: [("Content-Length", "\(Self.body.count)"), ("ETag", "\"two\"")], body: Self.body)
            }
        }
        defer { hostile.stop() }
        let result = try get(["--retries", "3", hostile.url("/file.bin").absoluteString], platformFixes: false)
        XCTAssertEqual(result.status, ExitCode.network, result.err)
        XCTAssertEqual(try lastOutput(), Self.body.prefix(half))
        let last = errorLines(result.err).last ?? ""
        XCTAssertTrue(last.hasPrefix("courier: the server's body changed after the download process crashed"), last)
        XCTAssertTrue(last.hasSuffix("; the output is incomplete: 146.5 KiB (150000 bytes) were written to stdout"), last)
        XCTAssertEqual(try staged(), [])
    }

    /// Without a validator nothing proves a new response has the same bytes: a crash after bytes
    /// went out ends the command (exit 3), naming the signal, instead of risking a splice.
    func testACrashAfterBytesWithoutAValidatorFailsNamingTheSignal() throws {
        let contents = TestServer.deterministicBytes(count: 1024 * 1024, seed: 73)
        server.addFile("slow.bin", data: contents)
        let command = try start(
            [
                "get", "-o", "-", "--retries", "3",
                server.url("/files/slow.bin?no_validators=1&chunk=16384&chunk_delay_ms=40").absoluteString,
            ],
            environment: ["TMPDIR": temporary.path])
        waitUntil("bytes on stdout", timeout: 20) {
            ((try? FileManager.default.attributesOfItem(atPath: command.stdout.path)[.size] as? Int) ?? 0) > 0
        }
        let child = try XCTUnwrap(children(of: command.process.processIdentifier).first, "the transfer runs in a child")
        kill(child, SIGSEGV)  // as a trap would end it
        let result = finish(command, timeout: 15)
        XCTAssertEqual(result.reason, .exit, result.err)
        XCTAssertEqual(result.status, ExitCode.network, result.err)
        let written = try Data(contentsOf: command.stdout)
        XCTAssertEqual(written, contents.prefix(written.count), "a prefix of the body")
        let last = errorLines(result.err).last ?? ""
        XCTAssertTrue(last.hasPrefix("courier: network error: the download process crashed (signal 11, SIGSEGV)"), last)
        XCTAssertTrue(last.contains("; the output is incomplete: "), last)
        XCTAssertEqual(server.requests.count, 1, "no second child: it could not have continued exactly")
        XCTAssertEqual(try staged(), [])
    }

    // MARK: - --whole: verified before the first byte is written

    func testWholeWritesNothingOnAChecksumMismatch() throws {
        server.addFile("data.bin", data: Self.body)
        let wrong = SHA256.hexString(SHA256.hash(Data("other".utf8)))
        let result = try get(["--whole", "--sha256", wrong, server.url("/files/data.bin").absoluteString])
        XCTAssertEqual(result.status, 5, result.err)
        XCTAssertEqual(result.out, "")
        XCTAssertTrue(result.err.contains("integrity check failed") && result.err.contains("nothing was written to stdout"), result.err)
        XCTAssertEqual(try staged(), [])
    }

    func testWholeContinuesRetriesBeforeTheBodyIsWritten() throws {
        server.addFile("data.bin", data: Self.body)
        let result = try get(["--whole", "--retries", "5", server.url("/files/data.bin?close_after=100000").absoluteString])
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertEqual(try lastOutput(), Self.body)
        XCTAssertTrue(result.err.contains("continuing from there (retry 1 of 5)"), result.err)
        XCTAssertTrue(server.requests.contains { $0.header("Range") == "bytes=100000-" })
        XCTAssertEqual(try staged(), [])
    }

    func testWholeWritesNothingWhenInterruptedAndKeepsNothing() throws {
        server.addFile("slow.bin", data: TestServer.deterministicBytes(count: 1024 * 1024, seed: 72))
        let child = try start(
            ["get", "-o", "-", "--whole", server.url("/files/slow.bin?chunk=16384&chunk_delay_ms=40").absoluteString],
            environment: ["TMPDIR": temporary.path])
        waitUntil("a progress line", timeout: 20) { self.stderr(of: child).contains(" of 1.0 MiB") }
        kill(child.process.processIdentifier, SIGINT)
        let stopped = finish(child, timeout: 15)
        XCTAssertEqual(stopped.status, 130, stopped.err)
        XCTAssertEqual(stopped.out, "")
        XCTAssertEqual(
            errorLines(stopped.err).last,
            "courier: interrupted; nothing was written to stdout (a download to stdout is not kept: the next run starts over)")
        XCTAssertEqual(try staged(), [], "no partial body is left in TMPDIR")
        XCTAssertEqual(try listing(), [])
    }

    /// The supervisor gives every child it starts the same staging directory, so a restart after
    /// a FoundationNetworking trap continues the bytes already staged.
    func testWholeRestartAfterACrashContinuesTheStagedBytes() throws {
        let half = Self.body.count / 2
        let hostile = try ScriptedServer { request, index in
            switch index {
            case 0:  // half of the body, then the connection ends: the child keeps it and retries
                return .response(
                    status: 200, headers: [("Content-Length", "\(Self.body.count)"), ("ETag", "\"s\"")],
                    body: Self.body, sendingOnly: half)
            case 1:  // that retry traps, killing the child
                return .bytes("HTTP/1.1 200 OK\r\n")
            default:
                guard request.header("Range") == "bytes=\(half)-" else {
                    return .response(status: 200, headers: [("Content-Length", "\(Self.body.count)"), ("ETag", "\"s\"")], body: Self.body)
                }
                return .response(
                    status: 206,
                    headers: [
                        ("Content-Range", "bytes \(half)-\(Self.body.count - 1)/\(Self.body.count)"),
                        ("Content-Length", "\(Self.body.count - half)"), ("ETag", "\"s\""),
                    ],
                    body: Self.body.suffix(from: half))
            }
        }
        defer { hostile.stop() }
        let result = try get(["--whole", "--retries", "3", hostile.url("/file.bin").absoluteString], platformFixes: false)
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertEqual(try lastOutput(), Self.body)
        XCTAssertEqual(hostile.requests.last?.header("Range"), "bytes=\(half)-", "the new child continued the staged bytes")
        XCTAssertTrue(result.err.contains("crashed ("), result.err)
        XCTAssertEqual(try staged(), [])
    }

    // MARK: - Pure parts

    func testWhenACrashedChildCanBeContinued() {
        let continuable = StandardOutputRecord(written: 100, writing: 0, validator: "\"v\"", length: 200)
        XCTAssertNil(GetSupervisor.cannotContinueLine(signal: SIGILL, continuable))
        XCTAssertNil(
            GetSupervisor.cannotContinueLine(signal: SIGILL, StandardOutputRecord(validator: nil, length: nil)),
            "nothing written: start again")
        let noValidator = GetSupervisor.cannotContinueLine(
            signal: SIGILL, StandardOutputRecord(written: 100, validator: nil, length: 200))
        XCTAssertEqual(
            noValidator,
            "courier: network error: the download process crashed (signal 4, SIGILL) after bytes were written to stdout, "
                + "and the server sent no ETag or Last-Modified that would let a new process continue exactly after them; "
                + "the output is incomplete: 100 bytes were written to stdout")
        let midWrite = GetSupervisor.cannotContinueLine(
            signal: SIGTRAP, StandardOutputRecord(written: 2048, writing: 16384, validator: "\"v\"", length: nil))
        XCTAssertTrue(midWrite?.contains("while writing to stdout") ?? false, midWrite ?? "nil")
        XCTAssertTrue(
            midWrite?.hasSuffix("between 2.0 KiB (2048 bytes) and 18.0 KiB (18432 bytes) were written to stdout") ?? false,
            midWrite ?? "nil")
    }

    // MARK: - Helpers

    /// The processes whose parent is `pid`.
    private func children(of pid: pid_t) -> [pid_t] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.flatMap { task -> [pid_t] in
            let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/children", encoding: .utf8)) ?? ""
            return text.split(separator: " ").compactMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
    }
}
