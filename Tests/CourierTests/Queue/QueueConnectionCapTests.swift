import XCTest
import CourierTestSupport
@testable import Courier

/// The queue's per-host cap counts connections (DownloadQueue+Decisions.swift,
/// `DownloadQueue.grant`): an item starts only while its host has a connection free, and a split
/// item's split is capped at what is free. Pure: no queue, no sockets.
final class QueueConnectionCapTests: XCTestCase {
    private struct Row {
        let split: DownloadSplit
        let hostConnections: Int
        let perHost: Int
        /// The connections granted and the split the download gets; `nil`: the item waits.
        let expected: (connections: Int, split: DownloadSplit)?
    }

    func testEachItemGetsWhatIsFreeOnItsHostUpToItsSplitAndWaitsWhenNothingIsFree() {
        // Given an item's split and its host's connections in use, when it is admitted, then it
        // holds this many connections with this split, or waits.
        let rows: [Row] = [
            // One stream: one connection, while one is free.
            Row(split: .off, hostConnections: 0, perHost: 2, expected: (1, .off)),
            Row(split: .off, hostConnections: 1, perHost: 2, expected: (1, .off)),
            Row(split: .off, hostConnections: 2, perHost: 2, expected: nil),
            Row(split: .off, hostConnections: 5, perHost: 2, expected: nil),
            // A fixed split: all of it when free, else what is free, never below one.
            Row(split: .connections(4), hostConnections: 0, perHost: 4, expected: (4, .connections(4))),
            Row(split: .connections(4), hostConnections: 0, perHost: 8, expected: (4, .connections(4))),
            Row(split: .connections(4), hostConnections: 0, perHost: 2, expected: (2, .connections(2))),
            Row(split: .connections(4), hostConnections: 1, perHost: 4, expected: (3, .connections(3))),
            Row(split: .connections(4), hostConnections: 3, perHost: 4, expected: (1, .off)),
            Row(split: .connections(4), hostConnections: 4, perHost: 4, expected: nil),
            Row(split: .connections(2), hostConnections: 0, perHost: 1, expected: (1, .off)),
            // Automatic: its maximum capped the same way; it finds its count below that.
            Row(split: .automatic, hostConnections: 0, perHost: 4, expected: (4, .automatic(upTo: 4))),
            Row(split: .automatic(upTo: 3), hostConnections: 0, perHost: 8, expected: (3, .automatic(upTo: 3))),
            Row(split: .automatic(upTo: 8), hostConnections: 6, perHost: 8, expected: (2, .automatic(upTo: 2))),
            Row(split: .automatic, hostConnections: 3, perHost: 4, expected: (1, .off)),
            Row(split: .automatic, hostConnections: 4, perHost: 4, expected: nil),
            // A count that cannot be (below zero) is read as none in use.
            Row(split: .connections(3), hostConnections: -1, perHost: 2, expected: (2, .connections(2))),
        ]
        for row in rows {
            let grant = DownloadQueue.grant(row.split, hostConnections: row.hostConnections, perHost: row.perHost)
            let label = "\(row.split) with \(row.hostConnections) of \(row.perHost) in use"
            XCTAssertEqual(grant?.connections, row.expected?.connections, label)
            XCTAssertEqual(grant?.split, row.expected?.split, label)
        }
    }

    func testConnectionsHeldOnAHostNeverExceedItsCapWhateverStartsAndEnds() {
        // Given a host with a cap, and items of random splits starting and ending in random order
        for seed in UInt64(1)...200 {
            var random = SplitMix64(seed: seed)
            let perHost = Int.random(in: 1...8, using: &random)
            var held: [Int] = []
            for _ in 0..<200 {
                let split: DownloadSplit = [
                    .off, .connections(Int.random(in: 2...6, using: &random)), .automatic,
                    .automatic(upTo: Int.random(in: 1...5, using: &random)),
                ][Int.random(in: 0..<4, using: &random)]
                // When the next item is admitted (or, its host full, a running one ends first)
                if let grant = DownloadQueue.grant(split, hostConnections: held.reduce(0, +), perHost: perHost) {
                    // Then it holds at least one, no more than its split allows, and the host
                    // stays within its cap
                    XCTAssertGreaterThanOrEqual(grant.connections, 1, "seed \(seed)")
                    XCTAssertLessThanOrEqual(grant.connections, split.cap(perHost: nil), "seed \(seed)")
                    XCTAssertEqual(grant.split.cap(perHost: nil), grant.connections, "seed \(seed): the split never asks for more")
                    held.append(grant.connections)
                } else {
                    XCTAssertEqual(held.reduce(0, +), perHost, "seed \(seed): an item waits only on a full host")
                }
                XCTAssertLessThanOrEqual(held.reduce(0, +), perHost, "seed \(seed)")
                if !held.isEmpty, Bool.random(using: &random) { held.remove(at: Int.random(in: 0..<held.count, using: &random)) }
            }
        }
    }

    func testReleasingARunFreesEveryConnectionItHeld() {
        // Given a split run holding 3 of its host's connections and a single run holding 1
        var state = DownloadQueue.QueueState()
        let split = DownloadQueue.Running(host: "h:80", token: 1, connections: 3, split: .connections(3))
        let single = DownloadQueue.Running(host: "h:80", token: 2)
        state.running = ["a": split, "b": single]
        state.connectionsPerHost = ["h:80": 4]
        // When the split run ends
        state.release("a", split)
        // Then its three connections are free, and the single run's one is still held
        XCTAssertEqual(state.connectionsPerHost, ["h:80": 1])
        state.release("b", single)
        XCTAssertEqual(state.connectionsPerHost, [:])
    }

