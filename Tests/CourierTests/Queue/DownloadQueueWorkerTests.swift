import CourierSupport
import CourierTestServer
import XCTest
@testable import Courier
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// ``DownloadQueueWorker`` over real sockets, on a ``JournalQueueStore`` whose clock the test
/// moves (a lease expires when the test says, not after a sleep): workers sharing one list, a
/// lease lost mid-download and at publishing, and an item taken over after its file was linked.
final class DownloadQueueWorkerTests: CourierTestCase {
    /// The time the store sees; starts at the real time and moves only when a test says.
    let now = Locked(Date())

    func openStore() throws -> JournalQueueStore {
        let now = self.now
        return try JournalQueueStore(directory: directory.appendingPathComponent("store"), clock: { now.withLock { $0 } })
    }

    func makeWorker(
        _ name: String, store: JournalQueueStore, _ configure: (inout DownloadQueueWorker.Configuration) -> Void = { _ in }
    ) throws -> DownloadQueueWorker {
        var configuration = DownloadQueueWorker.Configuration()
        configuration.name = name
        configuration.pollInterval = 0.05
        configure(&configuration)
        return try DownloadQueueWorker(
            store: store, directory: directory.appendingPathComponent("worker-\(name)"), manager: manager, configuration: configuration)
    }

    func file(_ name: String) -> URL { directory.appendingPathComponent("out/\(name)") }

    /// The changes a worker announces, kept in order.
    final class Recorder: Sendable {
        let changes = Locked<[DownloadQueue.Change]>([])
        func attach(_ worker: DownloadQueueWorker) { worker.addObserver { change in self.changes.withLock { $0.append(change) } } }
        func failures(_ code: CourierError.Code) -> [String] {
            changes.withLock { $0 }.compactMap { change in
                if case .failed(let failure) = change.state, failure.code == code { return change.id }
                return nil
            }
        }
    }

    func testTwoWorkersShareOneListAndEachFileIsFetchedAndPublishedOnce() async throws {
        // Given one store, 24 items, two workers
        let store = try openStore()
        try store.add(
            (1...24).map { index in
                DownloadQueue.NewItem(url: server.url("/bytes/\(5_000 + index)?seed=\(index)"), to: file("f\(index)"), id: "i\(index)")
            })
        let first = try makeWorker("A", store: store) { $0.maximumRunning = 2 }
        let second = try makeWorker("B", store: store) { $0.maximumRunning = 2 }
        // When both run
        first.start()
        second.start()
        waitUntil("every item completed", timeout: 30) {
            ((try? store.items()) ?? []).allSatisfy { if case .completed = $0.state { true } else { false } }
        }
        await first.stop()
        await second.stop()
        // Then every file is exact, and each URL was asked once
        for index in 1...24 {
            XCTAssertEqual(
                try Data(contentsOf: file("f\(index)")), TestServer.deterministicBytes(count: 5_000 + index, seed: UInt64(index)))
        }
        let paths = server.requests.map(\.target).filter { $0.hasPrefix("/bytes/") }
        XCTAssertEqual(paths.count, 24)
        XCTAssertEqual(Set(paths).count, 24)
    }

