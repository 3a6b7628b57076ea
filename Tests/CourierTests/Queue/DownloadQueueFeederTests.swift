import XCTest
@testable import Courier
import CourierTestServer
import CourierTestSupport
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// ``DownloadQueueFeeder`` over real sockets and real descriptors: a list read from a pipe or a
/// file is brought into a queue as it comes, never more than the cap unfinished at once, the
/// items no line listed are paused once it ends, and a mistake, a file in the way or a stop end
/// it as they should. Its loop's one decision is tested without any of that.
final class DownloadQueueFeederTests: CourierTestCase {
    private var opened: [Int32] = []
    private var queueDirectory: URL { directory.appendingPathComponent("queue") }
    private var outDirectory: URL { directory.appendingPathComponent("out") }
    private var spoolPath: String { directory.appendingPathComponent("spool").path }

    override func tearDownWithError() throws {
        for descriptor in opened { close(descriptor) }
        try super.tearDownWithError()
    }

    private func makeQueue() throws -> DownloadQueue {
        try DownloadQueue(directory: queueDirectory, manager: manager)
    }

    /// A descriptor reading `text` from a regular file, as `< file` gives one.
    private func fileInput(_ text: String) throws -> Int32 {
        let file = directory.appendingPathComponent("list-\(opened.count).txt")
        try Data(text.utf8).write(to: file)
        let descriptor = open(file.path, O_RDONLY)
        XCTAssertGreaterThanOrEqual(descriptor, 0)
        opened.append(descriptor)
        return descriptor
    }

    private func feeder(_ source: Int32, cap: Int = 8, replacing: Bool = false) throws -> DownloadQueueFeeder {
        let spool = try InputSpool(source: source, name: "list", path: spoolPath)
        return DownloadQueueFeeder(spool: spool, directory: outDirectory, maximumUnfinished: cap, replacingExistingFiles: replacing)
    }

    // MARK: - The loop's decision (pure)

    func testTheLoopReadsBelowTheCapWaitsAtItAndFinishesOnlyOnceTheInputEndedAndNothingIsLeft() {
        let rows: [(inputEnded: Bool, unfinished: Int, limit: Int, step: DownloadQueueFeeder.Step)] = [
            (false, 0, 4, .read(4)),
            (false, 3, 4, .read(1)),
            (false, 4, 4, .wait),
            (false, 5, 4, .wait),
            (true, 2, 4, .wait),
            (true, 0, 4, .finished),
        ]
        for row in rows {
            XCTAssertEqual(
                DownloadQueueFeeder.step(inputEnded: row.inputEnded, unfinished: row.unfinished, limit: row.limit), row.step,
                "ended \(row.inputEnded), \(row.unfinished) unfinished of \(row.limit)")
        }
    }

    func testTheCapKeepsEveryDownloadSlotBusyAnd256MoreWaiting() {
        XCTAssertEqual(DownloadQueueFeeder.maximumUnfinished(parallel: 4), 260)
    }

    // MARK: - Feeding a queue

    func testAFilesLinesAreFetchedAndFeedingFinishesWhenTheyAreDone() throws {
        // Given a list of three downloads, a comment and a blank line
        let source = try fileInput(
            "# the list\n\(server.url("/bytes/1000?seed=1"))\n\n\(server.url("/bytes/2000?seed=2")) out=two\n"
                + "\(server.url("/bytes/3000?seed=3"))\n")
        var feeder = try feeder(source)
        let queue = try makeQueue()

        // When it is fed to the queue
        let ending = try feeder.feed(queue, until: { false })

        // Then every line's file is saved, under its item's stable id
        XCTAssertEqual(ending, .finished)
        XCTAssertEqual(feeder.list.count, 3)
        XCTAssertEqual(queue.items.count, 3)
        XCTAssertTrue(queue.items.allSatisfy { if case .completed = $0.state { true } else { false } })
        XCTAssertEqual(
            try Data(contentsOf: outDirectory.appendingPathComponent("two")), TestServer.deterministicBytes(count: 2000, seed: 2))

        // And the spool gives the entries again in the input's order, for a summary
        var again: [String] = []
        try feeder.forEachEntry { again.append("\($0.line) \($0.name)") }
        XCTAssertEqual(again, ["2 1000", "4 two", "5 3000"])
    }

