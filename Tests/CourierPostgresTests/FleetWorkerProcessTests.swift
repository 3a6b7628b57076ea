import Courier
import CourierSupport
import CourierTestServer
import XCTest
@testable import CourierPostgres

/// Workers as real child processes (`courier-test-hooks fleet-worker`,
/// Sources/courier-test-hooks/FleetWorkerCommand.swift) on a real PostgreSQL server: one paused
/// with `SIGSTOP` past its lease and continued never publishes; the server restarted under a
/// running worker, it waits and finishes every item, each file once and exact.
final class FleetWorkerProcessTests: PostgresTestCase {
    /// `swift test` builds every product next to the test bundle.
    private var executable: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("courier-test-hooks")
    }

    var http: TestServer!
    var root: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        http = try TestServer()
        root = FileManager.default.temporaryDirectory.appendingPathComponent("courier-fleet-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        http?.stop()
        if let root { try? FileManager.default.removeItem(at: root) }
        try super.tearDownWithError()
    }

    /// A running child and the lines it printed so far.
    final class Child {
        let process = Process()
        let input = Pipe()
        let output: URL

        init(_ executable: URL, _ arguments: [String], output: URL) throws {
            guard FileManager.default.isExecutableFile(atPath: executable.path) else {
                struct MissingExecutable: Error { let path: String }
                throw MissingExecutable(path: executable.path)  // fail, never skip: a skip would hide a broken build
            }
            self.output = output
            try Data().write(to: output)
            process.executableURL = executable
            process.arguments = arguments
            process.standardInput = input
            process.standardOutput = try FileHandle(forWritingTo: output)
            // Its own file: two descriptors writing one file from offset 0 overwrite each other's lines.
            let errors = URL(fileURLWithPath: output.path + ".err")
            try Data().write(to: errors)
            process.standardError = try FileHandle(forWritingTo: errors)
            try process.run()
        }

        var lines: [String] {
            ((try? String(contentsOf: output, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }

        /// Closes its input (it exits), or kills it after 10 s.
        func finish() {
            kill(process.processIdentifier, SIGCONT)
            try? input.fileHandleForWriting.close()
            let deadline = Date().addingTimeInterval(10)
            while process.isRunning, Date() < deadline { usleep(10_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
    }

    func startWorker(_ name: String, lease: TimeInterval) throws -> Child {
        let child = try Child(
            executable,
            ["fleet-worker", server.connectionString(database: database), root.appendingPathComponent(name).path, name, String(lease)],
            output: root.appendingPathComponent("\(name).out"))
        addTeardownBlock { child.finish() }
        waitUntil("\(name) is ready") { child.lines.contains("ready") || !child.process.isRunning }
        XCTAssertTrue(child.process.isRunning, child.lines.joined(separator: "\n"))
        return child
    }

    func waitUntil(_ what: String, timeout: TimeInterval = 20, file: StaticString = #filePath, line: UInt = #line, _ condition: () -> Bool)
    {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() {
            if Date() > deadline { return XCTFail("timed out waiting until \(what)", file: file, line: line) }
            Thread.sleep(forTimeInterval: 0.01)
        }
    }

    func testAWorkerPausedPastItsLeaseAndContinuedNeverPublishes() throws {
        // Given a worker (1 s leases, renewed every 0.33 s) fetching a 4 s body
        let store = try openStore()
        let destination = root.appendingPathComponent("out/slow")
        try store.add([DownloadQueue.NewItem(url: http.url("/drip?numbytes=4000&duration_ms=4000"), to: destination, id: "slow")])
        let child = try startWorker("paused", lease: 1)
        waitUntil("the child leased the item") { (try? self.query("SELECT worker FROM courier_items"))?.first?.first == "paused" }
        // When it is stopped past its lease, another worker takes the item over, and it continues
        kill(child.process.processIdentifier, SIGSTOP)
        Thread.sleep(forTimeInterval: 2)
        let thief = try XCTUnwrap(try store.lease(worker: "thief", duration: 60, maximumPerHost: 2))
        kill(child.process.processIdentifier, SIGCONT)
        // Then its next renewal (or its publishing) is refused: the download stops, unpublished
        waitUntil("the child reports the lease lost") { child.lines.contains("failed slow leaseLost") }
        Thread.sleep(forTimeInterval: 4.5)  // past the end of the body, had it gone on
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path), child.lines.joined(separator: "\n"))
        XCTAssertFalse(child.lines.contains("completed slow"))
        XCTAssertEqual(try query("SELECT worker, token FROM courier_items").first, ["thief", String(thief.token)])
    }

    func testAServerRestartedMidRunIsWaitedForAndEveryFileIsPublishedOnce() throws {
        // Given a worker on twelve items of about a second each
        let store = try openStore()
        let items = (1...12).map { index in
            DownloadQueue.NewItem(
                url: http.url("/bytes/\(20_000 + index)?seed=\(index)&rate=30000"), to: root.appendingPathComponent("out/f\(index)"),
                id: "f\(index)")
        }
        try store.add(items)
        let child = try startWorker("steady", lease: 3)
        waitUntil("the first completion") { child.lines.contains { $0.hasPrefix("completed ") } }
        // When the server restarts under it
        try server.restart()
        // Then every item completes, once, with its bytes
        waitUntil("every item completed", timeout: 60) { child.lines.filter { $0.hasPrefix("completed ") }.count >= 12 }
        let completions = child.lines.filter { $0.hasPrefix("completed ") }
        XCTAssertEqual(completions.count, 12, child.lines.joined(separator: "\n"))
        XCTAssertEqual(Set(completions).count, 12)
        for index in 1...12 {
            XCTAssertEqual(
                try Data(contentsOf: root.appendingPathComponent("out/f\(index)")),
                TestServer.deterministicBytes(count: 20_000 + index, seed: UInt64(index)))
        }
        let states = try query("SELECT state, count(*) FROM courier_items GROUP BY state")
        XCTAssertEqual(states, [["completed", "12"]])
    }

    func testAnIdleWorkerSleepsOnListenUsesNoCPUAndWakesWhenAnItemIsAdded() throws {
        // Given a worker process on an empty list (30 s leases: its safety poll is 30 s away)
        let store = try openStore()
        let child = try startWorker("idle", lease: 30)
        Thread.sleep(forTimeInterval: 0.5)  // it asked once, found nothing, and waits on LISTEN
        // While idle its CPU time (user + system, from /proc) does not move
        let seconds = Double(ProcessInfo.processInfo.environment["COURIER_IDLE_SECONDS"] ?? "") ?? 3
        let before = ProcessCPU.seconds(of: child.process.processIdentifier)
        Thread.sleep(forTimeInterval: seconds)
        let used = ProcessCPU.seconds(of: child.process.processIdentifier) - before
        print("idle worker process: \(Int((used * 1000).rounded())) ms CPU in \(Int(seconds)) s")
        XCTAssertLessThanOrEqual(used, 0.02 * max(1, seconds / 3), "an idle worker does not poll")
        // When an item is added (NOTIFY from the adding transaction)
        let added = Date()
        try store.add([DownloadQueue.NewItem(url: http.url("/bytes/100?seed=1"), to: root.appendingPathComponent("out/w"), id: "w")])
        // Then it is leased and completed at once, not at the poll
        waitUntil("completed") { child.lines.contains("completed w") }
        XCTAssertLessThan(Date().timeIntervalSince(added), 3)
    }

}
