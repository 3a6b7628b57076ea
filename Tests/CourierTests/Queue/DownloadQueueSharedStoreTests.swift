import CourierSupport
import CourierTestServer
import XCTest
@testable import Courier
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// ``DownloadQueue/init(store:directory:manager:configuration:)`` over real sockets, on a
/// ``JournalQueueStore`` shared by two queues of this process (the PostgreSQL store's own runs
/// are in CourierPostgresTests): the queue's API on leased items, the refresh hook, a taken-over
/// item continuing from the previous holder's bytes (or from zero when it cannot read them), and
/// an idle queue woken by the store rather than by polling.
final class DownloadQueueSharedStoreTests: CourierTestCase {
    func file(_ name: String) -> URL { directory.appendingPathComponent("out/\(name)") }

    func openStore() throws -> JournalQueueStore {
        try JournalQueueStore(directory: directory.appendingPathComponent("store"))
    }

    /// A queue leasing from `store` as `name`, its partial files in `worker-<name>`.
    func makeQueue(
        _ name: String, store: JournalQueueStore, _ configure: (inout DownloadQueue.Configuration) -> Void = { _ in }
    ) throws -> DownloadQueue {
        var configuration = DownloadQueue.Configuration()
        configuration.leasing.workerName = name
        configuration.leasing.pollInterval = 0.2
        configure(&configuration)
        return try DownloadQueue(
            store: store, directory: directory.appendingPathComponent("worker-\(name)"), manager: manager, configuration: configuration)
    }

    func testTwoQueuesOnOneStoreFetchEachItemOnceAndAnnounceIt() async throws {
        // Given one store and two queues on it, one observed through changes()
        let store = try openStore()
        let first = try makeQueue("A", store: store) { $0.maximumRunning = 2 }
        let second = try makeQueue("B", store: store) { $0.maximumRunning = 2 }
        let completed = Locked<Set<String>>([])
        for queue in [first, second] {
            queue.addObserver { change in
                if case .completed = change.state { completed.withLock { _ = $0.insert(change.id) } }
            }
        }
        // When twelve items are added through the first queue
        let added = try first.add(
            contentsOf: (1...12).map {
                DownloadQueue.NewItem(url: server.url("/bytes/\(3_000 + $0)?seed=\($0)"), to: file("f\($0)"), id: "i\($0)")
            })
        XCTAssertEqual(added.map(\.id), (1...12).map { "i\($0)" })
        // Then every item completes once, announced by whichever queue fetched it, every file exact
        waitUntil("every item completed", timeout: 30) { completed.withLock { $0.count } == 12 }
        XCTAssertTrue(second.items.allSatisfy { if case .completed = $0.state { true } else { false } }, "\(second.items)")
        XCTAssertEqual(first.item("i3")?.state, .completed(file("f3")))
        for index in 1...12 {
            XCTAssertEqual(
                try Data(contentsOf: file("f\(index)")), TestServer.deterministicBytes(count: 3_000 + index, seed: UInt64(index)))
        }
        let paths = server.requests.map(\.target).filter { $0.hasPrefix("/bytes/") }
        XCTAssertEqual(paths.count, 12)
        XCTAssertEqual(Set(paths).count, 12)
        await first.stop()
        await second.stop()
    }

    func testRequestsAboutOneItemAreRefusedOnASharedStore() async throws {
        let store = try openStore()
        let queue = try makeQueue("A", store: store)
        for (name, request) in [
            ("pause", { try queue.pause("x") }), ("resume", { try queue.resume("x") }), ("cancel", { try queue.cancel("x") }),
            ("remove", { try queue.remove("x") }), ("reconcile", { _ = try queue.reconcile([]) }),
        ] as [(String, () throws -> Void)] {
            XCTAssertThrowsError(try request(), name) { error in
                XCTAssertEqual((error as? CourierError)?.code, .invalidRequest, name)
                XCTAssertTrue("\(error)".contains("shared store"), "\(error)")
            }
        }
        await queue.stop()
    }

    func testAnExpiredURLAsksTheRefresherAndTheLeaseGoesOnWithItsRequest() async throws {
        // Given an item whose URL answers 403, and a refresher that gives a good one
        let server = server!
        let store = try openStore()
        let reasons = Locked<[DownloadQueue.RefreshReason]>([])
        let queue = try makeQueue("A", store: store) { configuration in
            configuration.refresher = { _, reason in
                reasons.withLock { $0.append(reason) }
                return URLRequest(url: server.signedURL(bytes: 2_000, query: "seed=3", validFor: 60))
            }
        }
        let retries = Locked<[RetryOwner]>([])
        queue.addObserver { change in if let retry = change.retry { retries.withLock { $0.append(retry) } } }
        // When it runs
        try queue.add(.init(url: server.url("/status/403"), to: file("s"), id: "s"))
        // Then the 403 asked the refresher once, and the fresh request published the file
        waitUntil("finished", timeout: 15) { queue.item("s")?.state.isFinished == true }
        XCTAssertEqual(queue.item("s")?.state, .completed(file("s")))
        XCTAssertEqual(try Data(contentsOf: file("s")), TestServer.deterministicBytes(count: 2_000, seed: 3))
        XCTAssertEqual(reasons.withLock { $0 }, [.expired(status: 403)])
        waitUntil("the refresh announced") { retries.withLock { $0 } == [.queueRefresh] }
        await queue.stop()
    }

