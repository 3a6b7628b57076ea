import XCTest
import CourierTestServer
@testable import Courier
@testable import courier

/// `courier get -i FILE`: the input's grammar, reruns, the exit status and its summary.
final class GetInputFileTests: CommandLineTestCase {
    private func write(_ text: String) throws -> String {
        let file = logs.appendingPathComponent("input-\(launches).txt")
        try Data(text.utf8).write(to: file)
        return file.path
    }

    func testMistakesInTheInputAreUsageErrorsNamingTheLine() throws {
        let url = server.url("/bytes/10").absoluteString
        let cases: [(String, String)] = [
            ("\(url) sha256=xyz\n", "line 1: sha256= takes 64 hexadecimal digits"),
            ("# c\n\n\(url) colour=red\n", "line 3: unknown key 'colour='"),
            ("\(url) out=a\n\(url)?x=1 out=a\n", "line 2: saves to a, as line 1 does"),
            ("ftp://x/y\n", "line 1: 'ftp://x/y' is not an http:// or https:// URL"),
            ("\(url) out=../a\n", "line 1: out= takes a plain file name"),
        ]
        for (text, message) in cases {
            let outcome = try run(["get", "-i", try write(text)])
            XCTAssertEqual(outcome.status, ExitCode.usage, text)
            XCTAssertTrue(outcome.err.contains(message), outcome.err)
        }
        XCTAssertEqual(try listing(), [], "nothing starts")
    }

    func testOptionsThatMakeNoSenseForAListAreRefused() {
        for (arguments, message) in [
            (["-i", "f", "-o", "x"], "-o names one file"), (["-i", "f", "-o", "-"], "-o - (stdout)"),
            (["-i", "f", "--whole"], "--whole"), (["-i", "f", "http://h/x"], "give no URL"),
            (["-i", "f", "--sha256", String(repeating: "a", count: 64)], "sha256=<hex> after each URL"),
            (["http://h/x", "--parallel", "2"], "--parallel is for -i"), (["-i", "f", "--parallel", "0"], "--parallel takes"),
        ] {
            XCTAssertThrowsError(try GetCommand.Invocation.parse(arguments), "\(arguments)") { error in
                XCTAssertTrue((error as? UsageError)?.message.contains(message) == true, "\(error)")
            }
        }
        guard case .queue(let options) = try? GetCommand.Invocation.parse(["-i", "-", "-P", "d", "--per-host", "3", "-H", "A: b"]) else {
            return XCTFail("not a queue")
        }
        XCTAssertEqual(options.input, "-")
        XCTAssertEqual(options.perHost, 3)
        XCTAssertEqual(options.parallel, 4)
        XCTAssertEqual(options.shared.headers.map(\.name), ["A"])
        let cwd = URL(fileURLWithPath: "/w")
        XCTAssertEqual(options.stateDirectory(in: cwd).path, "/w/d/.courier-queue")
    }

    func testARerunSkipsFinishedItemsRetriesFailedOnesAndExitsWithTheWorstClass() throws {
        let good = TestServer.deterministicBytes(count: 50_000, seed: 3)
        server.addFile("good.bin", data: good)
        let digest = SHA256.hexString(SHA256.hash(good))
        let wrong = String(repeating: "0", count: 64)
        let input = try write(
            """
            \(server.url("/files/good.bin").absoluteString) sha256=\(digest)
            \(server.url("/status/404").absoluteString) out=missing
            \(server.url("/files/good.bin").absoluteString) sha256=\(wrong) out=bad.bin
            """)
        let first = try run(["get", "-i", input])
        XCTAssertEqual(first.status, ExitCode.integrity, "integrity is worse than HTTP: \(first.err)")
        XCTAssertTrue(first.err.contains("2 of 3 downloads failed"), first.err)
        XCTAssertTrue(first.err.contains("line 2: missing: HTTP 404 Not Found"), first.err)
        XCTAssertTrue(first.err.contains("line 3: bad.bin: integrity check failed"), first.err)
        XCTAssertEqual(first.out, directory.appendingPathComponent("good.bin").path + "\n")
        XCTAssertEqual(try listing(), [".courier-queue", "good.bin"])

        server.clearRequests()
        let second = try run(["get", "-i", input, "-s"])
        XCTAssertEqual(second.status, ExitCode.integrity, second.err)
        XCTAssertEqual(server.requests.filter { $0.path == "/status/404" }.count, 1, "the failed one is tried again")
        XCTAssertEqual(server.requests.filter { $0.path == "/files/good.bin" }.count, 1, "only bad.bin's line")
    }

    func testAFileAlreadyThereWithItsChecksumIsAdoptedAndAnUnprovenOneIsRefusedNamingItsLine() throws {
        // Given the right file already in place for line 1, and someone's file where line 2 saves
        let good = TestServer.deterministicBytes(count: 50_000, seed: 5)
        server.addFile("good.bin", data: good)
        try good.write(to: directory.appendingPathComponent("good.bin"))
        try Data("mine".utf8).write(to: directory.appendingPathComponent("taken.bin"))
        let adopted = try write(
            """
            \(server.url("/files/good.bin").absoluteString) sha256=\(SHA256.hexString(SHA256.hash(good)))
            """)

        // When each list runs
        let first = try run(["get", "-i", adopted, "-s"])
        let refused = try write(
            """
            \(server.url("/files/good.bin").absoluteString) out=taken.bin
            """)
        let second = try run(["get", "-i", refused, "-s"])

        // Then the proven file is listed as saved without a request; the other is refused, untouched
        XCTAssertEqual(first.status, 0, first.err)
        XCTAssertEqual(first.out, directory.appendingPathComponent("good.bin").path + "\n")
        XCTAssertTrue(server.requests.filter { $0.path == "/files/good.bin" }.isEmpty)
        XCTAssertEqual(second.status, ExitCode.fileSystem, second.err)
        XCTAssertTrue(second.err.contains("taken.bin already exists (line 1; use --force"), second.err)
        XCTAssertEqual(try String(contentsOf: directory.appendingPathComponent("taken.bin"), encoding: .utf8), "mine")
    }

    func testSIGTERMCheckpointsAndARerunContinues() throws {
        let body = TestServer.deterministicBytes(count: 1_000_000, seed: 9)
        server.addFile("slow.bin", data: body)
        let input = try write(server.url("/files/slow.bin?chunk=16384&chunk_delay_ms=40").absoluteString + "\n")
        let command = try start(["get", "-i", input, "--state", "../logs/state"])
        waitUntil("bytes kept", timeout: 20) {
            let parts = self.logs.appendingPathComponent("state/parts")
            let names = (try? FileManager.default.contentsOfDirectory(atPath: parts.path)) ?? []
            return names.contains { $0.hasSuffix("-resume") || $0.hasSuffix(".courier-resume") }
        }
        kill(command.process.processIdentifier, SIGTERM)
        let stopped = finish(command)
        XCTAssertEqual(stopped.status, ExitCode.terminated, stopped.err)
        XCTAssertTrue(stopped.err.contains("interrupted; run the same command again"), stopped.err)
        XCTAssertEqual(try listing(), [], "nothing published, no state beside it (--state elsewhere)")

        server.clearRequests()
        let rerun = try run(["get", "-i", input, "--state", "../logs/state", "-s"], timeout: 60)
        XCTAssertEqual(rerun.status, 0, rerun.err)
        XCTAssertEqual(try Data(contentsOf: directory.appendingPathComponent("slow.bin")), body)
        XCTAssertNotNil(server.requests.first?.header("Range"), "continued, not started over")
    }
}
