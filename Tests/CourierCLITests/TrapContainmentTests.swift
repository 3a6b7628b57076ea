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

/// Two responses make FoundationNetworking trap, killing the process that made the request
/// ("Traps a server can trigger" in Docs/Platform.md). Courier's platform kit
/// (`PlatformFixes`, Docs/PlatformFixes.md) turns both into errors inside the process; without it
/// (`COURIER_PLATFORM_FIXES=off`) `courier get` still survives them because it runs the transfer
/// in a supervised child (GetSupervisor). These tests run the built `courier`: in child mode (the
/// transfer alone, no supervisor) and as people run it, with the kit and without.
final class TrapContainmentTests: CommandLineTestCase {
    /// 2^63 − 1: libcurl hands it over as a Double, which rounds to 2^63, and `Int64(_:)` traps.
    private static let hugeLength = "9223372036854775807"
    /// A status line and then FIN: libcurl completes without error, but there is no response.
    private static let statusLineOnly = ScriptedServer.Reply.bytes("HTTP/1.1 200 OK\r\n")
    /// The environment that leaves FoundationNetworking as it is.
    private static let withoutKit = [PlatformFixes.environmentVariable: "off"]

    // MARK: - The two traps: raw without the kit, contained by the supervisor

    func testAStatusLineThenCloseKillsTheTransferWithoutTheKitAndGetContainsIt() throws {
        try assertTrapIsContainedBySupervisor(by: Self.statusLineOnly)
    }

    func testAContentLengthJustBelow2To63KillsTheTransferWithoutTheKitAndGetContainsIt() throws {
        try assertTrapIsContainedBySupervisor(
            by: .response(status: 200, headers: [("Content-Length", Self.hugeLength)], body: Data("abc".utf8)))
    }

    private func assertTrapIsContainedBySupervisor(
        by reply: ScriptedServer.Reply, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let hostile = try ScriptedServer { _, _ in reply }
        defer { hostile.stop() }
        let url = hostile.url("/file.bin").absoluteString

        // Given the transfer itself, without a supervisor (child mode, with this process as the
        // parent it checks for) and without the kit, when the server answers, then the process
        // dies of a signal. If this starts failing, the toolchain has fixed the trap: update
        // Docs/Platform.md ("Traps a server can trigger") and reconsider the kit and the child.
        var childWithoutKit = childMode(of: getpid())
        childWithoutKit.merge(Self.withoutKit) { _, new in new }
        let raw = try run(["get", url, "-o", "out.bin", "--retries", "0"], environment: childWithoutKit)
        XCTAssertEqual(raw.reason, .uncaughtSignal, "the trap did not fire: \(raw.err)", file: file, line: line)
        XCTAssertTrue([SIGILL, SIGTRAP].contains(raw.status), "signal \(raw.status)", file: file, line: line)
        XCTAssertEqual(hostile.requests.count, 1, file: file, line: line)

        // When `courier get` runs as usual with two retries, still without the kit, then it exits
        // 3 after three attempts, saying why, and publishes nothing.
        let contained = try run(["get", url, "-o", "out.bin", "--retries", "2"], environment: Self.withoutKit)
        XCTAssertEqual(contained.reason, .exit, "courier itself crashed: \(contained.err)", file: file, line: line)
        XCTAssertEqual(contained.status, ExitCode.network, contained.err, file: file, line: line)
        XCTAssertEqual(hostile.requests.count, 1 + 3, "retries + 1 attempts", file: file, line: line)
        let restarts = contained.err.split(separator: "\n").filter { $0.contains("retrying from the bytes kept") }
        XCTAssertEqual(restarts.count, 2, contained.err, file: file, line: line)
        let last = contained.err.split(separator: "\n").last.map(String.init) ?? ""
        XCTAssertTrue(last.hasPrefix("courier: network error: the download process crashed 3 times"), last, file: file, line: line)
        XCTAssertTrue(last.contains("FoundationNetworking") && last.contains("SIG"), last, file: file, line: line)
        XCTAssertEqual(contained.out, "", file: file, line: line)
        XCTAssertFalse(try listing().contains("out.bin"), "nothing is published", file: file, line: line)
    }

    // MARK: - With the kit: an ordinary failure in the transfer's own process

    func testWithTheKitAStatusLineThenCloseIsAnErrorInTheTransfersOwnProcess() throws {
        try assertTrapIsAnError(by: Self.statusLineOnly, saying: "the connection closed before the end of the response head")
    }

