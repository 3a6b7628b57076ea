import Courier
import CourierSupport
import CourierTestSupport
import XCTest
@testable import CourierPostgres

/// The PostgreSQL store against a real server: schema, leases, fencing, caps, priorities,
/// notifications and bad input.
final class PostgresQueueStoreTests: PostgresTestCase {
    // MARK: - Schema

    func testAStoreCreatesItsSchemaInAnEmptyDatabaseAndASecondOneReusesIt() throws {
        // Given a database without the schema
        XCTAssertEqual(try query("SELECT to_regclass('courier_items') IS NULL").first?.first, "t")
        // When two stores open it
        let first = try openStore()
        let second = try openStore()
        // Then the schema is there once, at this version, and both use it
        XCTAssertEqual(try query("SELECT version FROM courier_schema"), [["\(PostgresQueueStore.schemaVersion)"]])
        try first.add([newItem("one")])
        XCTAssertEqual(try second.items().map(\.id), ["one"])
    }

    func testASchemaOfANewerVersionIsATypedErrorAndIsLeftAlone() throws {
        _ = try openStore()
        try query("UPDATE courier_schema SET version = 7")
        XCTAssertThrowsError(try openStore()) { error in
            let error = error as? CourierError
            XCTAssertEqual(error?.code, .storeIncompatible)
            XCTAssertTrue(error?.message.contains("version 7") == true, "\(String(describing: error))")
        }
        XCTAssertEqual(try query("SELECT version FROM courier_schema"), [["7"]], "nothing changed")
    }

    func testASchemaTableWithoutItsRowIsATypedError() throws {
        _ = try openStore()
        try query("DELETE FROM courier_schema")
        XCTAssertThrowsError(try openStore()) { error in
            XCTAssertEqual((error as? CourierError)?.code, .storeIncompatible)
        }
    }

    func testAVersion1SchemaIsMigratedAndItsLeasesAndSplitsCountedAsConnections() throws {
        // Given a database as version 1 left it: an unsplit item leased by a worker of that
        // version, two split items queued, one completed
        for statement in PostgresSchemaVersion1.statements { try query(statement) }
        let rows: [(new: DownloadQueue.NewItem, state: String)] = [
            (newItem("old-leased"), "leased"), (newItem("split", split: .connections(4)), "queued"),
            (newItem("auto", split: .automatic(upTo: 3)), "queued"), (newItem("done"), "completed"),
        ]
        for (index, row) in rows.enumerated() {
            let item = try DownloadQueue.Item.stored(row.new, id: row.new.id!, sequence: UInt64(index + 1))
            try query(
                """
                INSERT INTO courier_items (id, sequence, priority, host, item, state, worker, token, lease_expires)
                VALUES ($1, $2::bigint, 0, $3, $4, $5, CASE WHEN $5 = 'leased' THEN 'old' END, 1,
                    CASE WHEN $5 = 'leased' THEN now() + interval '60 seconds' END)
                """, [item.id, String(item.sequence), item.storeHostKey, PostgresQueueStore.json(item), row.state])
        }
        try query("SELECT setval('courier_item_sequence', 4)")
        // When a store of this version opens it (two at once: one migrates, the other waits and reads)
        let opened = Locked<[Result<PostgresQueueStore, CourierError>]>([])
        let connectionString = server.connectionString(database: database)
        DispatchQueue.concurrentPerform(iterations: 2) { _ in
            let result = Result { () throws(CourierError) in try PostgresQueueStore(connectionString: connectionString) }
            opened.withLock { $0.append(result) }
        }
        stores += try opened.withLock { $0 }.map { try $0.get() }
        let store = stores[0]
        // Then the schema is this version's, each split item wants its split, the old lease holds one
        XCTAssertEqual(try query("SELECT version FROM courier_schema"), [["\(PostgresQueueStore.schemaVersion)"]])
        XCTAssertEqual(
            try query("SELECT id, split_connections, connections FROM courier_items ORDER BY sequence"),
            [["old-leased", "1", "1"], ["split", "4", "1"], ["auto", "3", "1"], ["done", "1", "1"]])
        XCTAssertEqual(try store.items().map(\.id), ["old-leased", "split", "auto", "done"], "every item still reads")
        // And leases under a cap of 4 count the old lease's connection: the split item gets the 3 left
        let split = try XCTUnwrap(try store.lease(worker: "new", duration: 30, maximumPerHost: 4))
        XCTAssertEqual([split.item.id, "\(split.connections)"], ["split", "3"])
        XCTAssertEqual(split.split, .connections(3))
        XCTAssertNil(try store.lease(worker: "new", duration: 30, maximumPerHost: 4), "4 of 4 held")
        // And the old worker's lease is still fenced by its token and completes; its connection frees
        let old = DownloadQueue.Lease(
            item: try XCTUnwrap(try store.items().first), worker: "old", token: 1, expires: Date().addingTimeInterval(60))
        try store.complete(old, file: old.item.destination)
        let auto = try XCTUnwrap(try store.lease(worker: "new", duration: 30, maximumPerHost: 4))
        XCTAssertEqual([auto.item.id, "\(auto.connections)"], ["auto", "1"])
        XCTAssertEqual(auto.split, .off)
    }

