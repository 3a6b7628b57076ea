import CourierSupport
import XCTest
@testable import Courier

/// ``JournalQueueStore``: the store protocol's rules on the queue's own journal, with the clock
/// passed in (no sleeping), and the journal's bytes as ``DownloadQueue`` writes and reads them.
final class JournalQueueStoreTests: JournalTestCase {
    /// The time the store sees; tests move it.
    let now = Locked(Date(timeIntervalSince1970: 1_000_000))

    func openStore() throws -> JournalQueueStore {
        let now = self.now
        return try JournalQueueStore(directory: queue, clock: { now.withLock { $0 } })
    }

    func advance(_ seconds: TimeInterval) { now.withLock { $0 += seconds } }

    func newItem(_ id: String, host: String = "a.example", priority: Int = 0, split: DownloadSplit = .off) -> DownloadQueue.NewItem {
        DownloadQueue.NewItem(
            url: URL(string: "https://\(host)/\(id)")!, to: root.appendingPathComponent("out/\(id)"), id: id, priority: priority,
            split: split)
    }

    func testLeasesFollowPriorityThenTheOrderOfAddingUnderThePerHostCap() throws {
        let store = try openStore()
        try store.add([
            newItem("a-low", priority: 0), newItem("a-high", priority: 9), newItem("a-mid", priority: 1),
            newItem("b-low", host: "b.example"),
        ])
        var order: [String] = []
        while let lease = try store.lease(worker: "w", duration: 60, maximumPerHost: 2) { order.append(lease.item.id) }
        XCTAssertEqual(order, ["a-high", "a-mid", "b-low"], "two leases on a.example at most")
    }

    func testASplitItemsLeaseHoldsItsConnectionsAndTheCapCountsThem() throws {
        // Given a cap of 4 connections per host, and items split 3 and 4, then two unsplit ones
        let store = try openStore()
        try store.add([
            newItem("three", split: .connections(3)), newItem("four", split: .automatic(upTo: 4)), newItem("one"), newItem("two"),
            newItem("elsewhere", host: "b.example", split: .connections(8)),
        ])
        // When leases are taken while the host has room
        let three = try XCTUnwrap(try store.lease(worker: "A", duration: 10, maximumPerHost: 4))
        let four = try XCTUnwrap(try store.lease(worker: "B", duration: 10, maximumPerHost: 4))
        let elsewhere = try XCTUnwrap(try store.lease(worker: "B", duration: 10, maximumPerHost: 4))
        // Then the first holds its 3, the second only the one left (its split capped to it), and
        // the host then has none free: the unsplit items wait; the other host grants its own 4
        XCTAssertEqual([three.item.id, four.item.id, elsewhere.item.id], ["three", "four", "elsewhere"])
        XCTAssertEqual([three.connections, four.connections, elsewhere.connections], [3, 1, 4])
        XCTAssertEqual([three.split, four.split, elsewhere.split], [.connections(3), .off, .connections(4)])
        XCTAssertNil(try store.lease(worker: "C", duration: 10, maximumPerHost: 4), "4 of 4 connections held on a.example")
        // When the split lease ends, its three connections are free again
        try store.complete(three, file: three.item.destination)
        let one = try XCTUnwrap(try store.lease(worker: "C", duration: 10, maximumPerHost: 4))
        let two = try XCTUnwrap(try store.lease(worker: "C", duration: 10, maximumPerHost: 4))
        XCTAssertEqual([one.item.id, two.item.id, "\(one.connections + two.connections)"], ["one", "two", "2"])
        // And an expired lease's connections count no more: its item is taken over with a new grant
        advance(11)
        let again = try XCTUnwrap(try store.lease(worker: "D", duration: 10, maximumPerHost: 4))
        XCTAssertEqual(again.item.id, "four")
        XCTAssertEqual(again.connections, 4, "every lease on a.example expired: the whole split is free")
    }

    func testAddMissingAddsOnlyTheIdsTheStoreDoesNotHold() throws {
        // Given a store that holds one item of the list, leased and completed
        let store = try openStore()
        try store.add([newItem("a")])
        let lease = try XCTUnwrap(try store.lease(worker: "w", duration: 60, maximumPerHost: 1))
        try store.complete(lease, file: root.appendingPathComponent("out/a"))
        // When the whole list is added as missing, twice
        let added = try store.addMissing([newItem("a"), newItem("b"), newItem("c")])
        let again = try store.addMissing([newItem("a"), newItem("b"), newItem("c")])
        // Then only b and c were added, once, and a stays completed
        XCTAssertEqual(added.map(\.id), ["b", "c"])
        XCTAssertEqual(again.map(\.id), [])
        XCTAssertEqual(try store.items().map(\.id), ["a", "b", "c"])
        XCTAssertEqual(try store.items().first?.state.isFinished, true)
    }