    func testALeaseTakenOverMidDownloadStopsItWithoutPublishing() throws {
        // Given a worker fetching a slow body, renewing every 50 ms of the store's clock
        let store = try openStore()
        try store.add([DownloadQueue.NewItem(url: server.url("/drip?numbytes=4000&duration_ms=3000"), to: file("slow"), id: "slow")])
        let worker = try makeWorker("A", store: store) { $0.leaseDuration = 0.15 }
        let recorder = Recorder()
        recorder.attach(worker)
        worker.start()
        waitUntil("the item is leased") { worker.leasedItems == ["slow"] }
        // When the store's clock passes the lease and another worker takes the item over
        now.withLock { $0 += 60 }
        let thief = try XCTUnwrap(try store.lease(worker: "B", duration: 600, maximumPerHost: 2))
        // Then the next beat finds the lease lost and stops the download: nothing published
        waitUntil("the worker let the item go") { worker.leasedItems.isEmpty }
        waitUntil("leaseLost announced") { recorder.failures(.leaseLost) == ["slow"] }
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("slow").path))
        XCTAssertEqual(try store.items().first?.state, .running(received: 0, total: nil), "still the thief's")
        XCTAssertNoThrow(try store.complete(thief, file: file("slow")))
    }

    func testALeaseLostBeforePublishingNeverPublishes() throws {
        // Given a worker whose heartbeat never comes during the download (a 300 s lease)
        let store = try openStore()
        try store.add([DownloadQueue.NewItem(url: server.url("/drip?numbytes=2000&duration_ms=800"), to: file("late"), id: "late")])
        let worker = try makeWorker("A", store: store) { $0.leaseDuration = 300 }
        let recorder = Recorder()
        recorder.attach(worker)
        worker.start()
        waitUntil("the item is leased") { worker.leasedItems == ["late"] }
        // When its lease runs out (as for a worker paused past it) and another worker takes over
        now.withLock { $0 += 400 }
        _ = try XCTUnwrap(try store.lease(worker: "B", duration: 600, maximumPerHost: 2))
        // Then the finished download is refused at the fence: nothing is linked into place
        waitUntil("leaseLost announced", timeout: 15) { recorder.failures(.leaseLost) == ["late"] }
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("late").path))
        XCTAssertTrue(worker.leasedItems.isEmpty)
    }

    func testAFileLinkedByALeaseThatDiedBeforeCompletingIsCompletedNotFetchedAgain() async throws {
        // Given a lease that marked its file as publishing, linked it, and died
        let store = try openStore()
        try store.add([
            DownloadQueue.NewItem(url: server.url("/bytes/100?seed=1"), to: file("marked"), id: "marked"),
            DownloadQueue.NewItem(url: server.url("/bytes/100?seed=2"), to: file("stranger"), id: "stranger"),
        ])
        let dead = try XCTUnwrap(try store.lease(worker: "dead", duration: 1, maximumPerHost: 2))
        XCTAssertEqual(dead.item.id, "marked")
        try store.beginPublishing(dead, file: file("marked"))
        try FileManager.default.createDirectory(at: file("marked").deletingLastPathComponent(), withIntermediateDirectories: true)
        try TestServer.deterministicBytes(count: 100, seed: 1).write(to: file("marked"))
        // and a file nobody marked at the other item's destination
        try Data("not it".utf8).write(to: file("stranger"))
        now.withLock { $0 += 10 }
        // When a worker takes over
        let worker = try makeWorker("A", store: store)
        worker.start()
        waitUntil("both items finished") { ((try? store.items()) ?? []).allSatisfy(\.state.isFinished) }
        await worker.stop()
        // Then the marked file completes its item without a request; the stranger is left alone
        let items = try store.items()
        XCTAssertEqual(items.first { $0.id == "marked" }?.state, .completed(file("marked")))
        guard case .failed(let failure) = items.first(where: { $0.id == "stranger" })?.state else { return XCTFail("\(items)") }
        XCTAssertTrue(failure.message.contains("nothing proves"), failure.message)
        XCTAssertEqual(try String(contentsOf: file("stranger"), encoding: .utf8), "not it")
        XCTAssertTrue(server.requests.isEmpty, "\(server.requests.map(\.target))")
    }

    func testStoppingReleasesRunningItemsForAnyWorker() async throws {
        let store = try openStore()
        try store.add([DownloadQueue.NewItem(url: server.url("/drip?numbytes=4000&duration_ms=3000"), to: file("s"), id: "s")])
        let worker = try makeWorker("A", store: store)
        worker.start()
        waitUntil("the item is leased") { worker.leasedItems == ["s"] }
        await worker.stop()
        XCTAssertEqual(try store.items().first?.state, .queued)
        XCTAssertEqual(try store.lease(worker: "B", duration: 10, maximumPerHost: 1)?.item.id, "s")
    }
}