    func testAPipesLinesAreReadAsTheyComeAndNeverMoreThanTheCapIsUnfinished() throws {
        // Given a pipe with five slow downloads, its writer still open, and a cap of two
        var ends: [Int32] = [-1, -1]
        XCTAssertEqual(pipe(&ends), 0)
        opened += ends
        let lines = (1...5).map { "\(server.url("/bytes/200000?chunk=16384&chunk_delay_ms=15&seed=\($0)")) out=f\($0)\n" }.joined()
        XCTAssertEqual(lines.utf8.withContiguousStorageIfAvailable { write(ends[1], $0.baseAddress, $0.count) }, lines.utf8.count)
        let queue = try makeQueue()
        let source = ends[0]
        let path = spoolPath
        let out = outDirectory
        let endings = Box<String>()

        // When a feeder runs on another thread, and the pipe ends once the first items are in
        let feeding = Thread {
            do {
                let spool = try InputSpool(source: source, name: "pipe", path: path)
                var feeder = DownloadQueueFeeder(spool: spool, directory: out, maximumUnfinished: 2)
                endings.append("\(try feeder.feed(queue, until: { false }))")
            } catch {
                endings.append("problem: \(error)")
            }
        }
        feeding.start()
        waitUntil("the first two are in the queue") { queue.items.count >= 2 }
        close(ends[1])
        opened.removeAll { $0 == ends[1] }
        var most = 0
        let deadline = Date().addingTimeInterval(30)
        while endings.count == 0, Date() < deadline {
            most = max(most, queue.items.filter { !$0.state.isFinished }.count)
            Thread.sleep(forTimeInterval: 0.002)
        }

        // Then all five are fetched, never more than two unfinished at once
        XCTAssertEqual(endings.all, ["finished"])
        XCTAssertEqual(most, 2)
        XCTAssertEqual(queue.items.count, 5)
        XCTAssertTrue(queue.items.allSatisfy { if case .completed = $0.state { true } else { false } })
    }

    func testOnceTheInputEndsAnEarlierRunsUnlistedItemIsPausedKeepingItsBytes() throws {
        // Given a queue running an item that the new list does not name
        let queue = try makeQueue()
        try queue.add(
            .init(url: server.url("/bytes/4000000?chunk=16384&chunk_delay_ms=5"), to: outDirectory.appendingPathComponent("old"), id: "old")
        )
        waitUntil("old has bytes") {
            if case .running(let received, _) = queue.item("old")?.state { return received > 20_000 }
            return false
        }
        var feeder = try feeder(try fileInput("\(server.url("/bytes/1000?seed=7"))\n"))

        // When the list is fed
        XCTAssertEqual(try feeder.feed(queue, until: { false }), .finished)

        // Then the old item is paused, not removed, and the listed one done
        XCTAssertEqual(queue.items.count, 2)
        guard case .paused = queue.item("old")?.state else { return XCTFail("old is \(String(describing: queue.item("old")?.state))") }
    }

