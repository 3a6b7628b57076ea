import CourierTestSupport
import XCTest
import Courier
import CourierTestServer
@testable import courier
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `courier get` run as people run it (see ``CommandLineTestCase``).
final class GetCommandTests: CommandLineTestCase {
    // MARK: - Saving

    func testGetWithOutputSavesTheExactBytesAndLeavesNoSideFiles() throws {
        let contents = TestServer.deterministicBytes(count: 300_000, seed: 1)
        server.addFile("data.bin", data: contents)
        let result = try run(["get", server.url("/files/data.bin").absoluteString, "-o", "out.bin"])
        XCTAssertEqual(result.status, 0, result.err)
        let saved = directory.appendingPathComponent("out.bin")
        XCTAssertEqual(SHA256.hash(try Data(contentsOf: saved)), SHA256.hash(contents))
        XCTAssertEqual(try listing(), ["out.bin"], "no partial file or resume record is left")
        XCTAssertEqual(result.out, saved.path + "\n", "stdout holds only the saved path")
        XCTAssertTrue(result.err.hasPrefix("courier: saved \(saved.path) ("), result.err)
    }

    func testNameComesFromTheURLsLastPathSegment() throws {
        let contents = TestServer.deterministicBytes(count: 10_000, seed: 2)
        server.addFile("report.pdf", data: contents)
        let result = try run(["get", server.url("/files/report.pdf").absoluteString])
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertEqual(try listing(), ["report.pdf"])
        XCTAssertEqual(try Data(contentsOf: directory.appendingPathComponent("report.pdf")), contents)
        XCTAssertEqual(result.out, directory.appendingPathComponent("report.pdf").path + "\n")
    }

    func testContentDispositionNameIsSanitizedIntoTheWorkingDirectory() throws {
        let url = server.url("/response-headers?Content-Disposition=attachment;%20filename%3D%22..%2F..%2Fx.txt%22")
        let result = try run(["get", url.absoluteString])
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertEqual(try listing(), ["x.txt"], "the ../../ is gone: the file lands inside the working directory")
        let body = try String(contentsOf: directory.appendingPathComponent("x.txt"), encoding: .utf8)
        XCTAssertTrue(body.contains("attachment"), body)
        let parent = directory.deletingLastPathComponent()
        for escaped in [parent, parent.deletingLastPathComponent()] {
            XCTAssertFalse(FileManager.default.fileExists(atPath: escaped.appendingPathComponent("x.txt").path))
        }
    }

    // MARK: - Never overwrite

    func testExistingOutputIsKeptWithoutForceAndReplacedWithForce() throws {
        let contents = TestServer.deterministicBytes(count: 50_000, seed: 3)
        server.addFile("data.bin", data: contents)
        let url = server.url("/files/data.bin").absoluteString
        let existing = directory.appendingPathComponent("out.bin")
        try Data("keep me".utf8).write(to: existing)

        let refused = try run(["get", url, "-o", "out.bin"])
        XCTAssertEqual(refused.status, 6, refused.err)
        XCTAssertEqual(try Data(contentsOf: existing), Data("keep me".utf8))
        XCTAssertEqual(errorLines(refused.err).count, 1, refused.err)
        XCTAssertTrue(refused.err.hasPrefix("courier: ") && refused.err.contains("--force"), refused.err)
        XCTAssertTrue(server.requests.isEmpty, "-o is checked before downloading")
        XCTAssertEqual(try listing(), ["out.bin"])

        let forced = try run(["get", url, "-o", "out.bin", "--force"])
        XCTAssertEqual(forced.status, 0, forced.err)
        XCTAssertEqual(try Data(contentsOf: existing), contents)
        XCTAssertEqual(try listing(), ["out.bin"])
    }

    func testExistingFileNamedByTheServerIsKeptWithoutForce() throws {
        let contents = TestServer.deterministicBytes(count: 50_000, seed: 4)
        server.addFile("data.bin", data: contents)
        let url = server.url("/files/data.bin").absoluteString
        let existing = directory.appendingPathComponent("data.bin")
        try Data("keep me".utf8).write(to: existing)

        let refused = try run(["get", url])
        XCTAssertEqual(refused.status, 6, refused.err)
        XCTAssertEqual(try Data(contentsOf: existing), Data("keep me".utf8))
        XCTAssertEqual(errorLines(refused.err).count, 1, refused.err)
        XCTAssertTrue(refused.err.contains("already exists") && refused.err.contains("--force"), refused.err)
        XCTAssertEqual(try listing(), ["data.bin"], "the downloaded bytes are not left behind")

        let forced = try run(["get", url, "--force"])
        XCTAssertEqual(forced.status, 0, forced.err)
        XCTAssertEqual(try Data(contentsOf: existing), contents)
        XCTAssertEqual(try listing(), ["data.bin"])
    }