    func testWithTheKitAContentLengthJustBelow2To63IsAnErrorInTheTransfersOwnProcess() throws {
        try assertTrapIsAnError(
            by: .response(status: 200, headers: [("Content-Length", Self.hugeLength)], body: Data("abc".utf8)),
            saying: "network error")
    }

    private func assertTrapIsAnError(
        by reply: ScriptedServer.Reply, saying expected: String, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let hostile = try ScriptedServer { _, _ in reply }
        defer { hostile.stop() }
        let url = hostile.url("/file.bin").absoluteString

        // Given the transfer alone (child mode, no supervisor to restart it) with the kit, when
        // the server answers, then the process itself exits 3 with a message: it did not die.
        let child = try run(["get", url, "-o", "out.bin", "--retries", "0"], environment: childMode(of: getpid()))
        XCTAssertEqual(child.reason, .exit, "the transfer's process died: \(child.err)", file: file, line: line)
        XCTAssertEqual(child.status, ExitCode.network, child.err, file: file, line: line)
        XCTAssertTrue(child.err.contains(expected), child.err, file: file, line: line)

        // When `courier get` runs as usual with two retries, then every attempt fails the same
        // way in its one child, nothing crashed, and nothing is published.
        let command = try run(["get", url, "-o", "out.bin", "--retries", "2"])
        XCTAssertEqual(command.reason, .exit, command.err, file: file, line: line)
        XCTAssertEqual(command.status, ExitCode.network, command.err, file: file, line: line)
        XCTAssertEqual(hostile.requests.count, 1 + 3, "the child's attempt, then retries + 1", file: file, line: line)
        XCTAssertFalse(command.err.contains("crashed"), command.err, file: file, line: line)
        XCTAssertEqual(command.err.components(separatedBy: "retrying in").count - 1, 2, command.err, file: file, line: line)
        XCTAssertFalse(try listing().contains("out.bin"), "nothing is published", file: file, line: line)
    }

    // MARK: - The bytes kept before a trap (without the kit, so that the child does die)

    func testBytesReceivedBeforeATrapAreContinuedByTheNextAttempt() throws {
        let contents = TestServer.deterministicBytes(count: 200_000, seed: 41)
        let half = contents.count / 2
        let etag = "\"v1\""
        // Half of the body, then the connection ends (the library keeps it and retries); that
        // retry traps, killing the first child; the second child asks for the rest.
        let hostile = try Self.cutThenTrapped(contents, trap: Self.statusLineOnly)
        defer { hostile.stop() }

        let result = try run(
            ["get", hostile.url("/file.bin").absoluteString, "-o", "out.bin", "--retries", "3"], environment: Self.withoutKit)
        XCTAssertEqual(result.reason, .exit, result.err)
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertEqual(try Data(contentsOf: directory.appendingPathComponent("out.bin")), contents)
        XCTAssertEqual(try listing(), ["out.bin"])
        let requests = hostile.requests
        XCTAssertEqual(requests.count, 3, result.err)
        XCTAssertEqual(requests.last?.header("Range"), "bytes=\(half)-", "the third attempt asked only for the rest")
        XCTAssertEqual(requests.last?.header("If-Range"), etag)
        XCTAssertEqual(result.err.components(separatedBy: "crashed (").count - 1, 1, result.err)
    }

    func testWithTheKitATrapOnAContinuationToStandardOutputIsContinuedLikeALostConnection() throws {
        let traps: [(String, ScriptedServer.Reply)] = [
            ("a status line alone", Self.statusLineOnly),
            (
                "a Content-Length of 2^63 - 1",
                .response(status: 200, headers: [("Content-Length", Self.hugeLength)], body: Data("abc".utf8))
            ),
        ]
        for (name, trap) in traps {
            // Given a body (text, so stdout compares as a string) cut half way, a continuation the
            // server answers with a trap (an error with the kit), and then the rest
            let contents = Data((0..<200_000).map { UInt8(ascii: "a") + UInt8($0 % 26) })
            let half = contents.count / 2
            let hostile = try Self.cutThenTrapped(contents, trap: trap)
            defer { hostile.stop() }
            // When the body streams to stdout with the kit
            let result = try run(["get", hostile.url("/file.bin").absoluteString, "-o", "-"])
            // Then the answer the kit turned into an error is continued like a lost connection: the
            // output is the whole body, once, and the last request asked only for the rest
            XCTAssertEqual(result.reason, .exit, "\(name): \(result.err)")
            XCTAssertEqual(result.status, 0, "\(name): \(result.err)")
            XCTAssertTrue(result.out == String(decoding: contents, as: UTF8.self), "\(name): the output is the body, once")
            XCTAssertEqual(hostile.requests.last?.header("Range"), "bytes=\(half)-", "\(name): \(result.err)")
        }
    }

