import Courier
import CourierTestServer
import XCTest
@testable import CourierPostgres

/// `courier get -i FILE --queue …` and `courier queue status --queue …`, the built `courier` run
/// as people run it, against a throwaway PostgreSQL server and the test server: two workers on
/// one list fetch each file once, and no line either prints holds the password.
final class FleetCommandTests: PostgresTestCase {
    /// `swift test` builds every product next to the test bundle.
    private var courier: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("courier")
    }

    var http: TestServer!
    var root: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        http = try TestServer()
        root = FileManager.default.temporaryDirectory.appendingPathComponent("courier-fleet-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        http?.stop()
        if let root { try? FileManager.default.removeItem(at: root) }
        try super.tearDownWithError()
    }

    /// A started `courier` whose output goes to files (read once it exits).
    struct Run {
        let process: Process
        let stdout: URL
        let stderr: URL

        func wait(timeout: TimeInterval = 60) -> (status: Int32, out: String, err: String) {
            let deadline = Date().addingTimeInterval(timeout)
            while process.isRunning, Date() < deadline { usleep(10_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            let read = { (url: URL) in (try? String(contentsOf: url, encoding: .utf8)) ?? "" }
            return (process.terminationStatus, read(stdout), read(stderr))
        }
    }

    func start(_ arguments: [String], name: String) throws -> Run {
        let run = Run(
            process: Process(), stdout: root.appendingPathComponent("\(name).out"), stderr: root.appendingPathComponent("\(name).err"))
        try Data().write(to: run.stdout)
        try Data().write(to: run.stderr)
        run.process.executableURL = courier
        run.process.arguments = arguments
        run.process.currentDirectoryURL = root
        var environment = ProcessInfo.processInfo.environment
        for name in ["http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"] { environment[name] = nil }
        run.process.environment = environment
        run.process.standardInput = FileHandle.nullDevice
        run.process.standardOutput = try FileHandle(forWritingTo: run.stdout)
        run.process.standardError = try FileHandle(forWritingTo: run.stderr)
        try run.process.run()
        return run
    }

    func testTwoWorkersShareAListEachFileIsFetchedOnceAndStatusShowsIt() throws {
        // Given a list of twelve files and the database's connection string (password inside)
        let connection = server.connectionString(database: database)
        let lines = (1...12).map { "\(http.url("/bytes/\(30_000 + $0)?seed=\($0)&rate=200000").absoluteString) out=f\($0)" }
        try (lines.joined(separator: "\n") + "\n").write(to: root.appendingPathComponent("list.txt"), atomically: true, encoding: .utf8)
        // When two workers run the same command
        let runs = try ["a", "b"].map { name in
            try start(["get", "-i", "list.txt", "-P", "out", "--state", "state-\(name)", "--queue", connection], name: name)
        }
        let results = runs.map { $0.wait() }
        // Then both end well, list every file, and each file was fetched once, exact
        let expected = (1...12).map { root.appendingPathComponent("out/f\($0)").standardizedFileURL.path }
        for result in results {
            XCTAssertEqual(result.status, 0, result.err)
            XCTAssertEqual(result.out.split(separator: "\n").map(String.init), expected, result.err)
            XCTAssertFalse(result.err.contains(server.password), "the password was printed")
        }
        for index in 1...12 {
            XCTAssertEqual(
                try Data(contentsOf: root.appendingPathComponent("out/f\(index)")),
                TestServer.deterministicBytes(count: 30_000 + index, seed: UInt64(index)))
        }
        let fetched = http.requests.map(\.path).filter { $0.hasPrefix("/bytes/") }
        XCTAssertEqual(fetched.count, 12, "\(fetched)")
        XCTAssertEqual(Set(fetched).count, 12)
        // And the status shows them completed
        let status = try start(["queue", "status", "--queue", connection], name: "status").wait()
        XCTAssertEqual(status.status, 0, status.err)
        XCTAssertTrue(status.out.contains("completed"), status.out)
        XCTAssertTrue(status.out.hasSuffix("total 12\n"), status.out)
    }

    func testAWrongPasswordIsAClearErrorThatNeverPrintsThePassword() throws {
        let secret = "not-the-Password-4711"
        let wrong = server.connectionString(database: database, password: secret)
        try "\(http.url("/bytes/10").absoluteString)\n".write(
            to: root.appendingPathComponent("list.txt"), atomically: true, encoding: .utf8)
        for arguments in [["queue", "status", "--queue", wrong], ["get", "-i", "list.txt", "--queue", wrong]] {
            let result = try start(arguments, name: arguments[0]).wait()
            XCTAssertNotEqual(result.status, 0)
            XCTAssertTrue(result.err.contains("password authentication failed"), result.err)
            XCTAssertFalse(result.err.contains(secret) || result.out.contains(secret), result.err)
        }
    }
}
