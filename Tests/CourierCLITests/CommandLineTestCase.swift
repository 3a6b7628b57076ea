import XCTest
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Base class for tests that run the `courier` executable as a subprocess, the way people run
/// it: in a fresh working directory, against an in-process server, with stdout and stderr
/// captured in files kept outside that directory (so "no side files" can be checked with a
/// plain listing). Children still running at the end are killed.
class CommandLineTestCase: XCTestCase {
    var server: TestServer!
    /// The child's working directory.
    var directory: URL!
    /// Holds the captured output; not inside `directory`.
    var logs: URL!
    var children: [Process] = []
    var launches = 0

    /// `swift test` builds every product next to the test bundle.
    var executable: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("courier")
    }

    override func setUpWithError() throws {
        try super.setUpWithError()
        server = try TestServer()
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("courier-get-\(UUID().uuidString)")
        directory = root.appendingPathComponent("work")
        logs = root.appendingPathComponent("logs")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: logs, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        for child in children where child.isRunning {
            kill(child.processIdentifier, SIGKILL)
            // Bounded, as in `finish`: an exit that is never reported must not hang the run.
            let killed = Date().addingTimeInterval(10)
            while child.isRunning, Date() < killed { usleep(10_000) }
        }
        children = []
        server?.stop()
        server = nil
        if let directory { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }
        try super.tearDownWithError()
    }

    // MARK: - Running the executable

    struct Child {
        let process: Process
        let stdout: URL
        let stderr: URL
    }

    struct Outcome {
        /// `.exit`, or `.uncaughtSignal` when `status` is a signal number.
        let reason: Process.TerminationReason
        let status: Int32
        let out: String
        let err: String
    }

    /// Starts `courier` with `arguments`; `environment` is added to (and wins over) this process's.
    /// `standardOutput` replaces the file stdout is captured in (then ``Outcome/out`` is empty);
    /// `standardInput` replaces `/dev/null`.
    func start(
        _ arguments: [String], environment extra: [String: String] = [:], standardOutput: FileHandle? = nil,
        standardInput: FileHandle? = nil
    ) throws -> Child {
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            struct MissingExecutable: Error { let path: String }
            throw MissingExecutable(path: executable.path)  // fail, never skip: a skip would hide a broken build
        }
        launches += 1
        let stdout = logs.appendingPathComponent("\(launches).out")
        let stderr = logs.appendingPathComponent("\(launches).err")
        try Data().write(to: stdout)
        try Data().write(to: stderr)
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = directory
        // Proxies would route loopback traffic away (URLSession honours them).
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.lowercased().hasSuffix("_proxy") }
        environment["no_proxy"] = "127.0.0.1,localhost"
        environment.merge(Self.crashEnvironment(environment)) { _, new in new }
        environment.merge(extra) { _, new in new }
        process.environment = environment
        process.standardInput = standardInput ?? FileHandle.nullDevice
        process.standardOutput = try standardOutput ?? FileHandle(forWritingTo: stdout)
        process.standardError = try FileHandle(forWritingTo: stderr)
        try process.run()
        children.append(process)
        return Child(process: process, stdout: stdout, stderr: stderr)
    }

    /// What every child's environment says about crashes, so that a crash the test provokes ends
    /// the same way on every build and machine:
    /// - no runtime backtracer (`SWIFT_BACKTRACE=enable=no`): it runs as a separate process that
    ///   stops the crashed one, takes seconds, and under ThreadSanitizer was seen to outlive the
    ///   crash by many minutes while the child's exit was never reported;
    /// - under ThreadSanitizer, no sanitizer handler for the fatal signals, so a trap still kills
    ///   the process with its signal instead of exiting 66 after a "DEADLYSIGNAL" report.
    /// A test that wants otherwise passes its own values.
    static func crashEnvironment(_ inherited: [String: String]) -> [String: String] {
        let handlers = "handle_segv=0:handle_sigbus=0:handle_sigill=0:handle_sigfpe=0:handle_abort=0"
        let sanitizer = inherited["TSAN_OPTIONS"].map { $0.isEmpty ? handlers : $0 + ":" + handlers } ?? handlers
        return ["SWIFT_BACKTRACE": "enable=no", "TSAN_OPTIONS": sanitizer]
    }

    /// Waits for the child to exit (killing it if it outlives `timeout`) and collects its output.
    /// Never waits without a bound: a child whose exit is not reported within 10 s of being killed
    /// fails the test instead of hanging the run.
    func finish(
        _ child: Child, timeout: TimeInterval = 30, file: StaticString = #filePath, line: UInt = #line
    )
        -> Outcome
    {
        let deadline = Date().addingTimeInterval(timeout)
        while child.process.isRunning, Date() < deadline { usleep(10_000) }
        if child.process.isRunning {
            XCTFail("courier did not exit within \(timeout) s", file: file, line: line)
            kill(child.process.processIdentifier, SIGKILL)
            let killed = Date().addingTimeInterval(10)
            while child.process.isRunning, Date() < killed { usleep(10_000) }
            if child.process.isRunning {
                XCTFail("courier was killed, and its exit was not reported within 10 s", file: file, line: line)
                let out = (try? String(contentsOf: child.stdout, encoding: .utf8)) ?? ""
                return Outcome(reason: .uncaughtSignal, status: SIGKILL, out: out, err: stderr(of: child))
            }
        }
        child.process.waitUntilExit()
        let out = (try? String(contentsOf: child.stdout, encoding: .utf8)) ?? ""
        return Outcome(
            reason: child.process.terminationReason, status: child.process.terminationStatus, out: out, err: stderr(of: child))
    }

    func run(_ arguments: [String], environment: [String: String] = [:], timeout: TimeInterval = 30) throws -> Outcome {
        finish(try start(arguments, environment: environment), timeout: timeout)
    }

    func stderr(of child: Child) -> String {
        (try? String(contentsOf: child.stderr, encoding: .utf8)) ?? ""
    }

    /// Every name in the working directory, hidden ones included, sorted.
    func listing() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
    }

    func errorLines(_ text: String) -> [String] {
        text.split(separator: "\n").map(String.init)
    }

    func waitUntil(
        _ what: String, timeout: TimeInterval, file: StaticString = #filePath, line: UInt = #line,
        _ condition: () -> Bool
    ) {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() {
            if Date() > deadline { return XCTFail("timed out waiting for \(what)", file: file, line: line) }
            usleep(10_000)
        }
    }
}