    // MARK: - Leases

    func testTwoStoresLeasingConcurrentlyNeverGetTheSameItem() throws {
        // Given 300 items and two stores (two connections, as two workers have)
        let writer = try openStore()
        let ids = (0..<300).map { "item-\($0)" }
        try writer.add(ids.map { newItem($0) })
        let workers = [try openStore(), try openStore()]
        let taken = Locked<[String: [String]]>([:])
        // When each drains the list from its own thread
        DispatchQueue.concurrentPerform(iterations: 2) { index in
            let store = workers[index]
            while let lease = try? store.lease(worker: "w\(index)", duration: 30, maximumPerHost: 1000) {
                taken.withLock { $0["w\(index)", default: []].append(lease.item.id) }
                try? store.complete(lease, file: lease.item.destination)
            }
        }
        // Then every item was leased exactly once, and both took some
        let all = taken.withLock { $0 }
        let leased = all.values.flatMap { $0 }
        XCTAssertEqual(leased.count, 300)
        XCTAssertEqual(Set(leased), Set(ids))
        XCTAssertEqual(all.count, 2, "both workers leased")
        XCTAssertTrue(try writer.items().allSatisfy { if case .completed = $0.state { return true } else { return false } })
    }

    func testAnExpiredLeaseIsTakenOverAndItsFormerHolderCanChangeNothing() throws {
        // Given worker A's short lease, and its progress recorded
        let a = try openStore()
        let b = try openStore()
        try a.add([newItem("x")])
        let first = try XCTUnwrap(try a.lease(worker: "A", duration: 0.3, maximumPerHost: 4))
        try a.recordProgress(first, received: 4096, resumeRecord: Data("record".utf8))
        XCTAssertNil(try b.lease(worker: "B", duration: 30, maximumPerHost: 4), "not while A's lease runs")
        // When it expires, B takes it over with a greater token and A's progress
        Thread.sleep(forTimeInterval: 0.5)
        let second = try XCTUnwrap(try b.lease(worker: "B", duration: 30, maximumPerHost: 4))
        XCTAssertEqual(second.item.id, "x")
        XCTAssertGreaterThan(second.token, first.token)
        XCTAssertEqual(second.received, 4096)
        XCTAssertEqual(second.resumeRecord, Data("record".utf8))
        // Then A, waking late, can neither complete, fail, renew, report nor release (fencing)
        for attempt in [
            { try a.complete(first, file: first.item.destination) },
            { try a.fail(first, DownloadQueue.Failure(CourierError(code: .network, message: "m"))) },
            { _ = try a.renew(first, duration: 30) }, { try a.recordProgress(first, received: 1, resumeRecord: nil) },
            { try a.release(first) },
        ] as [() throws -> Void] {
            XCTAssertThrowsError(try attempt()) { XCTAssertEqual(($0 as? CourierError)?.code, .leaseLost) }
        }
        // And B completes it
        try b.complete(second, file: second.item.destination)
        XCTAssertEqual(try a.items().first?.state, .completed(second.item.destination))
    }

    func testThePublishingMarkIsFencedAndReadByTheNextLease() throws {
        // Given A's lease, marked as publishing its file, then expired (A died between the link and the completion)
        let a = try openStore()
        let b = try openStore()
        try a.add([newItem("x"), newItem("y")])
        let first = try XCTUnwrap(try a.lease(worker: "A", duration: 0.3, maximumPerHost: 4))
        XCTAssertNil(try a.publishingFile(of: first), "no mark before one is set")
        try a.beginPublishing(first, file: first.item.destination)
        Thread.sleep(forTimeInterval: 0.5)
        // When B takes the item over
        let second = try XCTUnwrap(try b.lease(worker: "B", duration: 30, maximumPerHost: 4))
        XCTAssertEqual(second.item.id, "x")
        // Then B reads A's mark, A can no longer mark anything, and a release clears the mark
        XCTAssertEqual(try b.publishingFile(of: second), first.item.destination)
        XCTAssertThrowsError(try a.beginPublishing(first, file: first.item.destination)) {
            XCTAssertEqual(($0 as? CourierError)?.code, .leaseLost)
        }
        try b.release(second)
        let third = try XCTUnwrap(try b.lease(worker: "B", duration: 30, maximumPerHost: 4))
        XCTAssertEqual(third.item.id, "x")
        XCTAssertNil(try b.publishingFile(of: third))
    }

