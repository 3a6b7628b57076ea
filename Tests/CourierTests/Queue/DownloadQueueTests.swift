import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CourierSupport

/// `DownloadQueue` over real sockets: states, caps, order, pause/resume/cancel/remove, reopening.
final class DownloadQueueTests: CourierTestCase {
    var queueDirectory: URL { directory.appendingPathComponent("queue") }

    func makeQueue(_ configure: (inout DownloadQueue.Configuration) -> Void = { _ in }) throws -> DownloadQueue {
        var configuration = DownloadQueue.Configuration()
        configure(&configuration)
        return try DownloadQueue(directory: queueDirectory, manager: manager, configuration: configuration)
    }

    func file(_ name: String) -> URL { directory.appendingPathComponent("out/\(name)") }

    /// Waits until every item is finished.
    func waitForAll(_ queue: DownloadQueue, timeout: TimeInterval = 20) {
        waitUntil("every item finished", timeout: timeout) { queue.items.allSatisfy { $0.state.isFinished } }
    }

    func testItemsAreDownloadedPublishedAndAnnouncedInOrder() async throws {
        let queue = try makeQueue()
        let changes = queue.changes()
        let items = try queue.add(
            contentsOf: (1...8).map { index in
                DownloadQueue.NewItem(url: server.url("/bytes/\(10_000 * index)?seed=\(index)"), to: file("f\(index)"), id: "item-\(index)")
            })
        XCTAssertEqual(items.map(\.id), (1...8).map { "item-\($0)" })
        waitForAll(queue)
        for index in 1...8 {
            XCTAssertEqual(queue.item("item-\(index)")?.state, .completed(file("f\(index)")))
            XCTAssertEqual(
                try Data(contentsOf: file("f\(index)")), TestServer.deterministicBytes(count: 10_000 * index, seed: UInt64(index)))
        }
        // Each item: queued, running…, completed — never out of order.
        var seen: [String: [String]] = [:]
        for await change in changes {
            let name: String
            switch change.state {
            case .queued: name = "queued"
            case .running: name = "running"
            case .completed: name = "completed"
            default: name = "other"
            }
            if seen[change.id]?.last != name { seen[change.id, default: []].append(name) }
            if seen.count == 8, seen.values.allSatisfy({ $0.last == "completed" }) { break }
        }
        for index in 1...8 { XCTAssertEqual(seen["item-\(index)"], ["queued", "running", "completed"]) }
        // Only the files remain: no partial file or record in the queue's directory.
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: queueDirectory.appendingPathComponent("parts").path), [])
    }

    func testTheCapsHoldGloballyAndPerHost() throws {
        // Given two servers (two hosts for the cap) and slow bodies
        let other = try TestServer()
        defer { other.stop() }
        let queue = try makeQueue {
            $0.maximumRunning = 3
            $0.maximumRunningPerHost = 2
        }
        let peak = Locked((total: 0, perHost: [String: Int]()))
        let current = Locked([String: String]())  // running id → host
        queue.addObserver { change in
            current.withLock { running in
                if case .running = change.state {
                    running[change.id] = change.item.hostKey
                } else {
                    running[change.id] = nil
                }
                let hosts = Dictionary(grouping: running.values, by: { $0 }).mapValues(\.count)
                peak.withLock {
                    $0.total = max($0.total, running.count)
                    for (host, count) in hosts { $0.perHost[host] = max($0.perHost[host] ?? 0, count) }
                }
            }
        }
        var new: [DownloadQueue.NewItem] = []
        for index in 0..<6 {
            new.append(.init(url: server.url("/drip?numbytes=10&duration_ms=300&n=\(index)"), to: file("a\(index)")))
            new.append(.init(url: other.url("/drip?numbytes=10&duration_ms=300&n=\(index)"), to: file("b\(index)")))
        }
        try queue.add(contentsOf: new)
        waitForAll(queue)
        Thread.sleep(forTimeInterval: 0.1)  // the observer runs on its own queue
        XCTAssertEqual(peak.withLock { $0.total }, 3)
        XCTAssertEqual(peak.withLock { $0.perHost.values.max() }, 2)
        XCTAssertEqual(peak.withLock { $0.perHost.count }, 2)
    }

    func testHigherPriorityRunsFirstAndFIFOWithinAPriority() throws {
        let queue = try makeQueue { $0.maximumRunning = 1 }
        // The first item occupies the only slot while the others are added.
        try queue.add(.init(url: server.url("/drip?numbytes=5&duration_ms=400"), to: file("blocker"), id: "blocker"))
        try queue.add(contentsOf: [
            .init(url: server.url("/bytes/10?x=low1"), to: file("low1"), id: "low1", priority: 0),
            .init(url: server.url("/bytes/10?x=high1"), to: file("high1"), id: "high1", priority: 5),
            .init(url: server.url("/bytes/10?x=low2"), to: file("low2"), id: "low2", priority: 0),
            .init(url: server.url("/bytes/10?x=high2"), to: file("high2"), id: "high2", priority: 5),
        ])
        waitForAll(queue)
        let order = server.requests.compactMap { $0.query["x"] }
        XCTAssertEqual(order, ["high1", "high2", "low1", "low2"])
    }

    func testPauseKeepsTheBytesAndResumeContinuesWithRange() throws {
        let queue = try makeQueue()
        let url = server.url("/bytes/2000000?seed=4&chunk=16384&chunk_delay_ms=5")
        try queue.add(.init(url: url, to: file("big"), id: "big"))
        waitUntil("some bytes arrived", timeout: 10) {
            if case .running(let received, _) = queue.item("big")?.state { return received > 100_000 }
            return false
        }
        try queue.pause("big")
        XCTAssertEqual(queue.item("big")?.state, .paused)
        waitUntil("the download stopped", timeout: 5) { self.manager.runningTaskCount == 0 }
        try queue.resume("big")
        waitForAll(queue)
        XCTAssertEqual(queue.item("big")?.state, .completed(file("big")))
        XCTAssertEqual(try Data(contentsOf: file("big")), TestServer.deterministicBytes(count: 2_000_000, seed: 4))
        let range = server.requests.last?.header("Range")
        XCTAssertNotNil(range)
        XCTAssertNotEqual(range, "bytes=0-")
    }

    func testCancelDiscardsTheBytesAndRemoveForgetsTheItemAcrossReopening() async throws {
        var queue: DownloadQueue? = try makeQueue()
        try queue!.add(.init(url: server.url("/bytes/2000000?chunk=16384&chunk_delay_ms=5"), to: file("c"), id: "c"))
        try queue!.add(.init(url: server.url("/bytes/10"), to: file("d"), id: "d"))
        waitUntil("c runs", timeout: 5) {
            if case .running(let r, _) = queue!.item("c")?.state { return r > 0 }; return false
        }
        try queue!.cancel("c")
        XCTAssertEqual(queue!.item("c")?.state, .cancelled)
        waitUntil("d completed", timeout: 10) { queue!.item("d")?.state.isFinished == true }
        try queue!.remove("d")
        XCTAssertNil(queue!.item("d"))
        waitUntil("nothing runs", timeout: 5) { self.manager.runningTaskCount == 0 }
        let parts = queueDirectory.appendingPathComponent("parts").path
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: parts), [])
        // Released only once stopped: pending writes hold the queue until they are done.
        await queue!.stop()
        queue = nil
        // Reopened: the cancelled item is still there, cancelled; the removed one is gone; the file stays.
        let reopened = try makeQueue()
        XCTAssertEqual(reopened.items.map(\.id), ["c"])
        XCTAssertEqual(reopened.item("c")?.state, .cancelled)
        XCTAssertTrue(FileManager.default.fileExists(atPath: file("d").path))
    }

    func testStopCheckpointsRunningItemsAndReopeningContinuesEverything() async throws {
        // Given a queue with a slow item running and others waiting
        var queue: DownloadQueue? = try makeQueue { $0.maximumRunning = 1 }
        try queue!.add(.init(url: server.url("/bytes/3000000?seed=1&chunk=16384&chunk_delay_ms=5"), to: file("slow"), id: "slow"))
        try queue!.add(.init(url: server.url("/bytes/5000?seed=2"), to: file("next"), id: "next"))
        waitUntil("bytes arrived", timeout: 10) {
            if case .running(let received, _) = queue!.item("slow")?.state { return received > 200_000 }
            return false
        }
        // When the queue stops (SIGTERM) and is opened again
        await queue!.stop()
        XCTAssertEqual(manager.runningTaskCount, 0)
        queue = nil
        server.clearRequests()
        let reopened = try makeQueue()
        XCTAssertEqual(reopened.openReport.skipped, [])
        waitForAll(reopened)
        // Then the running item continued from its bytes and the queued one ran
        XCTAssertEqual(try Data(contentsOf: file("slow")), TestServer.deterministicBytes(count: 3_000_000, seed: 1))
        XCTAssertEqual(try Data(contentsOf: file("next")), TestServer.deterministicBytes(count: 5000, seed: 2))
        let first = server.requests.first { $0.path.hasPrefix("/bytes/3000000") }
        XCTAssertNotNil(first?.header("Range"), "the stopped download must continue, not start over")
    }

    func testASecondQueueOnTheSameDirectoryIsRefused() throws {
        let queue = try makeQueue()
        XCTAssertThrowsError(try makeQueue()) { error in
            XCTAssertEqual((error as? CourierError)?.code, .fileSystem)
            XCTAssertTrue("\(error)".contains("in use"), "\(error)")
        }
        withExtendedLifetime(queue) {}
    }

    func testFailuresAreJournaledWithWhetherARetryMightHelp() async throws {
        var queue: DownloadQueue? = try makeQueue()
        try queue!.add(contentsOf: [
            .init(url: server.url("/status/404"), to: file("missing"), id: "missing"),
            .init(url: server.url("/status/503"), to: file("busy"), id: "busy"),
            .init(url: server.url("/bytes/100"), to: file("bad"), id: "bad", sha256: String(repeating: "0", count: 64)),
        ])
        waitForAll(queue!, timeout: 30)
        func failure(_ id: String) -> DownloadQueue.Failure? {
            if case .failed(let failure) = queue!.item(id)?.state { return failure }
            return nil
        }
        XCTAssertEqual(failure("missing")?.status, 404)
        XCTAssertEqual(failure("missing")?.isRetryable, false)
        XCTAssertEqual(failure("busy")?.isRetryable, true)
        XCTAssertEqual(failure("bad")?.code, .integrityFailed)
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("bad").path))
        // Released only once stopped: pending writes hold the queue until they are done.
        await queue!.stop()
        queue = nil
        let reopened = try makeQueue()
        XCTAssertEqual(reopened.item("missing")?.state, .failed(failure404(reopened)))
    }

    private func failure404(_ queue: DownloadQueue) -> DownloadQueue.Failure {
        if case .failed(let failure) = queue.item("missing")?.state { return failure }
        XCTFail("not failed")
        return DownloadQueue.Failure(CourierError(code: .cancelled, message: ""))
    }

    func testBadItemsAreRefusedBeforeAnythingIsJournaled() throws {
        let queue = try makeQueue()
        try queue.add(.init(url: server.url("/bytes/1"), to: file("one"), id: "one"))
        let bad: [DownloadQueue.NewItem] = [
            .init(url: server.url("/bytes/1"), to: file("dup"), id: "one"),
            .init(url: URL(string: "ftp://example.invalid/x")!, to: file("ftp")),
            .init(url: server.url("/bytes/1"), to: file("sha"), sha256: "abc"),
        ]
        for item in bad {
            XCTAssertThrowsError(try queue.add(contentsOf: [.init(url: server.url("/bytes/2"), to: file("ok")), item])) { error in
                XCTAssertEqual((error as? CourierError)?.code, .invalidRequest)
            }
        }
        var big = DownloadQueue.NewItem(url: server.url("/bytes/1"), to: file("meta"))
        big.metadata = Data(count: DownloadQueue.maximumMetadataSize + 1)
        XCTAssertThrowsError(try queue.add(big))
        XCTAssertEqual(queue.items.map(\.id), ["one"], "a refused batch adds nothing")
    }

    struct Tag: Codable, Equatable { let owner: String; let attempt: Int }

    func testMetadataTravelsWithTheItemAcrossReopening() async throws {
        var queue: DownloadQueue? = try makeQueue()
        var new = DownloadQueue.NewItem(url: server.url("/bytes/10"), to: file("m"), id: "m")
        try new.setMetadata(Tag(owner: "ops", attempt: 2))
        try queue!.add(new)
        waitForAll(queue!)
        // Released only once stopped: pending writes hold the queue until they are done.
        await queue!.stop()
        queue = nil
        let reopened = try makeQueue()
        XCTAssertEqual(try reopened.item("m")?.metadata(as: Tag.self), Tag(owner: "ops", attempt: 2))
    }

    func testAddingAnItemIsOneSmallJournalRecordWhateverTheQueueHolds() throws {
        // Given 2,000 finished items
        let queue = try makeQueue {
            $0.maximumRunning = 8; $0.maximumRunningPerHost = 8
        }
        try queue.add(contentsOf: (0..<2000).map { .init(url: server.url("/bytes/1?i=\($0)"), to: file("many/\($0)")) })
        waitForAll(queue, timeout: 120)
        // When one more is added, the journal grows by one record, not by a rewrite
        let before = queue.journal?.byteCount ?? 0
        try queue.add(.init(url: server.url("/status/404"), to: file("one-more")))
        let growth = (queue.journal?.byteCount ?? 0) - before
        XCTAssertGreaterThan(growth, 0)
        XCTAssertLessThan(growth, 2048)
    }
}
