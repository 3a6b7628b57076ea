import Courier
import CourierTestServer
import XCTest
@testable import CourierPostgres

/// Items completed per second by 1, 2, 4 and 8 worker processes (`courier-test-hooks
/// fleet-worker`, two downloads each, a per-host cap of 16 so the cap is not the limit) draining
/// 600 small files (4 KiB) from one test server through one PostgreSQL database. Prints one
/// `FLEET-THROUGHPUT` line per count (Performance.md); asserts only that every item completed once.
final class FleetThroughputTests: PostgresTestCase {
    private var executable: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("courier-test-hooks")
    }

    func testItemsPerSecondWithOneTwoFourAndEightWorkers() throws {
        let http = try TestServer()
        defer { http.stop() }
        let count = 600
        for workers in [1, 2, 4, 8] {
            let root = FileManager.default.temporaryDirectory.appendingPathComponent("courier-fleet-rate-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: root) }
            try query("DROP TABLE IF EXISTS courier_items, courier_schema CASCADE")
            try query("DROP SEQUENCE IF EXISTS courier_item_sequence")
            try query("DROP FUNCTION IF EXISTS courier_lease, courier_items_token_check CASCADE")
            let store = try openStore()
            try store.add(
                (1...count).map {
                    DownloadQueue.NewItem(
                        url: http.url("/bytes/4096?seed=\($0)"), to: root.appendingPathComponent("out/f\($0)"), id: "f\($0)")
                })
            let started = Date()
            let processes = try (0..<workers).map { index -> Process in
                let process = Process()
                process.executableURL = executable
                process.arguments = [
                    "fleet-worker", server.connectionString(database: database), root.appendingPathComponent("w\(index)").path, "w\(index)",
                    "30", "16",
                ]
                process.standardInput = Pipe()
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                try process.run()
                return process
            }
            defer {
                for process in processes where process.isRunning { kill(process.processIdentifier, SIGKILL) }
            }
            let deadline = Date().addingTimeInterval(120)
            while Date() < deadline, try query("SELECT count(*) FROM courier_items WHERE state = 'completed'") != [[String(count)]] {
                Thread.sleep(forTimeInterval: 0.02)
            }
            let elapsed = Date().timeIntervalSince(started)
            XCTAssertEqual(try query("SELECT state, count(*) FROM courier_items GROUP BY state"), [["completed", String(count)]])
            print(
                "FLEET-THROUGHPUT \(workers) workers: \(count) items in \(String(format: "%.2f", elapsed)) s, \(String(format: "%.0f", Double(count) / elapsed)) items/s (process start included)"
            )
        }
    }
}