    /// A server that sends half of `contents` (strong ETag `"v1"`) and ends the connection,
    /// answers the next request with `trap`, and then a `Range` for the rest with a 206.
    private static func cutThenTrapped(_ contents: Data, trap: ScriptedServer.Reply) throws -> ScriptedServer {
        let half = contents.count / 2
        let etag = "\"v1\""
        return try ScriptedServer { request, index in
            switch index {
            case 0:
                return .response(
                    status: 200, headers: [("Content-Length", "\(contents.count)"), ("ETag", etag)],
                    body: contents, sendingOnly: half)
            case 1:
                return trap
            default:
                guard request.header("Range") == "bytes=\(half)-" else {
                    return .response(status: 200, headers: [("Content-Length", "\(contents.count)"), ("ETag", etag)], body: contents)
                }
                return .response(
                    status: 206, reason: "Partial Content",
                    headers: [
                        ("Content-Range", "bytes \(half)-\(contents.count - 1)/\(contents.count)"),
                        ("Content-Length", "\(contents.count - half)"), ("ETag", etag),
                    ],
                    body: contents.suffix(from: half))
            }
        }
    }

    /// The supervisor cannot ask a crashed child what it kept: it reads the resume record, and
    /// says it in the same words as any other failure that keeps bytes.
    func testGivingUpAfterCrashesSaysHowMuchIsKept() throws {
        let contents = TestServer.deterministicBytes(count: 200_000, seed: 45)
        let hostile = try ScriptedServer { _, index in
            index == 0
                ? .response(
                    status: 200, headers: [("Content-Length", "\(contents.count)"), ("ETag", "\"k\"")],
                    body: contents, sendingOnly: 100_000)
                : Self.statusLineOnly
        }
        defer { hostile.stop() }
        let result = try run(
            ["get", hostile.url("/file.bin").absoluteString, "-o", "out.bin", "--retries", "1"], environment: Self.withoutKit)
        XCTAssertEqual(result.status, ExitCode.network, result.err)
        let last = result.err.split(separator: "\n").last.map(String.init) ?? ""
        XCTAssertTrue(last.hasPrefix("courier: network error: the download process crashed 2 times"), last)
        XCTAssertTrue(last.hasSuffix("FoundationNetworking; 97.7 KiB kept — run the same command again to resume"), last)
        XCTAssertEqual(try listing(), [".out.bin.courier-partial", ".out.bin.courier-resume"])
    }

    /// `--max-time` is the whole command's: a restarted child gets only what is left of it.
    func testMaxTimeCoversRestartsAfterCrashes() throws {
        // Each answer takes a second and then traps: without a shared deadline, six attempts.
        let hostile = try ScriptedServer { _, _ in
            ScriptedServer.Reply([.pause(milliseconds: 1000), .send(Data("HTTP/1.1 200 OK\r\n".utf8))])
        }
        defer { hostile.stop() }
        let started = Date()
        let result = try run(
            ["get", hostile.url("/file.bin").absoluteString, "-o", "out.bin", "--retries", "5", "--max-time", "1.5"],
            environment: Self.withoutKit)
        XCTAssertEqual(result.reason, .exit, result.err)
        XCTAssertEqual(result.status, ExitCode.network, result.err)
        XCTAssertTrue(result.err.contains("did not finish within --max-time"), result.err)
        XCTAssertLessThanOrEqual(hostile.requests.count, 2, result.err)
        XCTAssertLessThan(Date().timeIntervalSince(started), 5, "well short of six one-second attempts")
        XCTAssertFalse(try listing().contains("out.bin"))
    }

    // MARK: - The child never outlives the command

