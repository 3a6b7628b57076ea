import Courier
import CourierTestServer
import XCTest
@testable import CourierPostgres

/// Items completed per second by 1, 2, 4 and 8 worker processes (`courier-test-hooks
/// fleet-worker`, two downloads each, a per-host cap of 16 so the cap is not the limit) draining
/// 600 small files (4 KiB) from one test server through one PostgreSQL database. Prints one
/// `FLEET-THROUGHPUT` line per count (Performance.md) with what each part spent: the workers' CPU
/// (`/proc`), the PostgreSQL server's (postmaster and backends), this process's (the test server
/// and the progress query), and the store's statements per item: `courier_lease` calls
/// (`pg_stat_user_functions`) and row updates (`pg_stat_user_tables`: a lease, a publishing
/// mark and a completion each update the item's row once). Asserts only that every item
/// completed once.
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
            try query("ALTER DATABASE \(database) SET track_functions = 'pl'")  // counts courier_lease calls
            let store = try openStore()
            try store.add(
                (1...count).map {
                    DownloadQueue.NewItem(
                        url: http.url("/bytes/4096?seed=\($0)"), to: root.appendingPathComponent("out/f\($0)"), id: "f\($0)")
                })
            // One connection for the progress query (a new one per query would cost the server a fork).
            let watch = try PostgresConnection(server.connectionString(database: database), libpq: try LibPQ.load())
            defer { watch.close() }
            /// One number from the statistics (a fresh snapshot), 0 when there is no row yet.
            func statistic(_ sql: String) throws -> Double {
                _ = try watch.execute("SELECT pg_stat_clear_snapshot()")
                return Double(try watch.execute(sql).first?.first.flatMap { $0 } ?? "") ?? 0
            }
            let leaseCalls = "SELECT calls FROM pg_stat_user_functions WHERE funcname = 'courier_lease'"
            let rowUpdates = "SELECT n_tup_upd FROM pg_stat_user_tables WHERE relname = 'courier_items'"
            let postmaster =
                Int32(
                    (try String(contentsOf: server.directory.appendingPathComponent("data/postmaster.pid"), encoding: .utf8))
                        .split(separator: "\n").first ?? "") ?? 0
            Thread.sleep(forTimeInterval: 1.1)  // the statistics of the adding are flushed
            let leasesBefore = try statistic(leaseCalls)
            let serverBefore = ProcessCPU.seconds(ofTree: postmaster)
            let ownBefore = ProcessCPU.ownSeconds()
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
            while Date() < deadline,
                try watch.execute("SELECT count(*) FROM courier_items WHERE state = 'completed'").first?.first != String(count)
            {
                Thread.sleep(forTimeInterval: 0.02)
            }
            let elapsed = Date().timeIntervalSince(started)
            let workerCPU = processes.map { ProcessCPU.seconds(of: $0.processIdentifier) }.reduce(0, +)
            let ownCPU = ProcessCPU.ownSeconds() - ownBefore
            for process in processes {
                try? (process.standardInput as? Pipe)?.fileHandleForWriting.close()
                process.waitUntilExit()
            }
            Thread.sleep(forTimeInterval: 1.1)  // the backends have ended and their statistics are flushed
            let serverCPU = ProcessCPU.seconds(ofTree: postmaster) - serverBefore
            let leases = try statistic(leaseCalls) - leasesBefore
            let updates = try statistic(rowUpdates)  // the table is new in each run
            XCTAssertEqual(try query("SELECT state, count(*) FROM courier_items GROUP BY state"), [["completed", String(count)]])
            var load = [0.0, 0.0, 0.0]
            _ = getloadavg(&load, 3)
            func format(_ value: Double, _ digits: Int = 2) -> String { String(format: "%.\(digits)f", value) }
            print(
                "FLEET-THROUGHPUT \(workers) workers: \(count) items in \(format(elapsed)) s, \(format(Double(count) / elapsed, 0)) items/s "
                    + "(process start included); CPU s: workers \(format(workerCPU)), postgres \(format(serverCPU)), "
                    + "test process \(format(ownCPU)) (of \(format(elapsed * 2)) on 2 cores); "
                    + "CPU ms per item: workers \(format(workerCPU * 1000 / Double(count))), postgres \(format(serverCPU * 1000 / Double(count))); "
                    + "per item: lease calls \(format(leases / Double(count))), row updates \(format(updates / Double(count))); "
                    + "load \(format(load[0]))"
            )
        }
    }
}