    func testWaitingUntilFinishedReturnsEachItemsEndWhicheverWorkerEndedItAndAStopComesFirst() throws {
        // Given a list of three items in the store, one of them not waited for
        let store = try openStore()
        try store.add([newItem("a"), newItem("b"), newItem("other")])
        // When nothing is finished yet and a stop is asked for, then the wait ends without states
        XCTAssertNil(store.waitUntilFinished(["a", "b"], pollingEvery: 0.01, until: { true }))
        // When another worker completes one and fails the other while this one waits
        let a = try XCTUnwrap(try store.lease(worker: "elsewhere", duration: 60, maximumPerHost: 2))
        try store.complete(a, file: root.appendingPathComponent("out/a"))
        let b = try XCTUnwrap(try store.lease(worker: "elsewhere", duration: 60, maximumPerHost: 2))
        let failing = Thread {
            Thread.sleep(forTimeInterval: 0.05)
            try? store.fail(b, DownloadQueue.Failure(CourierError(code: .integrityFailed, message: "wrong SHA-256")))
        }
        failing.start()
        let states = try XCTUnwrap(store.waitUntilFinished(["a", "b"], pollingEvery: 0.01, until: { false }))
        // Then both ends are returned by id, and the item not waited for is not among them
        XCTAssertEqual(Set(states.keys), ["a", "b"])
        guard case .completed(let file) = states["a"] else { return XCTFail("a is \(String(describing: states["a"]))") }
        XCTAssertEqual(file.lastPathComponent, "a")
        guard case .failed(let failure) = states["b"] else { return XCTFail("b is \(String(describing: states["b"]))") }
        XCTAssertEqual(failure.code, .integrityFailed)
    }