    func testARefresherThatGivesNothingFailsTheItemUnderItsLease() async throws {
        let store = try openStore()
        let queue = try makeQueue("A", store: store) { $0.refresher = { _, _ in nil } }
        try queue.add(.init(url: server.url("/status/410"), to: file("g"), id: "g"))
        waitUntil("finished", timeout: 15) { queue.item("g")?.state.isFinished == true }
        guard case .failed(let failure) = queue.item("g")?.state else { return XCTFail("\(String(describing: queue.item("g")))") }
        XCTAssertTrue(failure.message.contains("refresher"), failure.message)
        await queue.stop()
    }

    // MARK: - Taken over

    /// Starts a 2 MB paced body on queue A, waits until A's heartbeat recorded a good part of it,
    /// stops A (its item goes back to the store with its progress), and returns the bytes recorded.
    private func startAndStopFirstHolder(store: JournalQueueStore) async throws -> URL {
        let url = server.url("/bytes/2000000?seed=9&chunk=16384&chunk_delay_ms=15")
        let first = try makeQueue("A", store: store) { configuration in
            configuration.leasing.leaseDuration = 0.3  // a beat every 0.1 s
            configuration.policy.recordInterval = .milliseconds(50)
        }
        let recorded = Locked<Int64>(0)
        first.addObserver { change in
            if case .running(let received, _) = change.state { recorded.withLock { $0 = max($0, received) } }
        }
        try first.add(.init(url: url, to: file("big"), id: "big"))
        waitUntil("a beat recorded 400 KB", timeout: 20) { recorded.withLock { $0 } > 400_000 }
        try await Task.sleep(for: .milliseconds(250))  // two more beats: the store has a record of that much
        await first.stop()
        XCTAssertEqual(try store.items().first?.state, .queued)
        return directory.appendingPathComponent("worker-A")
    }

    func testATakenOverItemContinuesFromTheHoldersBytesWhenItCanReadThem() async throws {
        // Given an item A fetched in part and gave back, its partial file readable here (shared storage)
        let store = try openStore()
        _ = try await startAndStopFirstHolder(store: store)
        let before = server.requests.count
        // When B leases it
        let second = try makeQueue("B", store: store)
        waitUntil("completed by B", timeout: 30) { second.item("big")?.state.isFinished == true }
        // Then B asked only for the rest (Range from the recorded offset, If-Range), and the file is exact
        XCTAssertEqual(second.item("big")?.state, .completed(file("big")))
        XCTAssertEqual(try Data(contentsOf: file("big")), TestServer.deterministicBytes(count: 2_000_000, seed: 9))
        let requests = Array(server.requests.dropFirst(before))
        XCTAssertEqual(requests.count, 1, "\(requests.map(\.target))")
        let range = try XCTUnwrap(requests.first?.header("Range"), "B continued from A's bytes")
        let offset = Int(range.dropFirst("bytes=".count).prefix { $0 != "-" }) ?? 0
        XCTAssertGreaterThan(offset, 300_000, range)
        XCTAssertNotNil(requests.first?.header("If-Range"))
        await second.stop()
    }

    func testATakenOverItemStartsFromZeroWhenTheHoldersBytesAreElsewhere() async throws {
        // Given an item A fetched in part and gave back, on a disk B cannot reach (A's directory gone here)
        let store = try openStore()
        let holder = try await startAndStopFirstHolder(store: store)
        try FileManager.default.removeItem(at: holder)
        let before = server.requests.count
        // When B leases it
        let second = try makeQueue("B", store: store)
        waitUntil("completed by B", timeout: 30) { second.item("big")?.state.isFinished == true }
        // Then B fetched the whole body, and the file is exact
        XCTAssertEqual(second.item("big")?.state, .completed(file("big")))
        XCTAssertEqual(try Data(contentsOf: file("big")), TestServer.deterministicBytes(count: 2_000_000, seed: 9))
        let requests = Array(server.requests.dropFirst(before))
        XCTAssertEqual(requests.count, 1, "\(requests.map(\.target))")
        XCTAssertNil(requests.first?.header("Range"), "from zero")
        await second.stop()
    }

    // MARK: - Idle

    func testAnIdleQueueIsWokenByTheStoreNotByItsPoll() async throws {
        // Given an idle queue whose safety poll is ten minutes away
        let store = try openStore()
        let queue = try makeQueue("A", store: store) { $0.leasing.pollInterval = 600 }
        try await Task.sleep(for: .milliseconds(300))  // it asked, found nothing, and waits
        // When another user of the store adds an item (not through this queue)
        let added = Date()
        try store.add([.init(url: server.url("/bytes/100?seed=1"), to: file("w"), id: "w")])
        // Then the queue leases and completes it at once
        waitUntil("completed", timeout: 10) { queue.item("w")?.state.isFinished == true }
        XCTAssertLessThan(Date().timeIntervalSince(added), 5)
        XCTAssertEqual(queue.item("w")?.state, .completed(file("w")))
        await queue.stop()
    }
}
