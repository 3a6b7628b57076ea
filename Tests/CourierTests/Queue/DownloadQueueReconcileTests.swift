import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `DownloadQueue.reconcile` over real sockets: a list brought in line with the journal in one
/// durable write — new items fetched, failed ones retried, unlisted ones paused, an item whose
/// checksum changed replaced, a destination that already matches its SHA-256 adopted without a
/// request, and an unproven file in the way refused with nothing changed.
final class DownloadQueueReconcileTests: CourierTestCase {
    private var queueDirectory: URL { directory.appendingPathComponent("queue") }
    private let small = TestServer.deterministicBytes(count: 40_000, seed: 9)
    private let other = TestServer.deterministicBytes(count: 30_000, seed: 10)

    override func setUpWithError() throws {
        try super.setUpWithError()
        server.addFile("small.bin", data: small, etag: "\"s1\"")
        server.addFile("other.bin", data: other, etag: "\"o1\"")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("out"), withIntermediateDirectories: true)
    }

    private func makeQueue() throws -> DownloadQueue {
        try DownloadQueue(directory: queueDirectory, manager: manager)
    }

    private func file(_ name: String) -> URL { directory.appendingPathComponent("out/\(name)") }

    private func sha256(_ data: Data) -> String { SHA256.hexString(SHA256.hash(data)) }

    private func waitForAll(_ queue: DownloadQueue, timeout: TimeInterval = 20) {
        waitUntil("every item finished", timeout: timeout) { queue.items.allSatisfy { $0.state.isFinished } }
    }

    func testNewItemsAreAddedInOneWriteAndFetched() throws {
        // Given an empty queue
        let queue = try makeQueue()

        // When a list of two is reconciled
        let decisions = try queue.reconcile([
            .init(url: server.url("/files/small.bin"), to: file("a"), id: "a", sha256: sha256(small)),
            .init(url: server.url("/files/other.bin"), to: file("b"), id: "b"),
        ])

        // Then both are added and published
        XCTAssertEqual(decisions, [.add(id: "a"), .add(id: "b")])
        waitForAll(queue)
        XCTAssertEqual(try Data(contentsOf: file("a")), small)
        XCTAssertEqual(try Data(contentsOf: file("b")), other)
    }

    func testAFailedItemIsResumedAndAnUnlistedOneIsPausedKeepingItsBytes() throws {
        // Given an item that failed (404), and a slow one running
        let queue = try makeQueue()
        try queue.add(.init(url: server.url("/files/missing.bin"), to: file("a"), id: "a"))
        try queue.add(.init(url: server.url("/bytes/2000000?chunk=16384&chunk_delay_ms=5"), to: file("slow"), id: "slow"))
        waitUntil("a failed", timeout: 10) { queue.item("a")?.state.isFinished ?? false }
        waitUntil("slow has bytes", timeout: 10) {
            if case .running(let received, _) = queue.item("slow")?.state { return received > 50_000 }
            return false
        }
        server.addFile("missing.bin", data: small)

        // When a list naming only the failed item is reconciled
        let decisions = try queue.reconcile([.init(url: server.url("/files/missing.bin"), to: file("a"), id: "a")])

        // Then it is fetched again, and the unlisted one is paused with its bytes kept
        XCTAssertEqual(decisions, [.resume(id: "a"), .pause(id: "slow")])
        XCTAssertEqual(queue.item("slow")?.state, .paused)
        waitUntil("a completed", timeout: 10) { queue.item("a")?.state == .completed(self.file("a")) }
        XCTAssertEqual(try Data(contentsOf: file("a")), small)
        waitUntil("the slow download stopped", timeout: 5) { self.manager.runningTaskCount == 0 }
        let record = try ResumeData.record(beside: queue.partialFile(for: "slow"))
        XCTAssertGreaterThan(record?.bytesOnDisk ?? 0, 0, "the paused item kept its bytes")
    }

    func testAnItemWhoseChecksumChangedIsReplacedAndItsOldBytesAreNotUsed() throws {
        // Given an item paused mid-body for one file
        let queue = try makeQueue()
        let slow = server.url("/bytes/2000000?chunk=16384&chunk_delay_ms=5")
        try queue.add(.init(url: slow, to: file("x"), id: "x", sha256: String(repeating: "0", count: 64)))
        waitUntil("x has bytes", timeout: 10) {
            if case .running(let received, _) = queue.item("x")?.state { return received > 50_000 }
            return false
        }
        try queue.pause("x")
        waitUntil("x stopped", timeout: 5) { self.manager.runningTaskCount == 0 }

        // When the list now names another file for it
        let decisions = try queue.reconcile([.init(url: server.url("/files/small.bin"), to: file("x"), id: "x", sha256: sha256(small))])

        // Then the old item is replaced, and the new file is fetched whole from byte 0
        XCTAssertEqual(decisions, [.replace(id: "x"), .add(id: "x")])
        waitForAll(queue)
        XCTAssertEqual(queue.item("x")?.sha256, sha256(small))
        XCTAssertEqual(try Data(contentsOf: file("x")), small)
        XCTAssertNil(server.requests.last?.header("Range"))
    }

    func testACompletedItemWhoseChecksumChangedIsFetchedAgainOverItsFile() throws {
        // Given an item completed with the first version of a file
        let queue = try makeQueue()
        try queue.reconcile([.init(url: server.url("/files/small.bin"), to: file("x"), id: "x", sha256: sha256(small))])
        waitForAll(queue)
        XCTAssertEqual(try Data(contentsOf: file("x")), small)

        // When the server has a new version and the list names its SHA-256
        server.addFile("small.bin", data: other, etag: "\"s2\"")
        let decisions = try queue.reconcile([.init(url: server.url("/files/small.bin"), to: file("x"), id: "x", sha256: sha256(other))])

        // Then the published file is replaced by the new version, completed under the new SHA-256
        XCTAssertEqual(decisions, [.replace(id: "x"), .replaceFile(id: "x")])
        waitForAll(queue)
        XCTAssertEqual(queue.item("x")?.state, .completed(file("x").standardizedFileURL))
        XCTAssertEqual(queue.item("x")?.sha256, sha256(other))
        XCTAssertEqual(try Data(contentsOf: file("x")), other)
    }

    func testACompletedItemWhoseFileHasTheNewChecksumIsKeptWithoutARequest() throws {
        // Given an item completed with no SHA-256 named
        let queue = try makeQueue()
        try queue.reconcile([.init(url: server.url("/files/small.bin"), to: file("x"), id: "x")])
        waitForAll(queue)
        let requests = server.requests.count

        // When the list now names the SHA-256 its file has
        let decisions = try queue.reconcile([.init(url: server.url("/files/small.bin"), to: file("x"), id: "x", sha256: sha256(small))])

        // Then the file is checked and adopted: completed under that SHA-256, nothing fetched
        XCTAssertEqual(decisions, [.replace(id: "x"), .adopt(id: "x")])
        XCTAssertEqual(queue.item("x")?.state, .completed(file("x").standardizedFileURL))
        XCTAssertEqual(queue.item("x")?.sha256, sha256(small))
        XCTAssertEqual(server.requests.count, requests)
    }

    func testADestinationThatAlreadyMatchesItsChecksumIsAdoptedWithoutARequest() throws {
        // Given the right file already at the destination (a lost journal record, another tool)
        try small.write(to: file("a"))
        var queue: DownloadQueue? = try makeQueue()
        let before = server.requests.count

        // When its line is reconciled
        let decisions = try queue?.reconcile([
            .init(url: server.url("/files/small.bin"), to: file("a"), id: "a", sha256: sha256(small))
        ])

        // Then it is completed at once, durably, and nothing was fetched
        XCTAssertEqual(decisions, [.adopt(id: "a")])
        XCTAssertEqual(queue?.item("a")?.state, .completed(file("a")))
        XCTAssertEqual(server.requests.count, before)
        // The process "ends": its journal (and the directory's lock) is released now, not whenever
        // the last reference to the queue goes (a completion still in flight may hold one).
        queue?.journal?.close()
        queue = nil
        let reopened = try makeQueue()
        XCTAssertEqual(reopened.item("a")?.state, .completed(file("a")))
    }

    func testAnUnprovenFileInTheWayIsRefusedAndNothingChanges() throws {
        // Given a paused item, and someone else's file where a new line wants to save
        let queue = try makeQueue()
        try queue.add(.init(url: server.url("/files/other.bin"), to: file("p"), id: "p"))
        try queue.pause("p")
        try Data("mine".utf8).write(to: file("a"))

        // When a list with both is reconciled
        XCTAssertThrowsError(
            try queue.reconcile([
                .init(url: server.url("/files/other.bin"), to: file("p"), id: "p"),
                .init(url: server.url("/files/small.bin"), to: file("a"), id: "a", sha256: sha256(small)),
            ])
        ) { error in
            // Then it is a typed error naming the file, and nothing was changed or fetched
            XCTAssertEqual((error as? CourierError)?.code, .destinationFailed)
            XCTAssertEqual((error as? CourierError)?.url?.path, file("a").path)
        }
        XCTAssertEqual(queue.item("p")?.state, .paused)
        XCTAssertNil(queue.item("a"))
        XCTAssertEqual(try String(contentsOf: file("a"), encoding: .utf8), "mine")
    }

    func testReplacingExistingFilesFetchesOverAnUnprovenFile() throws {
        // Given someone else's file at the destination
        try Data("mine".utf8).write(to: file("a"))
        let queue = try makeQueue()

        // When the line is reconciled asking to replace existing files
        let decisions = try queue.reconcile(
            [.init(url: server.url("/files/small.bin"), to: file("a"), id: "a")], replacingExistingFiles: true)

        // Then the file is the server's
        XCTAssertEqual(decisions, [.replaceFile(id: "a")])
        waitForAll(queue)
        XCTAssertEqual(try Data(contentsOf: file("a")), small)
    }

    func testAnItemWithoutAnIdIsRefusedBeforeAnythingChanges() throws {
        let queue = try makeQueue()
        XCTAssertThrowsError(try queue.reconcile([.init(url: server.url("/files/small.bin"), to: file("a"))])) { error in
            XCTAssertEqual((error as? CourierError)?.code, .invalidRequest)
        }
        XCTAssertTrue(queue.items.isEmpty)
    }
}