    func testAddMissingFromWorkersStartingTogetherAddsEachItemOnce() throws {
        // Given one store and eight workers adding the same list at once
        let store = try openStore()
        let list = (0..<50).map { newItem("item-\($0)") }
        let failures = Locked<[CourierError]>([])
        // When
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            do throws(CourierError) {
                try store.addMissing(list)
            } catch {
                failures.withLock { $0.append(error) }
            }
        }
        // Then none was refused, and the list is stored once, in its order
        XCTAssertEqual(failures.current.map(\.message), [])
        XCTAssertEqual(try store.items().map(\.id), list.map { $0.id! })
    }

    func testARenewedLeaseHoldsUntilItsNewExpiryThenIsTakenOver() throws {
        let store = try openStore()
        try store.add([newItem("x")])
        let first = try XCTUnwrap(try store.lease(worker: "A", duration: 10, maximumPerHost: 1))
        XCTAssertNil(try store.lease(worker: "B", duration: 10, maximumPerHost: 1), "held")
        advance(8)
        let renewed = try store.renew(first, duration: 10)
        advance(5)
        XCTAssertNil(try store.lease(worker: "B", duration: 10, maximumPerHost: 1), "renewed until 18, now 13")
        advance(6)
        let taken = try XCTUnwrap(try store.lease(worker: "B", duration: 10, maximumPerHost: 1), "expired at 18, now 19")
        XCTAssertEqual(taken.token, renewed.token + 1)
    }

    func testThePublishingMarkIsFencedAndReadByTheNextLease() throws {
        let store = try openStore()
        try store.add([newItem("x")])
        let first = try XCTUnwrap(try store.lease(worker: "A", duration: 10, maximumPerHost: 1))
        XCTAssertNil(try store.publishingFile(of: first))
        try store.beginPublishing(first, file: first.item.destination)
        advance(11)
        let second = try XCTUnwrap(try store.lease(worker: "B", duration: 10, maximumPerHost: 1))
        XCTAssertEqual(try store.publishingFile(of: second), first.item.destination.standardizedFileURL)
        XCTAssertThrowsError(try store.beginPublishing(first, file: first.item.destination)) {
            XCTAssertEqual(($0 as? CourierError)?.code, .leaseLost)
        }
        try store.release(second)
        let third = try XCTUnwrap(try store.lease(worker: "B", duration: 10, maximumPerHost: 1))
        XCTAssertNil(try store.publishingFile(of: third), "a release ends the mark")
    }

    func testFencingAfterATakeover() throws {
        let store = try openStore()
        try store.add([newItem("x")])
        let first = try XCTUnwrap(try store.lease(worker: "A", duration: 10, maximumPerHost: 1))
        try store.recordProgress(first, received: 100, resumeRecord: Data([1, 2, 3]))
        advance(11)
        let second = try XCTUnwrap(try store.lease(worker: "B", duration: 10, maximumPerHost: 1))
        XCTAssertEqual(second.item.id, "x")
        XCTAssertGreaterThan(second.token, first.token)
        XCTAssertEqual(second.received, 100)
        XCTAssertEqual(second.resumeRecord, Data([1, 2, 3]))
        for attempt in [
            { try store.complete(first, file: first.item.destination) }, { try store.release(first) },
            { _ = try store.renew(first, duration: 10) },
        ] as [() throws -> Void] {
            XCTAssertThrowsError(try attempt()) { XCTAssertEqual(($0 as? CourierError)?.code, .leaseLost) }
        }
        try store.complete(second, file: second.item.destination)
        XCTAssertEqual(try store.items().first?.state, .completed(second.item.destination))
    }

    func testAReleasedItemIsLeasedAgainAndAnAddIsAllOrNone() throws {
        let store = try openStore()
        try store.add([newItem("x")])
        XCTAssertThrowsError(try store.add([newItem("y"), newItem("x")])) { XCTAssertEqual(($0 as? CourierError)?.code, .invalidRequest) }
        XCTAssertEqual(try store.items().map(\.id), ["x"])
        let lease = try XCTUnwrap(try store.lease(worker: "A", duration: 10, maximumPerHost: 1))
        try store.release(lease)
        XCTAssertEqual(try store.lease(worker: "B", duration: 10, maximumPerHost: 1)?.item.id, "x")
    }

    func testTheJournalHoldsTheQueuesOwnRecordsAndTheQueueReadsThem() throws {
        // Given a store that adds three items, completes one, fails one and leaves one leased
        let store = try openStore()
        let added = try store.add([newItem("done"), newItem("bad"), newItem("left")])
        let done = try XCTUnwrap(try store.lease(worker: "A", duration: 10, maximumPerHost: 3))
        let bad = try XCTUnwrap(try store.lease(worker: "A", duration: 10, maximumPerHost: 3))
        _ = try XCTUnwrap(try store.lease(worker: "A", duration: 10, maximumPerHost: 3))
        try store.complete(done, file: done.item.destination)
        let failure = DownloadQueue.Failure(CourierError(code: .integrityFailed, message: "wrong SHA-256"))
        try store.fail(bad, failure)
        store.close()
        // Then the journal's bytes are the header and exactly the records the queue writes (compared
        // decoded: JSONEncoder's key order is not stable between runs, for the queue's writes too)
        let destination = done.item.destination
        let records: [DownloadQueue.Record] =
            added.map { .add($0) } + [
                .state(id: "done", state: .running(received: 0, total: nil)), .state(id: "bad", state: .running(received: 0, total: nil)),
                .state(id: "left", state: .running(received: 0, total: nil)), .state(id: "done", state: .completed(destination)),
                .state(id: "bad", state: .failed(failure)),
            ]
        let bytes = try Data(contentsOf: journalFile)
        XCTAssertEqual(bytes.prefix(Journal.headerSize), Data(Journal.magic + [0, 1] + [UInt8](repeating: 0, count: 10)))
        let (journal, payloads, report) = try open()
        journal.close()
        XCTAssertEqual(report, Journal.Report(records: records.count))
        XCTAssertEqual(payloads.map { try? JSONDecoder().decode(DownloadQueue.Record.self, from: $0) }, records)
        XCTAssertEqual(bytes.count, Journal.headerSize + (try Journal.frames(of: records.map { $0.encoded() })).count)
        // And the queue reopens it: completed and failed as they were, the leased one queued again
        let reopened = try openStore()
        XCTAssertEqual(try reopened.items().map(\.state), [.completed(destination), .failed(failure), .queued])
        XCTAssertEqual(try reopened.lease(worker: "B", duration: 10, maximumPerHost: 3)?.item.id, "left")
    }

    // MARK: - Compaction

    func testAStoreWhoseJournalPassesItsThresholdCompactsAndKeepsEveryItemsStateAndLease() throws {
        // Given a store whose journal compacts past 4 KiB (1 MiB by default), with ten items
        let store = try openStore()
        store.inner.withLock { $0.queue.compactionFloor = 4096 }
        try store.add((0..<10).map { newItem("i\($0)") })
        // When items are leased and released many times (each lease and its end append a record),
        // then one completes, one fails and two stay leased
        for _ in 0..<60 {
            let lease = try XCTUnwrap(try store.lease(worker: "w", duration: 60, maximumPerHost: 100))
            try store.release(lease)
        }
        let done = try XCTUnwrap(try store.lease(worker: "w", duration: 60, maximumPerHost: 100))
        try store.complete(done, file: done.item.destination)
        let failing = try XCTUnwrap(try store.lease(worker: "w", duration: 60, maximumPerHost: 100))
        try store.fail(failing, DownloadQueue.Failure(CourierError(code: .unacceptableStatusCode, message: "HTTP 404")))
        let held = [
            try XCTUnwrap(try store.lease(worker: "A", duration: 60, maximumPerHost: 100)),
            try XCTUnwrap(try store.lease(worker: "B", duration: 60, maximumPerHost: 100)),
        ]

        // Then the journal was compacted, stays near what its items need, and every item keeps its
        // state; the leases still hold (renewed, then completed, with their tokens)
        XCTAssertGreaterThan(store.journal.compactionCount, 0)
        XCTAssertLessThan(store.journal.byteCount, 3 * 4096)
        let before = try store.items()
        XCTAssertEqual(before.count, 10)
        XCTAssertEqual(before.first { $0.id == done.item.id }?.state, .completed(done.item.destination))
        XCTAssertEqual(before.first { $0.id == failing.item.id }?.state.isFinished, true)
        for lease in held { XCTAssertEqual(before.first { $0.id == lease.item.id }?.state, .running(received: 0, total: nil)) }
        XCTAssertEqual(before.filter { $0.state == .queued }.count, 6)
        let renewed = try store.renew(held[0], duration: 60)
        XCTAssertEqual(renewed.token, held[0].token)
        XCTAssertNil(
            try store.lease(worker: "C", duration: 60, maximumPerHost: 100).flatMap { lease in
                held.contains { $0.item.id == lease.item.id } ? lease : nil
            }, "a held lease's item is not leased again")

        // And a store reopened from the compacted journal reads the same items (the leased ones
        // `running`, as the journal records them until their lease ends)
        let compacted = store.journal.byteCount
        store.close()
        let reopened = try openStore()
        defer { reopened.close() }
        let after = try reopened.items()
        XCTAssertEqual(after.map(\.id), before.map(\.id))
        XCTAssertEqual(after.map(\.url), before.map(\.url))
        for (old, new) in zip(before, after) where old.state != .running(received: 0, total: nil) {
            XCTAssertEqual(new.state, old.state, old.id)
        }
        XCTAssertLessThanOrEqual(compacted, 3 * 4096)
    }

    func testItemsWithLongFailureMessagesDoNotMakeTheJournalCompactAtEveryChange() throws {
        // Given a store compacting past 4 KiB, whose items' snapshot is far larger than their
        // `add` records: ten of them failed with messages of 3,000 characters
        let store = try openStore()
        defer { store.close() }
        store.inner.withLock { $0.queue.compactionFloor = 4096 }
        try store.add((0..<20).map { newItem("i\($0)") })
        let message = String(repeating: "x", count: 3000)
        for _ in 0..<10 {
            let lease = try XCTUnwrap(try store.lease(worker: "w", duration: 60, maximumPerHost: 100))
            try store.fail(lease, DownloadQueue.Failure(CourierError(code: .unacceptableStatusCode, message: message)))
        }
        let compactedBefore = store.journal.compactionCount
        // When twenty more leases begin and end (about 6 KiB of records)
        for _ in 0..<20 {
            let lease = try XCTUnwrap(try store.lease(worker: "w", duration: 60, maximumPerHost: 100))
            try store.release(lease)
        }
        // Then the journal compacted at most once more: a snapshot is measured as written, so the
        // next one waits until the journal doubled it again
        XCTAssertLessThanOrEqual(store.journal.compactionCount - compactedBefore, 1, "compactions: \(store.journal.compactionCount)")
        XCTAssertEqual(try store.items().filter { $0.state.isFinished }.count, 10)
    }
}
