import Courier
import CourierSupport
import CourierTestServer
import XCTest
@testable import CourierPostgres

/// ``DownloadQueue`` itself on a PostgreSQL store (``DownloadQueue/init(store:directory:manager:configuration:)``),
/// with real downloads from the test server: two queues share one list, a taken-over item
/// continues from the recorded resume point, and an idle queue sleeps on `LISTEN` until an item
/// is added — no poll, no CPU.
final class PostgresDownloadQueueTests: PostgresTestCase {
    var testServer: TestServer!
    var root: URL!
    var managers: [SessionManager] = []

    override func setUpWithError() throws {
        try super.setUpWithError()
        testServer = try TestServer()
        root = FileManager.default.temporaryDirectory.appendingPathComponent("courier-pg-queue-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        for manager in managers { manager.invalidate(cancelingTasks: true) }
        testServer?.stop()
        if let root { try? FileManager.default.removeItem(at: root) }
        try super.tearDownWithError()
    }

    func file(_ name: String) -> URL { root.appendingPathComponent("out/\(name)") }

    /// A queue on a store of its own (as a process of the fleet would have), as `name`.
    func makeQueue(_ name: String, _ configure: (inout DownloadQueue.Configuration) -> Void = { _ in }) throws -> DownloadQueue {
        var configuration = DownloadQueue.Configuration()
        configuration.leasing.workerName = name
        configure(&configuration)
        let manager = SessionManager()
        managers.append(manager)
        return try DownloadQueue(
            store: try openStore(), directory: root.appendingPathComponent("worker-\(name)"), manager: manager,
            configuration: configuration)
    }

    func testTwoQueuesOnOneDatabaseFetchEachItemOnce() async throws {
        // Given two queues, each with its own connection to one database
        let first = try makeQueue("A") { $0.maximumRunning = 3 }
        let second = try makeQueue("B") { $0.maximumRunning = 3 }
        let announced = Locked<[String: Int]>([:])
        for queue in [first, second] {
            queue.addObserver { change in
                if case .completed = change.state { announced.withLock { $0[change.id, default: 0] += 1 } }
            }
        }
        // When 30 items are added through one of them
        try second.add(
            contentsOf: (1...30).map {
                DownloadQueue.NewItem(url: testServer.url("/bytes/\(2_000 + $0)?seed=\($0)"), to: file("f\($0)"), id: "i\($0)")
            })
        // Then each is completed once (announced once, asked once), every file exact
        let deadline = Date().addingTimeInterval(60)
        while announced.withLock({ $0.count }) < 30, Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        XCTAssertEqual(announced.withLock { $0 }.values.sorted(), Array(repeating: 1, count: 30))
        XCTAssertEqual(try query("SELECT state, count(*) FROM courier_items GROUP BY state"), [["completed", "30"]])
        XCTAssertEqual(first.items.count, 30)
        for index in 1...30 {
            XCTAssertEqual(
                try Data(contentsOf: file("f\(index)")), TestServer.deterministicBytes(count: 2_000 + index, seed: UInt64(index)))
        }
        let paths = testServer.requests.map(\.target)
        XCTAssertEqual(paths.count, 30)
        XCTAssertEqual(Set(paths).count, 30)
        await first.stop()
        await second.stop()
    }

    func testATakenOverItemContinuesFromTheRecordedResumePoint() async throws {
        // Given an item queue A fetched in part (its heartbeat recorded the resume record in the
        // database) and gave back when it stopped
        let first = try makeQueue("A") { configuration in
            configuration.leasing.leaseDuration = 0.6
            configuration.policy.recordInterval = .milliseconds(50)
        }
        let recorded = Locked<Int64>(0)
        first.addObserver { change in
            if case .running(let received, _) = change.state { recorded.withLock { $0 = max($0, received) } }
        }
        try first.add(.init(url: testServer.url("/bytes/2000000?seed=4&chunk=16384&chunk_delay_ms=15"), to: file("big"), id: "big"))
        let deadline = Date().addingTimeInterval(20)
        while recorded.withLock({ $0 }) < 400_000, Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        try await Task.sleep(for: .milliseconds(500))  // two more beats
        await first.stop()
        let stored = try query("SELECT state, received, length(resume_record) > 0 FROM courier_items")
        XCTAssertEqual(stored.first?[0], "queued")
        XCTAssertGreaterThan(Int(stored.first?[1] ?? "") ?? 0, 300_000)
        XCTAssertEqual(stored.first?[2], "t")
        let before = testServer.requests.count
        // When queue B, in another directory on the same disk, leases it
        let second = try makeQueue("B")
        let end = Date().addingTimeInterval(30)
        while second.item("big")?.state.isFinished != true, Date() < end { try await Task.sleep(for: .milliseconds(20)) }
        // Then B asked for the rest only, and the file is exact
        XCTAssertEqual(second.item("big")?.state, .completed(file("big")))
        XCTAssertEqual(try Data(contentsOf: file("big")), TestServer.deterministicBytes(count: 2_000_000, seed: 4))
        let requests = Array(testServer.requests.dropFirst(before))
        XCTAssertEqual(requests.count, 1)
        XCTAssertNotNil(requests.first?.header("Range"), "continued from A's bytes")
        await second.stop()
    }

    func testAnIdleQueueSleepsOnListenUntilAnItemIsAdded() async throws {
        // Given an idle queue whose safety poll is ten minutes away
        let queue = try makeQueue("idle") { $0.leasing.pollInterval = 600 }
        try await Task.sleep(for: .milliseconds(300))
        // While idle it uses (next to) no CPU
        let seconds = Double(ProcessInfo.processInfo.environment["COURIER_IDLE_SECONDS"] ?? "") ?? 3
        let cpuBefore = ProcessCPU.ownSeconds()
        try await Task.sleep(for: .seconds(seconds))
        let idleCPU = ProcessCPU.ownSeconds() - cpuBefore
        print("idle queue on PostgreSQL: \(String(format: "%.1f", idleCPU * 1000)) ms CPU in \(seconds) s")
        XCTAssertLessThan(idleCPU, 0.05 * seconds / 3, "an idle queue does not poll")
        // When another process adds an item (NOTIFY from its transaction)
        let other = try openStore()
        let added = Date()
        try other.add([.init(url: testServer.url("/bytes/100?seed=2"), to: file("w"), id: "w")])
        // Then the idle queue leases and completes it at once, not at its poll
        let deadline = Date().addingTimeInterval(10)
        while queue.item("w")?.state.isFinished != true, Date() < deadline { try await Task.sleep(for: .milliseconds(10)) }
        XCTAssertEqual(queue.item("w")?.state, .completed(file("w")))
        XCTAssertLessThan(Date().timeIntervalSince(added), 3)
        await queue.stop()
    }

}
