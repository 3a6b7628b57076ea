import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CourierSupport

/// Expiring signed URLs, a file published just before a crash, and compaction.
final class DownloadQueueRefreshTests: CourierTestCase {
    var queueDirectory: URL { directory.appendingPathComponent("queue") }
    func file(_ name: String) -> URL { directory.appendingPathComponent("out/\(name)") }

    func testAnExpiredSignedURLIsRefreshedAndTheDownloadContinuesByRange() throws {
        // Given a signed URL valid for 1 s over a body that takes longer than that
        let server = server!
        let expiring = server.signedURL(bytes: 3_000_000, query: "seed=5&chunk=16384&chunk_delay_ms=8", validFor: 1)
        let refreshes = Locked<[DownloadQueue.RefreshReason]>([])
        var configuration = DownloadQueue.Configuration()
        configuration.refresher = { _, reason in
            refreshes.withLock { $0.append(reason) }
            return URLRequest(url: server.signedURL(bytes: 3_000_000, query: "seed=5", validFor: 60))
        }
        let queue = try DownloadQueue(directory: queueDirectory, manager: manager, configuration: configuration)
        try queue.add(.init(url: expiring, to: file("signed"), id: "signed"))
        // When the first attempt is paused after the URL expired, and resumed
        waitUntil("some bytes arrived", timeout: 10) {
            if case .running(let received, _) = queue.item("signed")?.state { return received > 100_000 }
            return false
        }
        try queue.pause("signed")
        Thread.sleep(forTimeInterval: 1.2)
        try queue.resume("signed")
        waitUntil("finished", timeout: 20) { queue.item("signed")?.state.isFinished == true }
        // Then the 403 led to one refresh, the new URL continued the bytes with Range, the file is exact
        XCTAssertEqual(queue.item("signed")?.state, .completed(file("signed")))
        XCTAssertEqual(try Data(contentsOf: file("signed")), TestServer.deterministicBytes(count: 3_000_000, seed: 5))
        XCTAssertEqual(refreshes.withLock { $0 }, [.expired(status: 403)])
        let statuses = server.requests.map { $0.query["expires"] != nil }
        XCTAssertTrue(statuses.allSatisfy { $0 })
        let last = server.requests.last
        XCTAssertNotNil(last?.header("Range"))
        XCTAssertEqual(last?.header("If-Range"), "\"bytes-3000000-5\"")
        XCTAssertNotEqual(queue.item("signed")?.url, expiring, "the new URL is the item's now")
    }

    func testARefresherThatGivesNothingFailsTheItem() throws {
        var configuration = DownloadQueue.Configuration()
        configuration.refresher = { _, _ in nil }
        let queue = try DownloadQueue(directory: queueDirectory, manager: manager, configuration: configuration)
        try queue.add(.init(url: server.url("/status/403"), to: file("x"), id: "x"))
        waitUntil("finished", timeout: 10) { queue.item("x")?.state.isFinished == true }
        guard case .failed(let failure) = queue.item("x")?.state else { return XCTFail("not failed") }
        XCTAssertTrue(failure.message.contains("refresher"), failure.message)
    }

    func testRefreshingBeforeEachAttemptUsesTheFreshRequest() throws {
        let server = server!
        var configuration = DownloadQueue.Configuration()
        configuration.refreshesBeforeEachAttempt = true
        configuration.refresher = { _, reason in
            XCTAssertEqual(reason, .beforeAttempt)
            return URLRequest(url: server.signedURL(bytes: 1000, validFor: 60))
        }
        let queue = try DownloadQueue(directory: queueDirectory, manager: manager, configuration: configuration)
        try queue.add(.init(url: server.url("/status/403"), to: file("y"), id: "y"))
        waitUntil("finished", timeout: 10) { queue.item("y")?.state.isFinished == true }
        XCTAssertEqual(queue.item("y")?.state, .completed(file("y")))
        XCTAssertEqual(server.requests.count, 1)
    }

    func testAFilePublishedJustBeforeACrashIsRecognisedOnReopening() throws {
        // Given a journal that says the item is running (its `completed` record never made it)
        var queue: DownloadQueue? = try DownloadQueue(directory: queueDirectory, manager: manager)
        try queue!.add(.init(url: server.url("/drip?numbytes=5&duration_ms=3000"), to: file("p"), id: "p", expectedLength: 1000))
        waitUntil("running", timeout: 5) {
            if case .running = queue!.item("p")?.state { return true }; return false
        }
        // the process dies here; the download had published its file
        let partial = queue!.partialFile(for: "p")
        queue!.journal?.close()
        queue = nil
        waitUntil("the download stopped", timeout: 5) { self.manager.runningTaskCount == 0 }
        // The stopped download keeps the bytes it had, writing them behind the network: let that
        // write land before the unlink, or the reopened queue would rightly find a partial file
        // and continue the download instead of judging the file (seen once in a full run).
        settle(partial)
        // Publishing renames the partial file to the destination, and the record goes with it.
        unlink(partial.path)
        unlink(DownloadPolicy.recordFile(for: partial).path)
        try FileManager.default.createDirectory(at: file("p").deletingLastPathComponent(), withIntermediateDirectories: true)
        try TestServer.deterministicBytes(count: 1000).write(to: file("p"))
        // When the queue is opened again
        let reopened = try DownloadQueue(directory: queueDirectory, manager: manager)
        // Then the item is completed with that file, and nothing was fetched again
        XCTAssertEqual(reopened.item("p")?.state, .completed(file("p")))
        XCTAssertEqual(server.requests.count, 1)
    }