    func testAStaleTokenCannotCompleteEvenWhenTheLeaseIsUnexpired() throws {
        // A token from before a takeover, replayed against the current lease's worker and expiry.
        let store = try openStore()
        try store.add([newItem("x")])
        let first = try XCTUnwrap(try store.lease(worker: "A", duration: 0.2, maximumPerHost: 4))
        Thread.sleep(forTimeInterval: 0.4)
        let second = try XCTUnwrap(try store.lease(worker: "A", duration: 30, maximumPerHost: 4))
        XCTAssertEqual(second.token, first.token + 1)
        XCTAssertThrowsError(try store.complete(first, file: first.item.destination)) {
            XCTAssertEqual(($0 as? CourierError)?.code, .leaseLost)
        }
        try store.complete(second, file: second.item.destination)
    }

    func testARenewedLeaseIsNotTakenOver() throws {
        let a = try openStore()
        let b = try openStore()
        try a.add([newItem("x")])
        let lease = try XCTUnwrap(try a.lease(worker: "A", duration: 0.6, maximumPerHost: 4))
        let renewed = try a.renew(lease, duration: 30)
        XCTAssertGreaterThan(renewed.expires, lease.expires)
        Thread.sleep(forTimeInterval: 0.8)
        XCTAssertNil(try b.lease(worker: "B", duration: 30, maximumPerHost: 4), "the renewed lease still holds the item")
        try a.complete(renewed, file: lease.item.destination)
    }

    func testThePerHostCapIsCountedAcrossStores() throws {
        // Given 5 items on each of two hosts, and a cap of 2 per host
        let a = try openStore()
        let b = try openStore()
        try a.add((0..<5).map { newItem("a\($0)", host: "a.example") } + (0..<5).map { newItem("b\($0)", host: "b.example") })
        // When two workers lease all they can
        var leases: [DownloadQueue.Lease] = []
        while let lease = try a.lease(worker: "A", duration: 30, maximumPerHost: 2) ?? b.lease(worker: "B", duration: 30, maximumPerHost: 2)
        {
            leases.append(lease)
        }
        // Then two per host in all, whichever worker holds them
        XCTAssertEqual(leases.count, 4)
        XCTAssertEqual(Dictionary(grouping: leases, by: { $0.item.url.host! }).mapValues(\.count), ["a.example": 2, "b.example": 2])
        // And a finished lease frees its host's slot for the other worker
        let done = try XCTUnwrap(leases.first { $0.item.url.host == "a.example" })
        try (done.worker == "A" ? a : b).complete(done, file: done.item.destination)
        XCTAssertEqual(try b.lease(worker: "B", duration: 30, maximumPerHost: 2)?.item.url.host, "a.example")
    }

    func testASplitItemsLeaseHoldsItsConnectionsAndTheCapSumsThemAcrossStores() throws {
        // Given a cap of 4 connections per host, items split 3 and 4 and two unsplit ones, two stores
        let a = try openStore()
        let b = try openStore()
        try a.add([
            newItem("three", split: .connections(3)), newItem("four", split: .automatic(upTo: 4)), newItem("one"), newItem("two"),
            newItem("elsewhere", host: "b.example", split: .connections(8)),
        ])
        // When each store leases while the host has room
        let three = try XCTUnwrap(try a.lease(worker: "A", duration: 30, maximumPerHost: 4))
        let four = try XCTUnwrap(try b.lease(worker: "B", duration: 30, maximumPerHost: 4))
        let elsewhere = try XCTUnwrap(try b.lease(worker: "B", duration: 30, maximumPerHost: 4))
        // Then the first holds its 3, the second the one left, and the host is full for either store
        XCTAssertEqual([three.item.id, four.item.id, elsewhere.item.id], ["three", "four", "elsewhere"])
        XCTAssertEqual([three.connections, four.connections, elsewhere.connections], [3, 1, 4])
        XCTAssertEqual([three.split, four.split, elsewhere.split], [.connections(3), .off, .connections(4)])
        XCTAssertNil(try a.lease(worker: "A", duration: 30, maximumPerHost: 4))
        XCTAssertNil(try b.lease(worker: "B", duration: 30, maximumPerHost: 4))
        XCTAssertEqual(
            try query("SELECT host, sum(connections) FROM courier_items WHERE state = 'leased' GROUP BY host ORDER BY host"),
            [["a.example:-1", "4"], ["b.example:-1", "4"]])
        // And a renewal keeps the grant; the split lease's end frees its three for the other store
        XCTAssertEqual(try a.renew(three, duration: 30).connections, 3)
        try a.complete(three, file: three.item.destination)
        let one = try XCTUnwrap(try b.lease(worker: "B", duration: 30, maximumPerHost: 4))
        let two = try XCTUnwrap(try b.lease(worker: "B", duration: 30, maximumPerHost: 4))
        XCTAssertEqual([one.item.id, two.item.id], ["one", "two"])
        XCTAssertEqual(one.connections + two.connections, 2)
    }