    func testSIGKILLOfTheCommandEndsTheTransferAndARerunResumes() throws {
        let contents = TestServer.deterministicBytes(count: 2 * 1024 * 1024, seed: 42)
        server.addFile("slow.bin", data: contents)
        // 128 writes of 16 KiB, 40 ms apart: more than five seconds.
        let arguments = ["get", server.url("/files/slow.bin?chunk=16384&chunk_delay_ms=40").absoluteString, "-o", "out.bin"]
        let command = try start(arguments)
        // Killed once the record beside the partial file vouches for some bytes.
        let record = directory.appendingPathComponent(".out.bin.courier-resume")
        waitUntil("a resume record with bytes", timeout: 20) {
            ((try? ResumeData(data: Data(contentsOf: record)))?.bytesOnDisk ?? 0) > 0
        }
        let supervisor = command.process.processIdentifier
        let transfer = try XCTUnwrap(Self.children(of: supervisor).first, "the transfer runs in a child")
        let threads = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(supervisor)/task")
        XCTAssertEqual(threads.count, 1, "the supervisor takes its signals with sigwaitinfo: it must have one thread")

        kill(command.process.processIdentifier, SIGKILL)
        command.process.waitUntilExit()
        waitUntil("the child to die with its parent", timeout: 10) { !Self.isAlive(transfer) }
        let names = try listing()
        XCTAssertEqual(names, [".out.bin.courier-partial", ".out.bin.courier-resume"], "no output, bytes kept")

        let resumed = try run(arguments, timeout: 60)
        XCTAssertEqual(resumed.status, 0, resumed.err)
        XCTAssertEqual(SHA256.hash(try Data(contentsOf: directory.appendingPathComponent("out.bin"))), SHA256.hash(contents))
        XCTAssertEqual(try listing(), ["out.bin"])
        let range = try XCTUnwrap(server.requests.last?.header("Range"), "the rerun continued")
        XCTAssertNotEqual(range, "bytes=0-")
        XCTAssertEqual(server.requests.count, 2)
    }

    // MARK: - Signals reach the child once

    func testSIGTERMToTheCommandIsForwardedOnceAndTheChildStopsCleanly() throws {
        server.addFile("slow.bin", data: TestServer.deterministicBytes(count: 1024 * 1024, seed: 43))
        let command = try start(["get", server.url("/files/slow.bin?chunk=16384&chunk_delay_ms=40").absoluteString, "-o", "out.bin"])
        waitUntil("a progress line", timeout: 20) { self.stderr(of: command).contains(" of 1.0 MiB") }

        kill(command.process.processIdentifier, SIGTERM)
        let stopped = finish(command, timeout: 15)
        XCTAssertEqual(stopped.reason, .exit, stopped.err)
        XCTAssertEqual(stopped.status, 143, stopped.err)
        XCTAssertTrue(stopped.err.contains(" kept — run the same command again to resume"), stopped.err)
        XCTAssertFalse(stopped.err.contains("interrupted again"), "the child got the signal once: \(stopped.err)")
        XCTAssertEqual(try listing(), [".out.bin.courier-partial", ".out.bin.courier-resume"])
    }

    /// A child that cannot stop by itself (here: stopped with SIGSTOP, so its own deadline never
    /// fires) is killed once `--max-time` and a grace period have passed.
    func testMaxTimeIsAHardBoundEvenOnAStuckChild() throws {
        let hanging = try ScriptedServer { _, _ in
            ScriptedServer.Reply(
                [.send(ScriptedServer.Reply.head(status: 200, headers: [("Content-Length", "1000")]))],
                ending: .hang)
        }
        defer { hanging.stop() }
        let started = Date()
        let command = try start(["get", "--max-time", "1", "-o", "stuck.bin", hanging.url("/stuck.bin").absoluteString])
        // Stopped only once its request arrived: a child still inside the supervisor's
        // posix_spawn (a vfork before exec) would hold the supervisor stopped with it.
        waitUntil("the child's request arrived", timeout: 10) { hanging.requests.count == 1 }
        let child = try XCTUnwrap(Self.children(of: command.process.processIdentifier).first)
        kill(child, SIGSTOP)
        let ended = finish(command, timeout: 30)
        XCTAssertEqual(ended.status, 3, ended.err)
        XCTAssertTrue(ended.err.contains("did not stop at --max-time"), ended.err)
        XCTAssertLessThan(Date().timeIntervalSince(started), 1 + Double(GetSupervisor.overdueGraceSeconds) + 10)
        XCTAssertFalse(Self.isAlive(child), "the stuck child is gone")
    }

    /// `timeout`, `kill -TERM -<pgid>` and systemd signal every process of the group: the child
    /// gets SIGTERM directly and again from the supervisor. It must still stop cleanly, once.
    func testSIGTERMToTheWholeGroupStopsTheChildCleanlyOnce() throws {
        server.addFile("slow.bin", data: TestServer.deterministicBytes(count: 1024 * 1024, seed: 44))
        let command = try start(["get", server.url("/files/slow.bin?chunk=16384&chunk_delay_ms=40").absoluteString, "-o", "out.bin"])
        waitUntil("a progress line", timeout: 20) { self.stderr(of: command).contains(" of 1.0 MiB") }
        let child = try XCTUnwrap(Self.children(of: command.process.processIdentifier).first)

        kill(child, SIGTERM)
        kill(command.process.processIdentifier, SIGTERM)
        let stopped = finish(command, timeout: 15)
        XCTAssertEqual(stopped.status, 143, stopped.err)
        XCTAssertTrue(stopped.err.contains(" kept — run the same command again to resume"), stopped.err)
        XCTAssertFalse(stopped.err.contains("interrupted again"), "the forwarded copy is not a second stop: \(stopped.err)")
        XCTAssertEqual(try listing(), [".out.bin.courier-partial", ".out.bin.courier-resume"])
    }