    func testAMistakeInTheFirstLinesIsFoundBeforeAnyQueueIsTouched() throws {
        // Given a list whose second line is not a URL
        var feeder = try feeder(try fileInput("\(server.url("/bytes/10"))\nftp://h/x\n"))

        // When its first lines are read
        XCTAssertThrowsError(try feeder.readFirst(until: { false })) { error in
            // Then the mistake names line 2
            guard case .mistake(let mistake) = error as? DownloadQueueFeeder.Problem else { return XCTFail("\(error)") }
            XCTAssertEqual(mistake.line, 2)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: queueDirectory.path))
        XCTAssertTrue(server.requests.isEmpty, "nothing was fetched")
    }

    func testReadingAllTakesEveryLineInOrderWithoutTouchingAQueueAndAStopComesFirst() throws {
        // Given a finished list of two downloads
        let list = "\(server.url("/bytes/10")) out=one\n\(server.url("/bytes/20")) out=two\n"
        var feeder = try feeder(try fileInput(list))

        // When it is read whole
        let entries = try XCTUnwrap(try feeder.readAll(until: { false }))

        // Then both lines come, in order, and nothing was fetched or opened
        XCTAssertEqual(entries.map(\.name), ["one", "two"])
        XCTAssertEqual(entries.map(\.line), [1, 2])
        XCTAssertTrue(server.requests.isEmpty)
        XCTAssertFalse(FileManager.default.fileExists(atPath: queueDirectory.path))
        // And a stop asked for before reading wins over the input
        var stopped = try self.feeder(try fileInput(list))
        XCTAssertNil(try stopped.readAll(until: { true }))
    }

    func testReadingAllFindsAMistakeInAnyLine() throws {
        // Given a list whose third line is not a URL
        var feeder = try feeder(try fileInput("\(server.url("/bytes/10"))\n\(server.url("/bytes/20"))\nftp://h/x\n"))

        // When it is read whole, then the mistake names line 3 and no entry is returned
        XCTAssertThrowsError(try feeder.readAll(until: { false })) { error in
            guard case .mistake(let mistake) = error as? DownloadQueueFeeder.Problem else { return XCTFail("\(error)") }
            XCTAssertEqual(mistake.line, 3)
        }
    }

    func testAFileInALinesWayIsRefusedNamingTheLineUnlessReplacingWasAsked() throws {
        // Given a file already where the second line saves, unproven (no sha256=)
        try FileManager.default.createDirectory(at: outDirectory, withIntermediateDirectories: true)
        try Data("mine".utf8).write(to: outDirectory.appendingPathComponent("taken"))
        let list = "\(server.url("/bytes/10?seed=1"))\n\(server.url("/bytes/20?seed=2")) out=taken\n"
        var feeder = try feeder(try fileInput(list))
        let queue = try makeQueue()

        // When it is fed, then the line is named and the file left alone
        XCTAssertThrowsError(try feeder.feed(queue, until: { false })) { error in
            guard case .destinationExists(let entry, let cause) = error as? DownloadQueueFeeder.Problem else {
                return XCTFail("\(error)")
            }
            XCTAssertEqual(entry.line, 2)
            XCTAssertEqual(cause.code, .destinationFailed)
        }
        XCTAssertEqual(try Data(contentsOf: outDirectory.appendingPathComponent("taken")), Data("mine".utf8))

        // And with replacing asked, a new run of the same list fetches over it
        var replacing = try self.feeder(try fileInput(list), replacing: true)
        XCTAssertEqual(try replacing.feed(queue, until: { false }), .finished)
        XCTAssertEqual(
            try Data(contentsOf: outDirectory.appendingPathComponent("taken")), TestServer.deterministicBytes(count: 20, seed: 2))
    }

    func testStoppingEndsFeedingPromptlyAndLeavesTheQueueAsItIs() throws {
        // Given a pipe with one slow download and no end, being fed
        var ends: [Int32] = [-1, -1]
        XCTAssertEqual(pipe(&ends), 0)
        opened += ends
        let line = "\(server.url("/bytes/4000000?chunk=16384&chunk_delay_ms=5"))\n"
        XCTAssertEqual(line.utf8.withContiguousStorageIfAvailable { write(ends[1], $0.baseAddress, $0.count) }, line.utf8.count)
        var feeder = try feeder(ends[0])
        let queue = try makeQueue()
        let stop = Counter()
        let wake = feeder.wake
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) {
            stop.increment()
            wake()
        }

        // When it is told to stop
        let started = Date()
        let ending = try feeder.feed(queue, until: { stop.count > 0 })

        // Then it ends within a wait, its item still running for the caller to stop
        XCTAssertEqual(ending, .stopped)
        XCTAssertLessThan(Date().timeIntervalSince(started), 1)
        XCTAssertEqual(queue.items.count, 1)
        XCTAssertFalse(queue.items[0].state.isFinished)
    }
}