    /// Publishing without replacing is `link(2)` then `unlink(2)` of the partial file
    /// (FilePublisher.swift): a kill between the two leaves one file under both names.
    func testAFileKilledBetweenItsLinkAndItsUnlinkIsRecognisedOnReopening() throws {
        // Given a journal that says the item is running (its `completed` record never made it)
        var queue: DownloadQueue? = try DownloadQueue(directory: queueDirectory, manager: manager)
        try queue!.add(.init(url: server.url("/drip?numbytes=5&duration_ms=3000"), to: file("l"), id: "l", expectedLength: 1000))
        waitUntil("running", timeout: 5) {
            if case .running = queue!.item("l")?.state { return true }; return false
        }
        let partial = queue!.partialFile(for: "l")
        let record = DownloadPolicy.recordFile(for: partial)
        queue!.journal?.close()
        queue = nil
        waitUntil("the download stopped", timeout: 5) { self.manager.runningTaskCount == 0 }
        settle(partial)
        // and the process died between publishing's link and its unlink: the complete file has
        // both names, and the record is still beside the partial one
        try TestServer.deterministicBytes(count: 1000).write(to: partial)
        try FileManager.default.createDirectory(at: file("l").deletingLastPathComponent(), withIntermediateDirectories: true)
        XCTAssertEqual(link(partial.path, file("l").path), 0)
        // When the queue is opened again
        let reopened = try DownloadQueue(directory: queueDirectory, manager: manager)
        // Then the item is completed with that file, nothing is fetched again, and the partial
        // file's name and its record are gone (as publishing would have left them)
        XCTAssertEqual(reopened.item("l")?.state, .completed(file("l")))
        XCTAssertEqual(server.requests.count, 1)
        XCTAssertEqual(try Data(contentsOf: file("l")), TestServer.deterministicBytes(count: 1000))
        XCTAssertFalse(FileManager.default.fileExists(atPath: partial.path))
        XCTAssertFalse(FileManager.default.fileExists(atPath: record.path))
    }

    func testAWrongFileFoundOnReopeningFailsTheItemAndIsNotCalledComplete() throws {
        var queue: DownloadQueue? = try DownloadQueue(directory: queueDirectory, manager: manager)
        try queue!.add(.init(url: server.url("/drip?numbytes=5&duration_ms=3000"), to: file("w"), id: "w", expectedLength: 1000))
        waitUntil("running", timeout: 5) {
            if case .running = queue!.item("w")?.state { return true }; return false
        }
        let partial = queue!.partialFile(for: "w")
        queue!.journal?.close()
        queue = nil
        waitUntil("the download stopped", timeout: 5) { self.manager.runningTaskCount == 0 }
        // The stopped download keeps the bytes it had, writing them behind the network: let that
        // write land before the unlink, or the reopened queue would rightly find a partial file
        // and continue the download instead of judging the file (seen once in a full run).
        settle(partial)
        // Publishing renames the partial file to the destination, and the record goes with it.
        unlink(partial.path)
        unlink(DownloadPolicy.recordFile(for: partial).path)
        try FileManager.default.createDirectory(at: file("w").deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(count: 10).write(to: file("w"))
        let reopened = try DownloadQueue(directory: queueDirectory, manager: manager)
        guard case .failed(let failure) = reopened.item("w")?.state else { return XCTFail("\(String(describing: reopened.item("w")))") }
        XCTAssertEqual(failure.code, .integrityFailed)
    }

    func testTheJournalIsCompactedAndStillReplaysEveryItem() async throws {
        var configuration = DownloadQueue.Configuration()
        configuration.maximumRunning = 8
        configuration.maximumRunningPerHost = 8
        var queue: DownloadQueue? = try DownloadQueue(directory: queueDirectory, manager: manager, configuration: configuration)
        // Enough churn to pass 1 MiB: items with large metadata, each journaled several times.
        var new: [DownloadQueue.NewItem] = []
        for index in 0..<300 {
            var item = DownloadQueue.NewItem(url: server.url("/bytes/100?i=\(index)"), to: file("c/\(index)"), id: "c\(index)")
            item.metadata = Data(repeating: UInt8(ascii: "m"), count: 8000)
            new.append(item)
        }
        try queue!.add(contentsOf: new)
        waitUntil("every item finished", timeout: 60) { queue!.items.allSatisfy { $0.state.isFinished } }
        for index in 0..<300 { try queue!.remove("c\(index)") }
        try queue!.add(.init(url: server.url("/status/404"), to: file("last"), id: "last"))
        // About 3.3 MB of records were written; what is left is bounded by the compaction rule.
        XCTAssertLessThan(queue!.journal?.byteCount ?? .max, 1_200_000)
        // Released only once stopped: pending writes hold the queue until they are done.
        await queue!.stop()
        queue = nil
        let reopened = try DownloadQueue(directory: queueDirectory, manager: manager, configuration: configuration)
        XCTAssertEqual(reopened.items.map(\.id), ["last"])
        XCTAssertEqual(reopened.openReport.skipped, [])
    }

    /// Waits (up to 3 s) for a stopped download's partial file to be written, if it is going to be.
    private func settle(_ partial: URL) {
        let deadline = Date().addingTimeInterval(3)
        while !FileManager.default.fileExists(atPath: partial.path), Date() < deadline { usleep(20_000) }
    }
}
