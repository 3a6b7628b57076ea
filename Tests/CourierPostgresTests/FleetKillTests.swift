import Courier
import CourierTestServer
import XCTest
@testable import CourierPostgres

/// Issue 35's fleet run: eight worker processes (`courier-test-hooks fleet-worker`) on one list of
/// 2,000 small files from one test server and 40 large ones from another, a random worker killed
/// with SIGKILL about every 0.7 s and started again on its directory. Every item ends `completed`,
/// none `failed`; every file has its SHA-256; and each host's responses in flight (counted at the
/// server) never exceed the fleet-wide per-host cap. Prints the figures.
final class FleetKillTests: PostgresTestCase {
    private var executable: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("courier-test-hooks")
    }

    func testEightWorkersKilledAtRandomPublishEveryFileOnceAndExact() throws {
        let small = try TestServer()
        let large = try TestServer()
        defer {
            small.stop()
            large.stop()
        }
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("courier-fleet-kill-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        // Given 2,000 small files (4 KiB) and 40 large ones (1 MiB, paced at 4 MiB/s so kills land mid-body)
        var expected: [String: String] = [:]
        var items: [DownloadQueue.NewItem] = []
        for index in 1...2_040 {
            let isLarge = index > 2_000
            let size = isLarge ? 1 << 20 : 4_096
            let url = isLarge ? large.url("/bytes/\(size)?seed=\(index)&rate=4194304") : small.url("/bytes/\(size)?seed=\(index)")
            let sha256 = SHA256.hexString(SHA256.hash(TestServer.deterministicBytes(count: size, seed: UInt64(index))))
            expected["f\(index)"] = sha256
            items.append(DownloadQueue.NewItem(url: url, to: root.appendingPathComponent("out/f\(index)"), id: "f\(index)", sha256: sha256))
        }
        let store = try openStore()
        try store.add(items)
        // When eight workers run and one of them is killed about every 0.7 s
        let connection = server.connectionString(database: database)
        func launch(_ name: String) throws -> Process {
            let process = Process()
            process.executableURL = executable
            process.arguments = ["fleet-worker", connection, root.appendingPathComponent(name).path, name, "2"]
            process.standardInput = Pipe()
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            return process
        }
        var workers = try (0..<8).map { try launch("w\($0)") }
        defer {
            for worker in workers where worker.isRunning { kill(worker.processIdentifier, SIGKILL) }
        }
        let started = Date()
        var kills = 0
        var done = false
        while !done, Date().timeIntervalSince(started) < 300 {
            Thread.sleep(forTimeInterval: 0.7)
            let index = Int.random(in: 0..<8)
            kill(workers[index].processIdentifier, SIGKILL)
            workers[index].waitUntilExit()
            kills += 1
            workers[index] = try launch("w\(index)")
            let states = try query("SELECT state, count(*) FROM courier_items GROUP BY state")
            done = states == [["completed", "2040"]] || states.contains { $0[0] == "failed" }
        }
        let elapsed = Date().timeIntervalSince(started)
        // Then every item completed, each file exact, and the caps held at the servers
        XCTAssertEqual(try query("SELECT state, count(*) FROM courier_items GROUP BY state"), [["completed", "2040"]])
        for (id, sha256) in expected {
            let data = try Data(contentsOf: root.appendingPathComponent("out/\(id)"))
            XCTAssertEqual(SHA256.hexString(SHA256.hash(data)), sha256, id)
        }
        let smallPeak = small.traffic(for: "/bytes/4096").peakInFlight
        let largePeak = large.traffic(for: "/bytes/1048576").peakInFlight
        XCTAssertLessThanOrEqual(smallPeak, 2, "the fleet-wide per-host cap")
        XCTAssertLessThanOrEqual(largePeak, 2, "the fleet-wide per-host cap")
        let requests = small.requests.count + large.requests.count
        print(
            "FLEET-KILL 8 workers, 2040 items, \(kills) kills, \(String(format: "%.1f", elapsed)) s, \(requests) requests, peak in flight \(smallPeak)/\(largePeak) per host (cap 2)"
        )
    }
}