    func testTheStoreGrantsWhatTheQueuesRuleGrants() throws {
        // Given hosts with 0 to `cap` connections held by unsplit leases, and on each an item of
        // each kind of split (one case per host, so cases never share a count)
        let store = try openStore()
        let splits: [DownloadSplit] = [.off, .connections(2), .connections(4), .automatic(upTo: 3), .automatic]
        var index = 0
        for cap in [1, 3, 6] {
            for held in 0...cap {
                for split in splits {
                    index += 1
                    let host = "h\(index).example"
                    try store.add(
                        (0..<held).map { newItem("f\(index)-\($0)", host: host, priority: 1) } + [
                            newItem("x\(index)", host: host, split: split)
                        ])
                    for _ in 0..<held {
                        XCTAssertEqual(try store.lease(worker: "W", duration: 60, maximumPerHost: cap)?.connections, 1)
                    }
                    // When the item is leased under the cap
                    let lease = try store.lease(worker: "W", duration: 60, maximumPerHost: cap)
                    // Then it holds what the one-process queue would grant, or waits as it would
                    let expected = DownloadQueue.grant(split, hostConnections: held, perHost: cap)
                    let label = "\(split) with \(held) of \(cap) held"
                    XCTAssertEqual(lease?.item.id, expected == nil ? nil : "x\(index)", label)
                    XCTAssertEqual(lease?.connections, expected?.connections, label)
                    XCTAssertEqual(lease?.split, expected?.split, label)
                    // (The next case starts on an empty list: no earlier item competes for its lease.)
                    try query("DELETE FROM courier_items")
                }
            }
        }
    }

    func testHigherPriorityLeasesFirstThenTheOrderOfAdding() throws {
        let store = try openStore()
        try store.add([
            newItem("low1", priority: 0), newItem("high", priority: 5), newItem("low2", priority: 0), newItem("mid", priority: 1),
        ])
        var order: [String] = []
        while let lease = try store.lease(worker: "A", duration: 30, maximumPerHost: 10) { order.append(lease.item.id) }
        XCTAssertEqual(order, ["high", "mid", "low1", "low2"])
    }

    func testAnIdAlreadyStoredRefusesTheWholeAdd() throws {
        let store = try openStore()
        try store.add([newItem("x")])
        XCTAssertThrowsError(try store.add([newItem("y"), newItem("x")])) {
            XCTAssertEqual(($0 as? CourierError)?.code, .invalidRequest)
        }
        XCTAssertEqual(try store.items().map(\.id), ["x"], "all or none")
    }

    // MARK: - The server restarted

    func testAfterTheServerRestartsAWaiterIsWokenAgain() async throws {
        // Given a store whose LISTEN connection the restart cuts
        let waiter = try openStore()
        try server.restart()
        // (The break itself wakes waiters, or leaves a wake-up for the next one: let those pass.)
        while await waiter.waitForWork(timeout: 0.5) {}
        // When another store adds an item after the restart
        let started = Date()
        async let woken = waiter.waitForWork(timeout: 30)
        try await Task.sleep(nanoseconds: 300_000_000)
        let adder = try openStore()
        try adder.add([newItem("x")])
        // Then the waiter wakes (a notification, or the reconnection's wake-up), well before its timeout
        let wokenValue = await woken
        XCTAssertTrue(wokenValue)
        XCTAssertLessThan(Date().timeIntervalSince(started), 20)
    }