    // MARK: - Failures

    func testHTTP404IsExitFourOnOneLineAndSavesNothing() throws {
        for extra in [["-o", "out.bin"], []] {
            let result = try run(["get", server.url("/status/404?body=no%20such%20thing").absoluteString] + extra)
            XCTAssertEqual(result.status, 4, result.err)
            let lines = errorLines(result.err)
            XCTAssertEqual(lines.count, 1, result.err)
            XCTAssertTrue(lines.first?.hasPrefix("courier: HTTP 404 Not Found from http://") ?? false, result.err)
            XCTAssertEqual(result.out, "")
            XCTAssertEqual(try listing(), [], "the error page is never saved as the file")
        }
    }

    func testSHA256MismatchIsExitFiveAndSavesNothing() throws {
        let contents = TestServer.deterministicBytes(count: 100_000, seed: 5)
        server.addFile("data.bin", data: contents)
        let wrong = SHA256.hexString(SHA256.hash(Data("something else".utf8)))
        let result = try run(["get", server.url("/files/data.bin").absoluteString, "-o", "out.bin", "--sha256", wrong])
        XCTAssertEqual(result.status, 5, result.err)
        XCTAssertEqual(errorLines(result.err).count, 1, result.err)
        XCTAssertTrue(result.err.hasPrefix("courier: integrity check failed"), result.err)
        XCTAssertEqual(try listing(), [])
    }

    func testSHA256MatchSucceeds() throws {
        let contents = TestServer.deterministicBytes(count: 100_000, seed: 6)
        server.addFile("data.bin", data: contents)
        let right = SHA256.hexString(SHA256.hash(contents)).uppercased()
        let result = try run(["get", server.url("/files/data.bin").absoluteString, "--sha256", right])
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertEqual(try Data(contentsOf: directory.appendingPathComponent("data.bin")), contents)
        XCTAssertEqual(try listing(), ["data.bin"])
    }

    func testConnectionRefusedIsExitThree() throws {
        let stopped = try TestServer()
        let url = stopped.url("/files/data.bin").absoluteString
        stopped.stop()
        let result = try run(["get", url, "--retries", "1", "-o", "out.bin"])
        XCTAssertEqual(result.status, 3, result.err)
        let lines = errorLines(result.err)
        XCTAssertEqual(lines.count, 2, "the retry, then the error: \(result.err)")
        XCTAssertTrue(lines.first?.hasPrefix("courier: network error: ") ?? false, result.err)
        XCTAssertTrue(lines.first?.hasSuffix("(retry 1 of 1)") ?? false, result.err)
        XCTAssertTrue(lines.last?.hasPrefix("courier: network error: ") ?? false, result.err)
        XCTAssertFalse(lines.last?.contains("kept") ?? true, "nothing was received, so nothing is kept: \(result.err)")
        XCTAssertEqual(try listing(), [])
    }

    func testBadOptionsAreUsageErrors() throws {
        let url = server.url("/files/data.bin").absoluteString
        let cases: [[String]] = [
            ["get"],
            ["get", url, url],
            ["get", "ftp://example.invalid/x"],
            ["get", "not a url"],
            ["get", url, "--retries", "-1"],
            ["get", url, "--retries", "many"],
            ["get", url, "--sha256", "abc"],
            ["get", url, "-H", "NoColon"],
            ["get", url, "-H", "X-Evil: a\r\nInjected: b"],
            ["get", url, "-H", "Bad Name: x"],
            ["get", url, "-H", "Range: bytes=0-9"],
            ["get", url, "--bogus"],
            ["get", url, "-o"],
            ["get", url, "-o", "dir/"],
        ]
        for arguments in cases {
            let result = try run(arguments)
            XCTAssertEqual(result.status, 2, "\(arguments): \(result.err)")
            XCTAssertTrue(result.err.hasPrefix("courier: "), "\(arguments): \(result.err)")
            XCTAssertEqual(result.out, "", "\(arguments)")
        }
        XCTAssertTrue(server.requests.isEmpty, "nothing is fetched after a usage error")
        XCTAssertEqual(try listing(), [])
    }

    func testHeadersAreSent() throws {
        server.addFile("data.bin", data: Data("x".utf8))
        let result = try run([
            "get", "-H", "X-Token: abc def", "--header=Accept: application/octet-stream",
            server.url("/files/data.bin").absoluteString,
        ])
        XCTAssertEqual(result.status, 0, result.err)
        let request = try XCTUnwrap(server.requests.last)
        XCTAssertEqual(request.header("X-Token"), "abc def")
        XCTAssertEqual(request.header("Accept"), "application/octet-stream")
    }

