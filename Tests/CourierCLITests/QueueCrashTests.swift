import CourierTestSupport
import XCTest
import CourierTestServer
@testable import Courier
@testable import courier

/// `courier get -i` killed with SIGKILL, as a power cut or the OOM killer would: at every journal
/// write point (`COURIER_JOURNAL_KILL_AT`, fired in the child that holds the journal) and at
/// seeded random moments. After every kill the output directory must hold only files that are
/// byte-identical to what they should be, and nothing but them and the queue's directory; the
/// same command, run again until it succeeds, must end with every file right (the library checks
/// each line's sha256=, and so does this test).
final class QueueCrashTests: CommandLineTestCase {
    /// The files served: sizes from 200 KB to 2 MB.
    private static let sizes = [200_000, 350_000, 500_000, 800_000, 1_200_000, 2_000_000]
    private var expected: [String: Data] = [:]
    private var outputs: URL { directory.appendingPathComponent("out") }
    private var input: URL { logs.appendingPathComponent("input.txt") }
    /// Figures for the closing note.
    private var iterations = 0
    private var kills = 0
    private var filesVerified = 0

    override func setUpWithError() throws {
        try super.setUpWithError()
        var lines = ["# the kill loop's files"]
        for (index, size) in Self.sizes.enumerated() {
            let name = "file\(index).bin"
            let data = TestServer.deterministicBytes(count: size, seed: UInt64(100 + index))
            server.addFile(name, data: data)
            expected[name] = data
            // 16 KiB writes 2 ms apart: slow enough to be caught mid-body, quick enough to loop.
            let url = server.url("/files/\(name)?chunk=16384&chunk_delay_ms=2").absoluteString
            lines.append("\(url)  sha256=\(SHA256.hexString(SHA256.hash(data)))  out=\(name)")
        }
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: input)
    }

    private var arguments: [String] {
        ["get", "-i", input.path, "-P", "out", "--parallel", "6", "--per-host", "6", "-s"]
    }

    /// The supervisor's input copy goes to a temporary directory of the test's, so a supervisor
    /// killed before it could remove it leaves nothing behind elsewhere.
    private var environment: [String: String] { ["TMPDIR": logs.path] }

    /// After a kill: no file that is not exactly right, nothing but the queue's directory besides.
    private func checkNothingWrongPublished(_ context: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: outputs.path)) ?? []
        for name in names where name != GetCommand.QueueOptions.defaultStateName {
            guard let want = expected[name] else {
                XCTFail("\(context): a stray file \(name)", file: file, line: line)
                continue
            }
            let got = try Data(contentsOf: outputs.appendingPathComponent(name))
            XCTAssertTrue(
                got == want, "\(context): \(name) published with \(got.count) bytes, not the right \(want.count)", file: file, line: line)
            filesVerified += 1
        }
    }

    /// Runs the command without a kill until it succeeds (a few tries at most), then checks every file.
    private func finishAndVerify(
        _ context: String, arguments: [String]? = nil, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let outcome = try run(arguments ?? self.arguments, environment: environment, timeout: 60)
        XCTAssertEqual(outcome.status, 0, "\(context): \(outcome.err)", file: file, line: line)
        let names = try FileManager.default.contentsOfDirectory(atPath: outputs.path).sorted()
        XCTAssertEqual(names, ([GetCommand.QueueOptions.defaultStateName] + expected.keys).sorted(), context, file: file, line: line)
        for (name, data) in expected {
            let got = try Data(contentsOf: outputs.appendingPathComponent(name))
            XCTAssertEqual(SHA256.hash(got), SHA256.hash(data), "\(context): \(name)", file: file, line: line)
            filesVerified += 1
        }
        // Stdout lists every file, in the input's order.
        XCTAssertEqual(
            outcome.out.split(separator: "\n").map(String.init), expected.keys.sorted().map { outputs.appendingPathComponent($0).path })
    }

    private func reset() throws {
        try? FileManager.default.removeItem(at: outputs)
    }

    // MARK: - Tests

    /// Every append of a whole run, at each phase: killed there, checked, then finished.
    func testAKillAtEveryJournalWritePointPublishesNothingWrong() throws {
        for phase in ["before-write", "mid-write", "after-write", "after-sync"] {
            for ordinal in 1...24 {
                try reset()
                iterations += 1
                let outcome = try run(
                    arguments,
                    environment: environment.merging(
                        [Journal.KillPoint.variable: "\(ordinal):\(phase)"]) { $1 }, timeout: 60)
                if outcome.status == 0, outcome.reason == .exit {
                    // A whole run has fewer appends than `ordinal`: every point of this phase is done.
                    XCTAssertGreaterThan(ordinal, 3, "\(phase): a run makes more than \(ordinal - 1) appends")
                    try finishAndVerify("\(phase) past the last append")
                    break
                }
                // The child killed itself; the supervisor reports it and exits 128 + 9.
                XCTAssertEqual(outcome.status, 128 + SIGKILL, "\(phase) \(ordinal): \(outcome.err)")
                kills += 1
                try checkNothingWrongPublished("\(phase) \(ordinal)")
                try finishAndVerify("after \(phase) \(ordinal)")
            }
        }
        print("queue kill points: \(iterations) iterations, \(kills) kills, \(filesVerified) files verified")
    }

    /// SIGKILL at seeded random moments, run after run in one directory until a run completes.
    func testKillsAtRandomMomentsPublishNothingWrong() throws {
        var generator = SplitMix64(seed: 0xC0_0121_E4)
        let rounds = 10
        // 8 ms between writes: a whole run takes about a second, the largest body most of it.
        let arguments = arguments.map { $0 == input.path ? slowInput(delay: 8).path : $0 }
        // How long a whole run takes on this machine now: kills are spread over it, so a loaded
        // machine or a sanitizer build (many times slower) still sees runs finish.
        try reset()
        let started = Date()
        let baseline = try run(arguments, environment: environment, timeout: 120)
        let runTime = Date().timeIntervalSince(started)
        XCTAssertEqual(baseline.status, 0, "an unkilled run: \(baseline.err)")
        let window = UInt32(min(max(runTime * 1.2, 0.2), 60) * 1_000_000)
        for round in 1...rounds {
            try reset()
            var finished = false
            var attempt = 0
            while !finished {
                attempt += 1
                iterations += 1
                let command = try start(arguments, environment: environment)
                // Up to 1.2 times a whole run (about 1.2 s on a quiet machine): kills land before
                // the child starts, mid-body, around publishing, and some attempts finish first. (A
                // resume record lags its bytes by up to a second, so a body killed sooner starts over.)
                usleep(UInt32.random(in: 10_000...max(10_001, window), using: &generator))
                let supervisor = command.process.processIdentifier
                // The child holds the journal: it is the one killed. Then the supervisor, so a
                // child not yet spawned never is (and one spawned meanwhile dies with it).
                for child in Self.children(of: supervisor) { kill(child, SIGKILL) }
                kill(supervisor, SIGKILL)
                let outcome = finish(command, timeout: 30)
                if outcome.reason == .exit, outcome.status == 0 {
                    finished = true
                } else {
                    kills += 1
                }
                try checkNothingWrongPublished("round \(round), attempt \(attempt)")
                XCTAssertLessThan(attempt, 25, "round \(round): no progress after \(attempt) kills")
                if attempt >= 25 { break }
            }
            try finishAndVerify("round \(round)", arguments: arguments)
        }
        print("queue random kills: \(iterations) iterations, \(kills) kills, \(filesVerified) files verified")
    }

    /// A byte flipped in the middle of the journal between runs: the rerun says what it skipped
    /// and still ends with every file right.
    func testAFlippedByteInTheJournalIsReportedAndTheRerunStillEndsRight() throws {
        let slow = arguments.map { $0 == input.path ? slowInput().path : $0 }
        let command = try start(slow, environment: environment)
        waitUntil("two files saved", timeout: 30) {
            ((try? FileManager.default.contentsOfDirectory(atPath: outputs.path)) ?? []).filter { $0.hasSuffix(".bin") }.count >= 2
        }
        kill(command.process.processIdentifier, SIGTERM)
        let stopped = finish(command)
        XCTAssertEqual(stopped.status, 143, stopped.err)

        let journal = outputs.appendingPathComponent(".courier-queue/journal")
        var bytes = [UInt8](try Data(contentsOf: journal))
        // The middle record's payload: records are length (4), CRC (4), payload, after a 16-byte header.
        var offsets: [(start: Int, length: Int)] = []
        var position = 16
        while position + 8 <= bytes.count {
            let length = bytes[position..<position + 4].reduce(0) { $0 << 8 | Int($1) }
            offsets.append((position + 8, length))
            position += 8 + length
        }
        XCTAssertGreaterThan(offsets.count, 3)
        let middle = offsets[offsets.count / 2]
        bytes[middle.start + middle.length / 2] ^= 0x5A
        try Data(bytes).write(to: journal)

        let rerun = try run(slow, environment: environment, timeout: 60)
        XCTAssertEqual(rerun.status, 0, rerun.err)
        XCTAssertTrue(rerun.err.contains("damaged record, skipped"), rerun.err)
        for (name, data) in expected {
            XCTAssertEqual(try Data(contentsOf: outputs.appendingPathComponent(name)), data, name)
        }
    }

    /// Two commands on one state directory: the second says so and exits 6; the first goes on.
    func testASecondCommandOnTheSameStateDirectoryIsRefused() throws {
        let slow = arguments.map { $0 == input.path ? slowInput().path : $0 }
        let first = try start(slow, environment: environment)
        let lock = outputs.appendingPathComponent(".courier-queue/journal")
        waitUntil("the queue open", timeout: 20) { FileManager.default.fileExists(atPath: lock.path) }
        let second = try run(slow, environment: environment)
        XCTAssertEqual(second.status, ExitCode.fileSystem, second.err)
        XCTAssertTrue(second.err.contains("cannot open the download queue"), second.err)
        XCTAssertEqual(errorLines(second.err).count, 1, second.err)
        XCTAssertTrue(first.process.isRunning, "the first command goes on")
        kill(first.process.processIdentifier, SIGTERM)
        XCTAssertEqual(finish(first).status, 143)
        let rerun = try run(slow, environment: environment, timeout: 60)
        XCTAssertEqual(rerun.status, 0, rerun.err)
    }

    // MARK: - Helpers

    /// The input with slower bodies (by default 20 ms between writes: ~2.5 s for the largest).
    private func slowInput(delay: Int = 20) -> URL {
        let slow = logs.appendingPathComponent("slow-\(delay).txt")
        let text = (try? String(contentsOf: input, encoding: .utf8)) ?? ""
        try? Data(text.replacingOccurrences(of: "chunk_delay_ms=2", with: "chunk_delay_ms=\(delay)").utf8).write(to: slow)
        return slow
    }

    /// The processes whose parent is `pid`, from `/proc/<pid>/task/*/children`.
    static func children(of pid: pid_t) -> [pid_t] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.flatMap { task -> [pid_t] in
            let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/children", encoding: .utf8)) ?? ""
            return text.split(separator: " ").compactMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
    }
}