    func testAfterTheServerRestartsAStoreReconnectsAndNothingIsLostOrLeasedTwice() throws {
        // Given a leased item and a queued one
        let store = try openStore()
        try store.add([newItem("leased"), newItem("queued")])
        let lease = try XCTUnwrap(try store.lease(worker: "A", duration: 60, maximumPerHost: 4))
        XCTAssertEqual(lease.item.id, "leased")
        // When the server restarts under the open store
        try server.restart()
        // Then at most the first statement fails, with a typed error, and the store carries on
        var next: DownloadQueue.Lease?
        do {
            next = try store.lease(worker: "A", duration: 60, maximumPerHost: 4)
        } catch {
            XCTAssertEqual(error.code, .storeUnavailable, "\(error)")
            next = try store.lease(worker: "A", duration: 60, maximumPerHost: 4)
        }
        XCTAssertEqual(next?.item.id, "queued")
        XCTAssertNil(try store.lease(worker: "A", duration: 60, maximumPerHost: 4), "the leased item is still leased")
        try store.complete(lease, file: lease.item.destination)
        try store.complete(try XCTUnwrap(next), file: URL(fileURLWithPath: "/tmp/courier-pg-out/queued"))
        XCTAssertEqual(
            try store.items().map(\.state),
            [.completed(lease.item.destination), .completed(URL(fileURLWithPath: "/tmp/courier-pg-out/queued"))])
    }

    // MARK: - Notifications

    func testANotificationWakesAnIdleWaiterAndNothingWakesItOtherwise() async throws {
        let waiter = try openStore()
        let adder = try openStore()
        // Nothing added: the wait ends by its timeout
        let quiet = await waiter.waitForWork(timeout: 0.3)
        XCTAssertFalse(quiet)
        // An add by another store wakes it well before its timeout
        let started = Date()
        async let woken = waiter.waitForWork(timeout: 20)
        try await Task.sleep(nanoseconds: 200_000_000)
        try adder.add([newItem("x")])
        let wokenValue = await woken
        XCTAssertTrue(wokenValue)
        XCTAssertLessThan(Date().timeIntervalSince(started), 10)
        XCTAssertEqual(try waiter.lease(worker: "W", duration: 30, maximumPerHost: 1)?.item.id, "x")
    }

    // MARK: - Bad input

    func testAWrongPasswordIsATypedErrorThatNeverShowsThePassword() throws {
        let wrong = "Wr0ng-Secret-\(UUID().uuidString)"
        for connectionString in [
            server.connectionString(database: database, password: wrong),
            "postgresql://courier:\(wrong)@/\(database)?host=\(server.directory.path)",
        ] {
            XCTAssertThrowsError(try PostgresQueueStore(connectionString: connectionString)) { error in
                let error = error as? CourierError
                XCTAssertEqual(error?.code, .storeUnavailable)
                XCTAssertTrue(error?.message.contains("password authentication failed") == true, "\(String(describing: error))")
                XCTAssertFalse("\(String(describing: error))".contains(wrong))
                XCTAssertFalse((error?.message ?? "").contains(wrong))
            }
        }
    }

    func testAStoreDescribesItselfWithoutItsPassword() throws {
        let store = try openStore()
        XCTAssertFalse(store.description.contains(server.password))
        XCTAssertTrue(store.description.contains("password=***"), store.description)
    }

    func testALeaseRowEditedByHandIsRefusedOrFailedNeverFetched() throws {
        let store = try openStore()
        try store.add([newItem("x"), newItem("y")])
        let lease = try XCTUnwrap(try store.lease(worker: "A", duration: 30, maximumPerHost: 4))
        // A leased row without its worker: the table refuses it
        XCTAssertThrowsError(try query("UPDATE courier_items SET worker = NULL WHERE id = $1", [lease.item.id])) { error in
            XCTAssertEqual((error as? CourierError)?.code, .storeUnavailable)
            XCTAssertTrue("\(error)".contains("courier_items_lease"), "\(error)")
        }
        // A fencing token turned back: refused too
        XCTAssertThrowsError(try query("UPDATE courier_items SET token = 0 WHERE id = $1", [lease.item.id])) { error in
            XCTAssertTrue("\(error)".contains("fencing token"), "\(error)")
        }
        // An item that no longer decodes: failed with a reason, never handed to a worker
        try query("UPDATE courier_items SET item = 'not json' WHERE id = 'y'")
        XCTAssertNil(try store.lease(worker: "A", duration: 30, maximumPerHost: 4))
        XCTAssertEqual(try query("SELECT state FROM courier_items WHERE id = 'y'"), [["failed"]])
        try store.complete(lease, file: lease.item.destination)
    }
}
