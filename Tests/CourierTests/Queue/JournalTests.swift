import XCTest
@testable import Courier

/// The journal used as intended: records round-trip in order, concurrent appenders share syncs,
/// files are created private, the directory lock keeps a second opener out, compaction replaces
/// the log. Damaged files are JournalCorruptionTests; crashes are JournalCrashTests.
final class JournalTests: JournalTestCase {
    // MARK: - Round trips

    func testRecordsAppendedComeBackInOrderAfterReopening() throws {
        let records = [Data("first".utf8), Data(), Data(repeating: 0xFF, count: Journal.maximumRecordSize), Data("last".utf8)]
        try write(records)
        let (journal, replayed, report) = try open()
        defer { journal.close() }
        XCTAssertEqual(replayed, records)
        XCTAssertEqual(report, Journal.Report(records: 4))
    }

    func testManyRecordsOfVariedSizesRoundTripThroughTheReplayWindow() throws {
        // Some records larger than the 64 KiB replay window, so it refills mid-record and grows.
        var records = sampleRecords(3_000)
        for index in stride(from: 100, to: 3_000, by: 700) { records[index] = Data(repeating: UInt8(index % 256), count: 100_000 + index) }
        let (journal, _, _) = try open()
        try journal.append(contentsOf: Array(records[0..<1_000]))
        for record in records[1_000...] { try journal.append(record) }
        journal.close()
        let (reopened, replayed, report) = try open()
        defer { reopened.close() }
        XCTAssertEqual(replayed, records)
        XCTAssertEqual(report.records, 3_000)
        XCTAssertEqual(report.skipped, [])
    }

    func testAppendingAfterReopeningContinuesTheSameLog() throws {
        try write(sampleRecords(10, tag: "a"))
        try write(sampleRecords(10, tag: "b"))
        let (journal, replayed, _) = try open()
        defer { journal.close() }
        XCTAssertEqual(replayed, sampleRecords(10, tag: "a") + sampleRecords(10, tag: "b"))
    }

    func testEightConcurrentAppendersShareSyncsAndKeepEachThreadsOrder() throws {
        let (journal, _, _) = try open()
        let threads = 8
        let perThread = 500
        onThreads(threads) { thread in
            for index in 0..<perThread {
                JournalTestCase.expectNoError("append") { () throws(CourierError) in try journal.append(Data("\(thread) \(index)".utf8)) }
            }
        }
        let syncs = journal.syncCount
        journal.close()
        // Group commit: while one appender syncs, the others' records pile up for the next sync.
        XCTAssertLessThan(syncs, threads * perThread)
        let (reopened, replayed, report) = try open()
        defer { reopened.close() }
        XCTAssertEqual(report.records, threads * perThread)
        var next = [Int](repeating: 0, count: threads)
        for record in replayed {
            let fields = String(decoding: record, as: UTF8.self).split(separator: " ").compactMap { Int($0) }
            XCTAssertEqual(fields.count, 2)
            guard fields.count == 2 else { continue }
            XCTAssertEqual(fields[1], next[fields[0]], "thread \(fields[0])'s records out of order")
            next[fields[0]] = fields[1] + 1
        }
        XCTAssertEqual(next, [Int](repeating: perThread, count: threads))
    }

    func testAppendingSeveralRecordsAtOnceTakesOneSync() throws {
        let (journal, _, _) = try open()
        defer { journal.close() }
        try journal.append(contentsOf: sampleRecords(100))
        XCTAssertEqual(journal.syncCount, 1)
        try journal.append(contentsOf: [])
        XCTAssertEqual(journal.syncCount, 1)
    }

    func testARecordOverOneMebibyteIsRefusedAndNothingIsWritten() throws {
        let (journal, _, _) = try open()
        let before = journal.byteCount
        XCTAssertThrowsError(try journal.append(Data(count: Journal.maximumRecordSize + 1))) { error in
            XCTAssertEqual((error as? CourierError)?.code, .fileSystem)
            XCTAssertTrue((error as? CourierError)?.message.contains("at most 1048576 bytes") == true, "\(error)")
        }
        // One good and one too big: neither is written.
        XCTAssertThrowsError(try journal.append(contentsOf: [Data("ok".utf8), Data(count: Journal.maximumRecordSize + 1)]))
        XCTAssertEqual(journal.byteCount, before)
        journal.close()
        let (reopened, replayed, _) = try open()
        defer { reopened.close() }
        XCTAssertEqual(replayed, [])
    }

