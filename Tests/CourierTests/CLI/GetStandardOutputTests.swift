import XCTest
import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `courier get -o -`: the body on stdout, only once it is complete and verified; everything else
/// on stderr; nothing left behind.
final class GetStandardOutputTests: CommandLineTestCase {
    private static let body = TestServer.deterministicBytes(count: 300_000, seed: 71)
    /// The child's TMPDIR, where `-o -` stages the body: checked empty after every run.
    private var temporary: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        temporary = logs.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
    }

    private func get(_ arguments: [String]) throws -> Outcome {
        try run(["get", "-o", "-"] + arguments, environment: ["TMPDIR": temporary.path])
    }

    private func staged() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: temporary.path)
    }

    func testTheBodyGoesToStdoutAndEverythingElseToStderr() throws {
        server.addFile("data.bin", data: Self.body)
        // 19 writes 100 ms apart: about two seconds, so at least one progress line.
        let result = try get([server.url("/files/data.bin?chunk=16384&chunk_delay_ms=100").absoluteString])
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertEqual(try Data(contentsOf: logs.appendingPathComponent("\(launches).out")), Self.body, "stdout is the body, exactly")
        let lines = errorLines(result.err)
        XCTAssertTrue(lines.contains { $0.contains(" of 293.0 KiB (") }, "progress on stderr: \(result.err)")
        XCTAssertTrue(lines.last?.hasPrefix("courier: wrote 293.0 KiB to stdout (in ") ?? false, result.err)
        XCTAssertEqual(try listing(), [], "nothing in the working directory")
        XCTAssertEqual(try staged(), [], "the staging directory is gone")
    }

    func testAFailedDownloadWritesNothingToStdout() throws {
        let result = try get([server.url("/status/404?body=gone").absoluteString])
        XCTAssertEqual(result.status, 4, result.err)
        XCTAssertEqual(result.out, "")
        XCTAssertEqual(
            errorLines(result.err), ["courier: HTTP 404 Not Found from \(server.url("/status/404?body=gone")); nothing was written to stdout"])
        XCTAssertEqual(try staged(), [])
    }

    func testAChecksumMismatchWritesNothingToStdout() throws {
        server.addFile("data.bin", data: Self.body)
        let wrong = SHA256.hexString(SHA256.hash(Data("other".utf8)))
        let result = try get(["--sha256", wrong, server.url("/files/data.bin").absoluteString])
        XCTAssertEqual(result.status, 5, result.err)
        XCTAssertEqual(result.out, "")
        XCTAssertTrue(result.err.contains("integrity check failed") && result.err.contains("nothing was written to stdout"), result.err)
        XCTAssertEqual(try staged(), [])
    }

    func testRetriesStillContinueTheBodyBeforeItIsWritten() throws {
        server.addFile("data.bin", data: Self.body)
        let result = try get(["--retries", "5", server.url("/files/data.bin?close_after=100000").absoluteString])
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertEqual(try Data(contentsOf: logs.appendingPathComponent("\(launches).out")), Self.body)
        XCTAssertTrue(result.err.contains("continuing from there (retry 1 of 5)"), result.err)
        XCTAssertTrue(server.requests.contains { $0.header("Range") == "bytes=100000-" })
        XCTAssertEqual(try staged(), [])
    }

    func testAnInterruptedDownloadWritesNothingToStdoutAndKeepsNothing() throws {
        server.addFile("slow.bin", data: TestServer.deterministicBytes(count: 1024 * 1024, seed: 72))
        let child = try start(
            ["get", "-o", "-", server.url("/files/slow.bin?chunk=16384&chunk_delay_ms=40").absoluteString],
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

    /// A reader that goes away (`| head -c 10`) is an error said on stderr, not a silent death
    /// by SIGPIPE the supervisor would report as a killed process.
    func testAClosedPipeIsReportedAsAWriteError() throws {
        server.addFile("data.bin", data: Self.body)
        var ends: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&ends), 0)
        close(ends[0])  // nobody will read
        let writer = FileHandle(fileDescriptor: ends[1], closeOnDealloc: true)
        let child = try start(
            ["get", "-o", "-", server.url("/files/data.bin").absoluteString], environment: ["TMPDIR": temporary.path],
            standardOutput: writer)
        try writer.close()
        let result = finish(child)
        XCTAssertEqual(result.reason, .exit, result.err)
        XCTAssertEqual(result.status, 6, result.err)
        XCTAssertTrue(result.err.contains("courier: cannot write to stdout (Broken pipe) after 0 B of 293.0 KiB"), result.err)
        XCTAssertEqual(try staged(), [])
    }

    /// The supervisor gives every child it starts the same staging directory, so a restart after
    /// a FoundationNetworking trap continues the bytes already staged.
    func testARestartAfterACrashContinuesTheStagedBytes() throws {
        let half = Self.body.count / 2
        let hostile = try ScriptedServer { request, index in
            switch index {
            case 0:  // half of the body, then the connection ends: the child keeps it and retries
                return .response(status: 200, headers: [("Content-Length", "\(Self.body.count)"), ("ETag", "\"s\"")],
                                 body: Self.body, sendingOnly: half)
            case 1:  // that retry traps, killing the child
                return .bytes("HTTP/1.1 200 OK\r\n")
            default:
                guard request.header("Range") == "bytes=\(half)-" else {
                    return .response(status: 200, headers: [("Content-Length", "\(Self.body.count)"), ("ETag", "\"s\"")], body: Self.body)
                }
                return .response(
                    status: 206,
                    headers: [("Content-Range", "bytes \(half)-\(Self.body.count - 1)/\(Self.body.count)"),
                              ("Content-Length", "\(Self.body.count - half)"), ("ETag", "\"s\"")],
                    body: Self.body.suffix(from: half))
            }
        }
        defer { hostile.stop() }
        let result = try get(["--retries", "3", hostile.url("/file.bin").absoluteString])
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertEqual(try Data(contentsOf: logs.appendingPathComponent("\(launches).out")), Self.body)
        XCTAssertEqual(hostile.requests.last?.header("Range"), "bytes=\(half)-", "the new child continued the staged bytes")
        XCTAssertTrue(result.err.contains("crashed ("), result.err)
        XCTAssertEqual(try staged(), [])
    }
}