    // MARK: - A fleet's leases

    func testTheCountAndTheSplitHalvesMakeExactlyTheQueuesGrant() {
        // Given every split a store may keep (as the most connections it wants) and every host load
        let splits: [DownloadSplit] =
            [.off, .automatic] + (2...DownloadSplit.maximumConnections).flatMap { [.connections($0), .automatic(upTo: $0)] }
        for split in splits {
            for perHost in 1...10 {
                for held in -1...11 {
                    // When a store grants by counts alone, then builds the download's split from its count
                    let grant = DownloadQueue.grant(split, hostConnections: held, perHost: perHost)
                    let count = DownloadQueue.grantedConnections(
                        wanting: DownloadQueue.connectionsWanted(by: split), hostConnections: held, perHost: perHost)
                    // Then it is the one-process queue's grant, connections and split
                    let label = "\(split) with \(held) of \(perHost) held"
                    XCTAssertEqual(count, grant?.connections, label)
                    if let count { XCTAssertEqual(DownloadQueue.grantedSplit(split, connections: count), grant?.split, label) }
                }
            }
        }
    }

    func testALeaseFetchesItsItemSplitOverExactlyItsConnections() {
        // Given items of each kind of split, and leases granting them some connections
        let rows: [(split: DownloadSplit, connections: Int, expected: DownloadSplit)] = [
            (.off, 1, .off), (.off, 4, .off), (.connections(4), 4, .connections(4)), (.connections(4), 3, .connections(3)),
            (.connections(4), 1, .off), (.automatic, 5, .automatic(upTo: 5)), (.automatic(upTo: 3), 2, .automatic(upTo: 2)),
            (.automatic(upTo: 3), 3, .automatic(upTo: 3)), (.connections(2), 0, .off),
        ]
        for row in rows {
            var item = DownloadQueue.Item.placeholder(id: "x")
            item.splitArgument = DownloadQueue.Item.splitArgument(for: row.split)
            // When a lease holds that many
            let lease = DownloadQueue.Lease(item: item, worker: "w", token: 1, expires: .distantFuture, connections: row.connections)
            // Then its download's split is the item's capped at them, and a count below one is one
            XCTAssertEqual(lease.connections, max(1, row.connections), "\(row)")
            XCTAssertEqual(lease.split, DownloadQueue.grant(row.split, hostConnections: 0, perHost: lease.connections)?.split, "\(row)")
            XCTAssertEqual(lease.split, row.expected, "\(row)")
            XCTAssertEqual(lease.renewed(until: .distantPast).connections, lease.connections, "a renewal keeps the grant")
        }
    }

    // MARK: - The journal

    /// An `add` record as versions before split items wrote it (no `split` key).
    private static let oldAddRecord = #"""
        {"add":{"_0":{"id":"old","url":"http:\/\/h:80\/a","headers":{},"destination":"file:\/\/\/tmp\/courier-old\/a","priority":0,"state":{"queued":{}},"sequence":1}}}
        """#

    func testAJournalLineWrittenBeforeSplitItemsReplaysAsAnUnsplitItem() throws {
        // Given an add record in the old format
        var state = DownloadQueue.QueueState()
        var skipped: [String] = []
        // When it is replayed
        state.replay([Data(Self.oldAddRecord.utf8)], skipped: &skipped)
        // Then the item is there, queued, with no split
        XCTAssertEqual(skipped, [])
        let item = try XCTUnwrap(state.items["old"])
        XCTAssertEqual(item.state, .queued)
        XCTAssertEqual(item.url.absoluteString, "http://h:80/a")
        XCTAssertEqual(item.split, .off)
        XCTAssertEqual(state.order.count, 1)
    }

    func testAnUnsplitItemIsJournaledExactlyAsBeforeAndASplitOneWithItsSplit() throws {
        // Given two new items, one unsplit and one split
        var state = DownloadQueue.QueueState()
        let file = URL(fileURLWithPath: "/tmp/courier-old/a")
        XCTAssertNil(
            state.insert(DownloadQueue.NewItem(url: URL(string: "http://h:80/a")!, to: file, id: "old"), id: "old", completed: false))
        XCTAssertNil(
            state.insert(
                DownloadQueue.NewItem(url: URL(string: "http://h:80/b")!, to: file, id: "new", split: .automatic(upTo: 6)), id: "new",
                completed: false))
        // When their records are written
        let records = state.records.map { String(decoding: $0, as: UTF8.self) }
        // Then the unsplit one has no split key (older versions read it as they always have),
        // and the split one names its split in the form the one parser reads
        XCTAssertFalse(records[0].contains("split"), records[0])
        XCTAssertTrue(records[1].contains(#""split":"auto:6""#), records[1])
        var replayed = DownloadQueue.QueueState()
        var skipped: [String] = []
        replayed.replay(state.records, skipped: &skipped)
        XCTAssertEqual(replayed.items["old"]?.split, .off)
        XCTAssertEqual(replayed.items["new"]?.split, .automatic(upTo: 6))
        XCTAssertEqual(replayed.items, state.items)
    }

    func testASplitThisVersionCannotReadIsOneStreamNotALostItem() throws {
        // Given an add record from a newer writer whose split this version does not know
        let record = Self.oldAddRecord.replacingOccurrences(of: #""sequence":1"#, with: #""sequence":1,"split":"turbo""#)
        var state = DownloadQueue.QueueState()
        var skipped: [String] = []
        // When it is replayed
        state.replay([Data(record.utf8)], skipped: &skipped)
        // Then the item is kept, as one stream (a split only costs or gains speed)
        XCTAssertEqual(skipped, [])
        XCTAssertEqual(state.items["old"]?.split, .off)
    }
}