    func testHelpDocumentsGetAndEveryExitCode() throws {
        for arguments in [["--help"], ["get", "--help"]] {
            let result = try run(arguments)
            XCTAssertEqual(result.status, 0)
            for word in ["courier get", "-o", "--retries", "--sha256", "-H", "--quiet", "--force", "Exit codes"] {
                XCTAssertTrue(result.out.contains(word), "\(arguments): \(word)")
            }
            for code in ["2 usage", "3 network", "4 HTTP", "5 integrity", "6 file", "130 interrupted", "143"] {
                XCTAssertTrue(result.out.contains(code), "\(arguments): \(code)")
            }
        }
    }

    // MARK: - Output on stderr

    func testQuietPrintsNothingButThePathOnSuccess() throws {
        server.addFile("data.bin", data: TestServer.deterministicBytes(count: 200_000, seed: 7))
        let result = try run(["get", "--quiet", server.url("/files/data.bin?chunk=16384&chunk_delay_ms=100").absoluteString])
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertEqual(result.err, "")
        XCTAssertEqual(result.out, directory.appendingPathComponent("data.bin").path + "\n")
    }

    func testQuietWithANamedOutputPrintsNothingAtAll() throws {
        // Given a file saved to a name the caller chose, quietly (curl's -s -o FILE)
        server.addFile("data.bin", data: TestServer.deterministicBytes(count: 200_000, seed: 7))
        let result = try run(["get", "-q", "-o", "named.bin", server.url("/files/data.bin").absoluteString])
        // Then nothing is printed, and the file is there
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertEqual(result.err, "")
        XCTAssertEqual(result.out, "")
        XCTAssertTrue(FileManager.default.fileExists(atPath: directory.appendingPathComponent("named.bin").path))
    }

    func testProgressIsPlainLinesWhenStderrIsNotATerminal() throws {
        let contents = TestServer.deterministicBytes(count: 512 * 1024, seed: 8)
        server.addFile("data.bin", data: contents)
        // 32 writes of 16 KiB, 60 ms apart: about two seconds, so at least one progress line.
        let result = try run(["get", server.url("/files/data.bin?chunk=16384&chunk_delay_ms=60").absoluteString])
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertFalse(result.err.contains("\r"), "no carriage returns in a log")
        let lines = errorLines(result.err)
        let progress = lines.filter { $0.contains(" of 512.0 KiB (") && $0.contains("%)") }
        XCTAssertGreaterThanOrEqual(progress.count, 1, result.err)
        XCTAssertTrue(progress.allSatisfy { $0.hasPrefix("courier: ") && $0.contains("/s") }, result.err)
        XCTAssertTrue(lines.last?.hasPrefix("courier: saved ") ?? false, result.err)
        XCTAssertEqual(lines.count, progress.count + 1, result.err)
    }

    // MARK: - Retries

    func testRetriesContinueAfterDroppedConnections() throws {
        let contents = TestServer.deterministicBytes(count: 300_000, seed: 9)
        server.addFile("data.bin", data: contents)
        // Every response (also each resumed range) is cut after 100,000 bytes: four attempts.
        let result = try run(["get", server.url("/files/data.bin?close_after=100000").absoluteString, "--retries", "5"])
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertEqual(try Data(contentsOf: directory.appendingPathComponent("data.bin")), contents)
        XCTAssertTrue(result.err.contains("retries"), result.err)
        XCTAssertTrue(server.requests.contains { $0.header("Range") != nil })
    }

    func testNoRetriesFailsWithANetworkErrorAndKeepsTheBytesForTheNextRun() throws {
        let contents = TestServer.deterministicBytes(count: 300_000, seed: 10)
        server.addFile("data.bin", data: contents)
        let arguments = ["get", server.url("/files/data.bin?close_after=200000").absoluteString, "-o", "out.bin", "--retries", "0"]
        let failed = try run(arguments)
        XCTAssertEqual(failed.status, 3, failed.err)
        XCTAssertEqual(try listing(), [".out.bin.courier-partial", ".out.bin.courier-resume"])
        let resumed = try run(arguments)
        XCTAssertEqual(resumed.status, 0, resumed.err)
        XCTAssertEqual(try Data(contentsOf: directory.appendingPathComponent("out.bin")), contents)
        XCTAssertEqual(try listing(), ["out.bin"])
        XCTAssertEqual(server.requests.last?.header("Range"), "bytes=200000-")
    }

    // MARK: - Interruption and crash safety

    func testSIGINTKeepsThePartialFileAndTheSameCommandResumes() throws {
        try interruptThenResume(with: SIGINT, expecting: 130)
    }

    func testSIGTERMKeepsThePartialFileAndTheSameCommandResumes() throws {
        try interruptThenResume(with: SIGTERM, expecting: 143)
    }

