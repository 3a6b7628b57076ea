import XCTest
@testable import Courier
@testable import courier_test_hooks

/// Real crashes: a child process (`courier-test-hooks journal-append`,
/// Sources/courier-test-hooks/JournalAppendCommand.swift) appends
/// numbered records and prints `durable <thread> <index>` after each append returns; it is killed
/// with SIGKILL — by itself at an exact write point (`COURIER_JOURNAL_KILL_AT`) or by the test at a
/// random moment — and the journal is reopened here and checked: every record reported durable
/// is there, in order, with no gap and nothing altered; at most the append in flight per thread
/// is missing (or present); a crash never shows as corruption. Runs continue in one directory,
/// so each also reopens and appends after the repairs of the crash before it.
final class JournalCrashTests: JournalTestCase {
    /// `swift test` builds every product next to the test bundle.
    private var executable: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("courier-test-hooks")
    }

    /// Records of each thread found by the last check: the next run continues from there.
    private var found: [Int] = []
    /// Totals across a test, for the figures it prints.
    private var kills = 0
    private var verified = 0

    /// A finished child: how it ended and what it printed.
    private struct Outcome {
        let reason: Process.TerminationReason
        let status: Int32
        let lines: [String]
        let errors: String
        var killed: Bool { reason == .uncaughtSignal && status == SIGKILL }
    }

    /// Starts `courier-test-hooks journal-append queue …` with `killAt` as the test hook.
    private func start(_ arguments: [String], killAt: String?, output: URL) throws -> Process {
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            struct MissingExecutable: Error { let path: String }
            throw MissingExecutable(path: executable.path)  // fail, never skip: a skip would hide a broken build
        }
        try Data().write(to: output)
        try Data().write(to: URL(fileURLWithPath: output.path + ".err"))
        let process = Process()
        process.executableURL = executable
        process.arguments = ["journal-append", queue.path] + arguments
        var environment = ProcessInfo.processInfo.environment
        environment[Journal.KillPoint.variable] = killAt
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: output.path + ".err"))
        try process.run()
        return process
    }

    /// Waits for `process` (killing it after `timeout`) and reads what it printed to `output`.
    private func finish(_ process: Process, output: URL, timeout: TimeInterval = 60) throws -> Outcome {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { usleep(5_000) }
        if process.isRunning {
            XCTFail("the child did not exit within \(timeout) s")
            kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
        let text = try String(contentsOf: output, encoding: .utf8)
        return Outcome(
            reason: process.terminationReason, status: process.terminationStatus,
            lines: text.split(separator: "\n").map(String.init),
            errors: (try? String(contentsOf: URL(fileURLWithPath: output.path + ".err"), encoding: .utf8)) ?? "")
    }

    private func run(_ arguments: [String], killAt: String? = nil) throws -> Outcome {
        let output = root.appendingPathComponent("child.out")
        return try finish(try start(arguments, killAt: killAt, output: output), output: output)
    }

    /// The last index reported durable for each thread in `lines`.
    private func lastDurable(_ lines: [String]) -> [Int: Int] {
        var last: [Int: Int] = [:]
        for line in lines where line.hasPrefix("durable ") {
            let fields = line.split(separator: " ").compactMap { Int($0) }
            if fields.count == 2 { last[fields[0]] = max(last[fields[0]] ?? -1, fields[1]) }
        }
        return last
    }

    /// Reopens the journal after a run whose output was `lines` and checks it (see the class
    /// comment); updates ``found`` and ``verified``. Returns what replay reported.
    @discardableResult
    private func check(
        after lines: [String], threads: Int, file: StaticString = #filePath, line: UInt = #line
    ) throws
        -> Journal.Report
    {
        let (journal, records, report) = try open(file: file, line: line)
        journal.close()
        XCTAssertEqual(report.skipped, [], "a crash read as corruption", file: file, line: line)
        var indices = [[Int]](repeating: [], count: threads)
        for record in records {
            guard let (thread, index) = JournalAppendCommand.parse(record), thread < threads else {
                XCTFail("a record no child wrote: \(record.prefix(40))", file: file, line: line)
                return report
            }
            XCTAssertEqual(record, JournalAppendCommand.record(thread: thread, index: index), "altered record", file: file, line: line)
            indices[thread].append(index)
        }
        let durable = lastDurable(lines)
        if found.count != threads { found = [Int](repeating: 0, count: threads) }
        for thread in 0..<threads {
            let count = indices[thread].count
            XCTAssertEqual(indices[thread], Array(0..<count), "thread \(thread): out of order or a gap", file: file, line: line)
            // Every durable record is there; beyond them, at most the one in flight.
            let promised = max(found[thread], (durable[thread] ?? -1) + 1)
            XCTAssertGreaterThanOrEqual(count, promised, "thread \(thread): a durable record was lost", file: file, line: line)
            XCTAssertLessThanOrEqual(count, promised + 1, "thread \(thread): records nobody appended", file: file, line: line)
            found[thread] = count
        }
        verified += records.count
        return report
    }

    // MARK: - Tests

    func testAKillAtEveryAppendPointLosesNoDurableRecord() throws {
        let perRun = 12
        for phase in ["before-write", "mid-write", "after-write", "after-sync"] {
            try FileManager.default.createDirectory(at: queue, withIntermediateDirectories: false)
            found = []
            var torn = 0
            for ordinal in 1...perRun {
                let outcome = try run(["\(perRun)"], killAt: "\(ordinal):\(phase)")
                XCTAssertTrue(outcome.killed, "\(phase) \(ordinal): the child was not killed: \(outcome.errors)")
                kills += 1
                XCTAssertEqual(outcome.lines.filter { $0.hasPrefix("durable") }.count, ordinal - 1, "\(phase) \(ordinal)")
                torn += try check(after: outcome.lines, threads: 1).truncatedTailBytes
            }
            // Only a kill mid-write leaves half a record on disk.
            if phase == "mid-write" { XCTAssertGreaterThan(torn, 0) } else { XCTAssertEqual(torn, 0, phase) }
            try FileManager.default.removeItem(at: queue)
        }
        print("journal kill points: \(kills) kills, \(verified) records verified")
    }

    func testAKillDuringACompactionLeavesTheOldOrTheNewJournalWhole() throws {
        for phase in ["compact-written", "compact-renamed"] {
            try FileManager.default.createDirectory(at: queue, withIntermediateDirectories: false)
            found = []
            for ordinal in 1...3 {
                let outcome = try run(["20", "--compact-every", "4"], killAt: "\(ordinal):\(phase)")
                XCTAssertTrue(outcome.killed, "\(phase) \(ordinal): the child was not killed: \(outcome.errors)")
                kills += 1
                XCTAssertEqual(outcome.lines.filter { $0.hasPrefix("compacted") }.count, ordinal - 1)
                try check(after: outcome.lines, threads: 1)
                XCTAssertFalse(
                    FileManager.default.fileExists(atPath: AtomicFile.temporaryFile(for: journalFile).path),
                    "the dead compaction's snapshot was left behind")
            }
            try FileManager.default.removeItem(at: queue)
        }
        print("journal compaction kills: \(kills) kills, \(verified) records verified")
    }

    func testKillsAtRandomMomentsLoseNoDurableRecordOfAnyThread() throws {
        let threads = 4
        var generator = SystemRandomNumberGenerator()
        let iterations = 40
        for iteration in 0..<iterations {
            // A fresh directory now and then: each run replays the whole journal, and a debug
            // build checksums slowly.
            if iteration % 10 == 0 {
                try? FileManager.default.removeItem(at: queue)
                try FileManager.default.createDirectory(at: queue, withIntermediateDirectories: false)
                found = []
            }
            let output = root.appendingPathComponent("child.out")
            let process = try start(["1000000", "--threads", "\(threads)"], killAt: nil, output: output)
            // Until the child has appended, then a random moment later.
            let deadline = Date().addingTimeInterval(30)
            while process.isRunning, Date() < deadline,
                (try? String(contentsOf: output, encoding: .utf8))?.contains("durable") != true
            {
                usleep(2_000)
            }
            usleep(UInt32.random(in: 0...40_000, using: &generator))
            kill(process.processIdentifier, SIGKILL)
            let outcome = try finish(process, output: output)
            XCTAssertTrue(outcome.killed, "iteration \(iteration): \(outcome.errors)")
            kills += 1
            try check(after: outcome.lines, threads: threads)
        }
        print("journal random kills: \(iterations) iterations, \(kills) kills, \(verified) records verified")
    }

    func testAnotherProcessHoldingTheDirectoryIsNamedInTheError() throws {
        let output = root.appendingPathComponent("holder.out")
        let holder = try start(["0", "--hold", "30"], killAt: nil, output: output)
        defer {
            if holder.isRunning { kill(holder.processIdentifier, SIGKILL) }
            holder.waitUntilExit()
        }
        let deadline = Date().addingTimeInterval(30)
        while (try? String(contentsOf: output, encoding: .utf8))?.contains("opened") != true, Date() < deadline { usleep(5_000) }
        let error = openError()
        XCTAssertEqual(error?.code, .fileSystem)
        XCTAssertEqual(error?.message, "the queue directory \(queue.path) is in use by another process (pid \(holder.processIdentifier))")
        // The lock dies with its holder, even by SIGKILL: no stale lock to clean up.
        kill(holder.processIdentifier, SIGKILL)
        holder.waitUntilExit()
        let (journal, _, _) = try open()
        journal.close()
    }

    func testALockHeldByAProcessThatWroteNoPidIsStillAClearError() throws {
        let flock = "/usr/bin/flock"
        guard FileManager.default.isExecutableFile(atPath: flock) else { throw XCTSkip("\(flock) is not installed") }
        try FileManager.default.createDirectory(at: queue, withIntermediateDirectories: false)
        // The shell opens the lock file, flock(1) locks that open file (it lasts past flock's
        // exit), and `exec` turns the shell into the sleep holding it: killing that one process
        // releases the lock, with no grandchild left holding it.
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/bin/sh")
        holder.arguments = ["-c", "exec 9>>\"$1\"; \(flock) -x 9; exec sleep 30", "sh", lockFile.path]
        try holder.run()
        defer {
            if holder.isRunning { kill(holder.processIdentifier, SIGKILL) }
            holder.waitUntilExit()
        }
        // The shell creates the lock file and then flock(1) takes the lock: wait until it has (our own try
        // at a shared lock fails), so that the journal's open meets the lock and writes nothing.
        let deadline = Date().addingTimeInterval(10)
        while !isLockedByAnother(), Date() < deadline { usleep(10_000) }
        XCTAssertEqual(openError()?.message, "the queue directory \(queue.path) is in use by another process")
    }

    /// Whether another open file description holds a `flock` on ``lockFile``.
    private func isLockedByAnother() -> Bool {
        let descriptor = Glibc.open(lockFile.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return flock(descriptor, LOCK_SH | LOCK_NB) != 0
    }
}