    /// A terminal's Ctrl-C signals the whole foreground process group, the child included; the
    /// command must not pass on a second copy (the child would take it as "stop now"). When the
    /// second copy comes while the first is still pending the kernel merges them, so a supervisor
    /// that does forward it fails this test only about one run in three;
    /// `testOnlySignalsNotFromTheTerminalAreForwarded` pins the decision itself.
    func testCtrlCOnATerminalStopsTheChildOnce() throws {
        server.addFile("slow.bin", data: TestServer.deterministicBytes(count: 1024 * 1024, seed: 44))
        let terminal = try PseudoTerminal()
        let output = directory.appendingPathComponent("out.bin").path
        let errors = logs.appendingPathComponent("terminal.err")
        let command = try terminal.spawnSessionLeader(
            executable.path,
            ["courier", "get", server.url("/files/slow.bin?chunk=16384&chunk_delay_ms=40").absoluteString, "-o", output],
            environment: childEnvironment(), standardError: errors.path)
        defer { command.killIfRunning() }
        let errorText = { (try? String(contentsOf: errors, encoding: .utf8)) ?? "" }
        waitUntil("a progress line", timeout: 20) { errorText().contains(" of 1.0 MiB") }

        try terminal.type(0x03)  // ^C: the terminal sends SIGINT to its foreground process group
        let status = command.wait(timeout: 15)
        XCTAssertEqual(status, .exited(130), errorText())
        XCTAssertTrue(errorText().contains(" kept — run the same command again to resume"), errorText())
        XCTAssertFalse(errorText().contains("interrupted again"), "the child got Ctrl-C once: \(errorText())")
        XCTAssertEqual(try listing(), [".out.bin.courier-partial", ".out.bin.courier-resume"])
    }

    func testAChildWhoseParentIsNotTheNamedSupervisorRefusesToRun() throws {
        let hostile = try ScriptedServer { _, _ in Self.statusLineOnly }
        defer { hostile.stop() }
        let result = try run(["get", hostile.url("/file.bin").absoluteString], environment: childMode(of: getpid() == 1 ? 2 : 1))
        XCTAssertEqual(result.reason, .exit)
        XCTAssertEqual(result.status, ExitCode.failure, result.err)
        XCTAssertTrue(result.err.contains("not this one's parent"), result.err)
        XCTAssertTrue(hostile.requests.isEmpty, "nothing was fetched")
    }

    // MARK: - Pure parts

    func testMessagesNameTheSignal() {
        XCTAssertEqual(GetSupervisor.describe(signal: SIGILL), "signal 4, SIGILL")
        XCTAssertEqual(GetSupervisor.describe(signal: 64), "signal 64")
        XCTAssertTrue(GetSupervisor.restartLine(signal: SIGTRAP, restart: 1, of: 3).contains("(signal 5, SIGTRAP)"))
        XCTAssertTrue(GetSupervisor.givingUpLine(signal: SIGILL, attempts: 1).contains("crashed once"))
    }

    // MARK: - Helpers

    /// This process's environment as `CommandLineTestCase.start` passes it on, for `posix_spawn`.
    private func childEnvironment() -> [String: String] {
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.lowercased().hasSuffix("_proxy") }
        environment["no_proxy"] = "127.0.0.1,localhost"
        return environment
    }

    /// The environment that makes `courier get` run as a supervisor's child, with `parent` as the
    /// supervisor it checks for (no supervisor of its own).
    private func childMode(of parent: pid_t) -> [String: String] {
        [GetSupervisor.childVariable: String(parent)]
    }

    /// The processes whose parent is `pid`, from `/proc/<pid>/task/*/children`.
    private static func children(of pid: pid_t) -> [pid_t] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.flatMap { task -> [pid_t] in
            let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/children", encoding: .utf8)) ?? ""
            return text.split(separator: " ").compactMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
    }

    /// Whether `pid` is still running: gone, or a zombie nobody reaped yet, counts as dead.
    private static func isAlive(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        let state = stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).first
        return state != "Z" && state != "X"
    }
}