    private func interruptThenResume(with signal: Int32, expecting status: Int32) throws {
        let contents = TestServer.deterministicBytes(count: 1024 * 1024, seed: 11)
        server.addFile("slow.bin", data: contents)
        // 64 writes of 16 KiB, 40 ms apart: about 2.6 s.
        let arguments = ["get", server.url("/files/slow.bin?chunk=16384&chunk_delay_ms=40").absoluteString, "-o", "out.bin"]
        let child = try start(arguments)
        // The first progress line (after a second) proves bytes have arrived.
        waitUntil("a progress line", timeout: 20) { self.stderr(of: child).contains(" of 1.0 MiB") }
        kill(child.process.processIdentifier, signal)
        let stopped = finish(child, timeout: 15)
        XCTAssertEqual(stopped.status, status, stopped.err)
        let last = try XCTUnwrap(errorLines(stopped.err).last)
        XCTAssertTrue(last.hasPrefix("courier: interrupted; "), stopped.err)
        XCTAssertTrue(last.hasSuffix(" KiB kept — run the same command again to resume"), "in KiB/MiB, not bytes: \(stopped.err)")
        XCTAssertEqual(try listing(), [".out.bin.courier-partial", ".out.bin.courier-resume"], "no output file yet")
        let record = try ResumeData(data: Data(contentsOf: directory.appendingPathComponent(".out.bin.courier-resume")))
        let kept = Int(record.bytesOnDisk)
        XCTAssertTrue(last.contains(" \(ProgressFormat.bytes(record.bytesOnDisk)) kept"), "the amount the record vouches for")
        let partialSize =
            try FileManager.default.attributesOfItem(
                atPath: directory.appendingPathComponent(".out.bin.courier-partial").path)[.size] as? NSNumber
        XCTAssertEqual(partialSize?.intValue, kept)
        XCTAssertGreaterThan(kept, 0)
        XCTAssertLessThan(kept, contents.count)

        let resumed = try run(arguments)
        XCTAssertEqual(resumed.status, 0, resumed.err)
        XCTAssertEqual(SHA256.hash(try Data(contentsOf: directory.appendingPathComponent("out.bin"))), SHA256.hash(contents))
        XCTAssertEqual(try listing(), ["out.bin"])
        XCTAssertEqual(server.requests.last?.header("Range"), "bytes=\(kept)-", "the rerun asked only for the rest")
        XCTAssertTrue(resumed.err.contains("continued from"), resumed.err)
    }

    func testSIGKILLAtRandomMomentsThenRerunningFinishesTheFile() throws {
        let contents = TestServer.deterministicBytes(count: 6 * 1024 * 1024, seed: 12)
        server.addFile("big.bin", data: contents)
        // 32 KiB every 40 ms (about 800 KiB/s): 6 MiB take about 7.7 s, more than three kills can keep.
        let url = server.url("/files/big.bin?chunk=32768&chunk_delay_ms=40")
        let arguments = ["get", url.absoluteString]
        let digest = SHA256.hexString(SHA256.hash(Data(url.absoluteString.utf8)))
        let partial = ".courier-\(digest.prefix(16)).courier-partial"
        let record = ".courier-\(digest.prefix(16)).courier-resume"
        var random = SplitMix64(seed: 20_261_121)
        var kills = 0
        var finished = false
        for _ in 0..<8 where !finished {
            let seen = server.requests.count
            let child = try start(arguments)
            if kills < 3 {
                waitUntil("the request reaches the server", timeout: 10) { self.server.requests.count > seen }
                // After at least a second, so the record beside the partial file holds bytes.
                let delay = Double.random(in: 1.2...2.0, using: &random)
                let deadline = Date().addingTimeInterval(delay)
                while child.process.isRunning, Date() < deadline { usleep(10_000) }
                if child.process.isRunning {
                    kill(child.process.processIdentifier, SIGKILL)
                    _ = finish(child, timeout: 10)
                    kills += 1
                    let names = try listing()
                    XCTAssertFalse(names.contains("big.bin"), "no output file while incomplete: \(names)")
                    XCTAssertTrue(names.contains(partial) && names.contains(record), "\(names)")
                    continue
                }
            }
            let result = finish(child, timeout: 60)
            XCTAssertEqual(result.status, 0, result.err)
            finished = result.status == 0
        }
        XCTAssertTrue(finished)
        XCTAssertEqual(kills, 3)
        XCTAssertEqual(SHA256.hash(try Data(contentsOf: directory.appendingPathComponent("big.bin"))), SHA256.hash(contents))
        XCTAssertEqual(try listing(), ["big.bin"], "the partial file and its record are gone")
        XCTAssertTrue(server.requests.contains { $0.header("Range") != nil }, "a rerun continued with Range")
    }
}