    func testByteCountIsTheFileSize() throws {
        let (journal, _, _) = try open()
        defer { journal.close() }
        XCTAssertEqual(journal.byteCount, 16)
        try journal.append(Data("12345".utf8))
        XCTAssertEqual(journal.byteCount, 16 + 8 + 5)
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: journalFile.path)[.size] as? Int64, 29)
    }

    // MARK: - Files

    func testAMissingJournalStartsEmptyInADirectoryAndFilesOnlyTheOwnerCanRead() throws {
        let (journal, records, report) = try open()
        defer { journal.close() }
        XCTAssertEqual(records, [])
        XCTAssertEqual(report, Journal.Report())
        XCTAssertEqual(try mode(of: queue), 0o700)
        XCTAssertEqual(try mode(of: journalFile), 0o600)
        XCTAssertEqual(try mode(of: lockFile), 0o600)
        XCTAssertEqual(try journalBytes(), [0x43, 0x52, 0x4A, 0x00, 0x00, 0x01] + [UInt8](repeating: 0, count: 10))
        XCTAssertEqual(try queueListing(), ["journal", "lock"])
        XCTAssertEqual(try String(contentsOf: lockFile, encoding: .utf8), "\(getpid())\n")
    }

    func testAJournalFileRemovedWhileClosedIsRecreatedEmpty() throws {
        try write(sampleRecords(3))
        try FileManager.default.removeItem(at: journalFile)
        let (journal, records, _) = try open()
        defer { journal.close() }
        XCTAssertEqual(records, [])
    }

    func testAMissingParentDirectoryIsAnErrorNotCreated() throws {
        let deep = root.appendingPathComponent("missing/queue")
        XCTAssertThrowsError(try Journal.open(directory: deep)) { error in
            XCTAssertTrue((error as? CourierError)?.message.contains("cannot create the queue directory") == true, "\(error)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: root.appendingPathComponent("missing").path))
    }

    func testAFileWhereTheDirectoryShouldBeIsRefused() throws {
        try Data("x".utf8).write(to: queue)
        XCTAssertTrue(openError()?.message.contains("is not a directory") == true)
    }

    func testASymlinkedJournalIsRefusedAndItsTargetLeftAlone() throws {
        let target = root.appendingPathComponent("elsewhere")
        try Data("not a journal".utf8).write(to: target)
        try FileManager.default.createDirectory(at: queue, withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(at: journalFile, withDestinationURL: target)
        let error = openError()
        XCTAssertTrue(error?.message.contains("is a symbolic link") == true, "\(String(describing: error))")
        XCTAssertEqual(try String(contentsOf: target, encoding: .utf8), "not a journal")
    }

    func testADanglingSymlinkAtTheJournalIsRefusedAndNothingIsCreatedThroughIt() throws {
        let target = root.appendingPathComponent("would-be-created")
        try FileManager.default.createDirectory(at: queue, withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(at: journalFile, withDestinationURL: target)
        XCTAssertTrue(openError()?.message.contains("is a symbolic link") == true)
        XCTAssertFalse(FileManager.default.fileExists(atPath: target.path))
    }

    func testASymlinkedLockFileIsRefused() throws {
        let target = root.appendingPathComponent("elsewhere")
        try Data("1\n".utf8).write(to: target)
        try FileManager.default.createDirectory(at: queue, withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(at: lockFile, withDestinationURL: target)
        XCTAssertTrue(openError()?.message.contains("is a symbolic link") == true)
        XCTAssertEqual(try String(contentsOf: target, encoding: .utf8), "1\n")
    }

    func testAHardLinkedJournalIsRefusedAndItsOtherNameLeftAlone() throws {
        try write(sampleRecords(2))
        let other = root.appendingPathComponent("other-name")
        try FileManager.default.linkItem(at: journalFile, to: other)
        let before = try Data(contentsOf: other)
        XCTAssertTrue(openError()?.message.contains("not a regular file of this user with one link") == true)
        XCTAssertEqual(try Data(contentsOf: other), before)
    }

    func testADirectoryAtTheJournalsNameIsRefused() throws {
        try FileManager.default.createDirectory(at: journalFile, withIntermediateDirectories: true)
        XCTAssertNotNil(openError())
    }

    // MARK: - The directory lock

    func testASecondOpenOfTheSameDirectoryGetsAClearErrorUntilTheFirstCloses() throws {
        let (journal, _, _) = try open()
        let error = openError()
        XCTAssertEqual(error?.code, .fileSystem)
        XCTAssertEqual(error?.message, "the queue directory \(queue.path) is in use by another process (pid \(getpid()))")
        journal.close()
        let (again, _, _) = try open()
        again.close()
    }

    func testReleasingAJournalReleasesTheLock() throws {
        do {
            let (journal, _, _) = try open()
            try journal.append(Data("kept".utf8))
        }
        let (journal, records, _) = try open()
        defer { journal.close() }
        XCTAssertEqual(records, [Data("kept".utf8)])
    }

    func testALockFileLeftByADeadProcessDoesNotKeepAnyoneOut() throws {
        try FileManager.default.createDirectory(at: queue, withIntermediateDirectories: false)
        XCTAssertTrue(
            FileManager.default.createFile(atPath: lockFile.path, contents: Data("999999\n".utf8), attributes: [.posixPermissions: 0o600]))
        let (journal, _, _) = try open()
        journal.close()
    }

    func testClosingTwiceIsHarmlessAndAppendingAfterCloseThrows() throws {
        let (journal, _, _) = try open()
        journal.close()
        journal.close()
        XCTAssertThrowsError(try journal.append(Data("late".utf8))) { error in
            XCTAssertTrue((error as? CourierError)?.message.contains("is closed") == true)
        }
        XCTAssertThrowsError(try journal.compact(to: []))
    }

    // MARK: - Compaction

    func testCompactionReplacesTheLogWithTheSnapshotAndAppendsContinueAfterIt() throws {
        let (journal, _, _) = try open()
        try journal.append(contentsOf: sampleRecords(200))
        let big = journal.byteCount
        let snapshot = [Data("state 1".utf8), Data("state 2".utf8)]
        try journal.compact(to: snapshot)
        XCTAssertLessThan(journal.byteCount, big)
        XCTAssertEqual(journal.byteCount, 16 + 2 * (8 + 7))
        try journal.append(Data("after".utf8))
        journal.close()
        let (reopened, records, report) = try open()
        defer { reopened.close() }
        XCTAssertEqual(records, snapshot + [Data("after".utf8)])
        XCTAssertEqual(report.skipped, [])
        XCTAssertEqual(try queueListing(), ["journal", "lock"])
        XCTAssertEqual(try mode(of: journalFile), 0o600)
    }

    func testCompactingToNothingLeavesAnEmptyValidJournal() throws {
        let (journal, _, _) = try open()
        try journal.append(contentsOf: sampleRecords(5))
        try journal.compact(to: [])
        XCTAssertEqual(journal.byteCount, 16)
        journal.close()
        let (reopened, records, _) = try open()
        defer { reopened.close() }
        XCTAssertEqual(records, [])
    }

    func testALargeSnapshotIsWrittenInSlicesAndReadBackWhole() throws {
        let snapshot = (0..<40).map { Data(repeating: UInt8($0), count: 100_000 + $0) }
        let (journal, _, _) = try open()
        try journal.compact(to: snapshot)
        journal.close()
        let (reopened, records, _) = try open()
        defer { reopened.close() }
        XCTAssertEqual(records, snapshot)
    }

    func testAppendsRacingCompactionsLandInTheOldLogOrWholeAndInOrderInTheNew() throws {
        let (journal, _, _) = try open()
        let snapshot = [Data("snapshot".utf8)]
        onThreads(5) { thread in
            guard thread < 4 else {
                // Each compaction drops what was appended before it: the caller's snapshot stands for it.
                for _ in 0..<10 {
                    JournalTestCase.expectNoError("compact") { () throws(CourierError) in try journal.compact(to: snapshot) }
                    usleep(1_000)
                }
                return
            }
            for index in 0..<200 {
                JournalTestCase.expectNoError("append") { () throws(CourierError) in try journal.append(Data("\(thread) \(index)".utf8)) }
            }
        }
        journal.close()
        let (reopened, records, report) = try open()
        defer { reopened.close() }
        XCTAssertEqual(report.skipped, [])
        XCTAssertEqual(records.first, snapshot[0])
        // Whatever followed the last compaction: for each thread a run of its records ending with its
        // last one, in order, no gaps.
        var indices: [Int: [Int]] = [:]
        for record in records.dropFirst() {
            let fields = String(decoding: record, as: UTF8.self).split(separator: " ").compactMap { Int($0) }
            XCTAssertEqual(fields.count, 2)
            if fields.count == 2 { indices[fields[0], default: []].append(fields[1]) }
        }
        for (thread, list) in indices {
            XCTAssertEqual(list, Array((list.first ?? 0)..<200), "thread \(thread)")
        }
    }

    func testASnapshotLeftByACompactionThatDiedBeforeItsRenameIsIgnoredAndRemoved() throws {
        try write(sampleRecords(3))
        let stale = AtomicFile.temporaryFile(for: journalFile)
        try Data("half a snapshot".utf8).write(to: stale)
        let (journal, records, _) = try open()
        defer { journal.close() }
        XCTAssertEqual(records, sampleRecords(3))
        XCTAssertFalse(FileManager.default.fileExists(atPath: stale.path))
    }

    func testASnapshotWithARecordOverTheMaximumIsRefusedAndTheOldLogKept() throws {
        let (journal, _, _) = try open()
        try journal.append(Data("old".utf8))
        XCTAssertThrowsError(try journal.compact(to: [Data(count: Journal.maximumRecordSize + 1)]))
        try journal.append(Data("still".utf8))
        journal.close()
        let (reopened, records, _) = try open()
        defer { reopened.close() }
        XCTAssertEqual(records, [Data("old".utf8), Data("still".utf8)])
    }

    // MARK: - The test hook

    func testAMisspeltKillPointIsAnErrorRatherThanIgnored() throws {
        setenv(Journal.KillPoint.variable, "3:after-wirte", 1)
        defer { unsetenv(Journal.KillPoint.variable) }
        XCTAssertTrue(openError()?.message.contains("is not <n>:<phase>") == true)
    }
}
