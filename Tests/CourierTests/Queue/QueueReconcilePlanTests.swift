import XCTest
@testable import Courier

/// The reconcile rule without sockets or files (`DownloadQueue.plan(journal:list:…)`): journal
/// items + a new list + what is at the destinations → one decision per item; and the one
/// "this file is already done" verdict (`ExistingFile.check`) that reconciling and the queue's
/// crash recovery share.
final class QueueReconcilePlanTests: XCTestCase {
    typealias Decision = DownloadQueue.Reconciliation

    private let shaA = String(repeating: "a", count: 64)
    private let shaB = String(repeating: "b", count: 64)

    private func item(_ id: String, _ state: DownloadQueue.State, sha256: String? = nil, sequence: UInt64 = 1) -> DownloadQueue.Item {
        DownloadQueue.Item(
            id: id, url: URL(string: "http://h/\(id)")!, headers: [:], destination: URL(fileURLWithPath: "/d/\(id)"),
            expectedLength: nil, sha256: sha256, priority: 0, metadata: nil, state: state, sequence: sequence)
    }

    private func new(_ id: String, sha256: String? = nil, length: Int64? = nil) -> DownloadQueue.NewItem {
        DownloadQueue.NewItem(
            url: URL(string: "http://h/\(id)")!, to: URL(fileURLWithPath: "/d/\(id)"), id: id, expectedLength: length, sha256: sha256)
    }

    /// The plan for `list` against `journal`, with `disk` saying what is at `/d/<id>` (absent when not named).
    private func plan(
        _ journal: [DownloadQueue.Item], _ list: [DownloadQueue.NewItem], unlisted: DownloadQueue.UnlistedItems = .pause,
        replacing: Bool = false, disk: [String: DownloadQueue.ExistingFile] = [:]
    ) -> [Decision] {
        DownloadQueue.plan(
            journal: Dictionary(uniqueKeysWithValues: journal.map { ($0.id, $0) }), list: list, unlisted: unlisted,
            replacingExistingFiles: replacing, onDisk: { disk[$0.id!] ?? .absent })
    }

    // MARK: - Listed items the queue has

    func testAListedItemThatFailedWasPausedOrCancelledIsResumed() {
        let failure = DownloadQueue.Failure(CourierError(code: .network, message: "x"))
        for state in [DownloadQueue.State.failed(failure), .paused, .cancelled] {
            XCTAssertEqual(plan([item("a", state)], [new("a")]), [.resume(id: "a")], "\(state)")
        }
    }

    func testAListedItemThatIsQueuedRunningOrCompletedIsKept() {
        for state in [DownloadQueue.State.queued, .running(received: 5, total: nil), .completed(URL(fileURLWithPath: "/d/a"))] {
            XCTAssertEqual(plan([item("a", state)], [new("a")]), [.keep(id: "a")], "\(state)")
        }
    }

    func testAChangedChecksumReplacesTheItemAndTheLineIsThenNew() {
        // Given a paused item fetched for the SHA-256 a, listed now with b
        let decisions = plan([item("a", .paused, sha256: shaA)], [new("a", sha256: shaB)])
        // Then it is removed, and added again
        XCTAssertEqual(decisions, [.replace(id: "a"), .add(id: "a")])
    }

    func testAChecksumAddedToALineWithoutOneAlsoReplaces() {
        XCTAssertEqual(plan([item("a", .queued)], [new("a", sha256: shaA)]), [.replace(id: "a"), .add(id: "a")])
    }

    func testAChecksumInCapitalsIsTheSameChecksum() {
        XCTAssertEqual(plan([item("a", .queued, sha256: shaA)], [new("a", sha256: shaA.uppercased())]), [.keep(id: "a")])
    }

    func testACompletedItemWhoseChecksumChangedIsCheckedAgainstTheNewOne() {
        // Given an item completed for the SHA-256 a, listed now with b
        let done = item("a", .completed(URL(fileURLWithPath: "/d/a")), sha256: shaA)
        // Then its published file is fetched again over when it does not have b (even without
        // replacing existing files: it is the queue's own), and adopted when it does
        XCTAssertEqual(
            plan([done], [new("a", sha256: shaB)], disk: ["a": .file(size: 1, sha256: shaA)]),
            [.replace(id: "a"), .replaceFile(id: "a")])
        XCTAssertEqual(
            plan([done], [new("a", sha256: shaB)], disk: ["a": .file(size: 1, sha256: shaB)]),
            [.replace(id: "a"), .adopt(id: "a")])
        // and fetched when its file is gone
        XCTAssertEqual(plan([done], [new("a", sha256: shaB)]), [.replace(id: "a"), .add(id: "a")])
    }

    func testACompletedItemListedWithoutAChecksumIsKept() {
        let done = item("a", .completed(URL(fileURLWithPath: "/d/a")), sha256: shaA)
        XCTAssertEqual(plan([done], [new("a")], disk: ["a": .file(size: 1, sha256: nil)]), [.keep(id: "a")])
    }

    func testACompletedItemsChecksumAtAnotherDestinationFollowsTheNewItemRules() {
        // The line now names another destination: what is there is not the queue's file.
        let done = item("a", .completed(URL(fileURLWithPath: "/d/a")), sha256: shaA)
        let moved = DownloadQueue.NewItem(url: URL(string: "http://h/a")!, to: URL(fileURLWithPath: "/d/elsewhere"), id: "a", sha256: shaB)
        XCTAssertEqual(
            plan([done], [moved], disk: ["a": .file(size: 1, sha256: shaA)]),
            [.replace(id: "a"), .refuse(id: "a", destination: URL(fileURLWithPath: "/d/elsewhere"))])
    }

    // MARK: - Listed items the queue does not have

    func testANewItemWithNothingAtItsDestinationIsAdded() {
        XCTAssertEqual(plan([], [new("a"), new("b", sha256: shaA)]), [.add(id: "a"), .add(id: "b")])
    }

    func testAFileThatAlreadyMatchesItsChecksumIsAdopted() {
        let decisions = plan([], [new("a", sha256: shaA, length: 10)], disk: ["a": .file(size: 10, sha256: shaA)])
        XCTAssertEqual(decisions, [.adopt(id: "a")])
    }

    func testAnUnprovenFileIsRefusedUnlessReplacingIsAsked() {
        let cases: [(DownloadQueue.NewItem, DownloadQueue.ExistingFile, String)] = [
            (new("a"), .file(size: 10, sha256: nil), "no checksum to prove it"),
            (new("a", sha256: shaA), .file(size: 10, sha256: shaB), "another checksum"),
            (new("a", sha256: shaA, length: 11), .file(size: 10, sha256: shaA), "the checksum but not the length"),
            (new("a", sha256: shaA), .other, "a symlink or a FIFO"),
        ]
        for (line, existing, why) in cases {
            XCTAssertEqual(
                plan([], [line], disk: ["a": existing]), [.refuse(id: "a", destination: URL(fileURLWithPath: "/d/a"))], why)
            XCTAssertEqual(plan([], [line], replacing: true, disk: ["a": existing]), [.replaceFile(id: "a")], why)
        }
    }

    func testReplacingExistingFilesReplacesEvenAProvenOne() {
        // As `courier get --force` always did: the caller asked for a fresh copy.
        let decisions = plan([], [new("a", sha256: shaA)], replacing: true, disk: ["a": .file(size: 1, sha256: shaA)])
        XCTAssertEqual(decisions, [.replaceFile(id: "a")])
    }

    func testTheDiskIsAskedOnlyAboutItemsThatWouldBeAdded() {
        var asked: [String] = []
        _ = DownloadQueue.plan(
            journal: ["a": item("a", .paused), "b": item("b", .queued, sha256: shaA)],
            list: [new("a"), new("b", sha256: shaB), new("c")], unlisted: .pause, replacingExistingFiles: false,
            onDisk: {
                asked.append($0.id!); return .absent
            })
        XCTAssertEqual(asked, ["b", "c"])
    }

    // MARK: - Items the list does not name

    func testUnlistedQueuedAndRunningItemsArePausedInTheOrderTheyWereAdded() {
        let journal = [
            item("z", .running(received: 1, total: nil), sequence: 1), item("y", .queued, sequence: 2),
            item("x", .failed(DownloadQueue.Failure(CourierError(code: .network, message: "x"))), sequence: 3),
            item("w", .completed(URL(fileURLWithPath: "/d/w")), sequence: 4), item("v", .paused, sequence: 5),
            item("a", .queued, sequence: 6),
        ]
        XCTAssertEqual(plan(journal, [new("a")]), [.keep(id: "a"), .pause(id: "z"), .pause(id: "y")])
    }

    func testAPartOfAListLeavesUnlistedItemsAlone() {
        XCTAssertEqual(plan([item("z", .queued)], [new("a")], unlisted: .leave), [.add(id: "a")])
    }

    func testTheLastPartPausesOnlyWhatNoPartListed() {
        let journal = [item("z", .queued, sequence: 1), item("y", .queued, sequence: 2)]
        let decisions = plan(journal, [], unlisted: .pauseUnless(listedEarlier: { $0.id == "y" }))
        XCTAssertEqual(decisions, [.pause(id: "z")])
    }

    // MARK: - "This file is already done"

    func testTheVerdictOnAnExistingFile() {
        typealias File = DownloadQueue.ExistingFile
        XCTAssertEqual(File.file(size: 3, sha256: shaA).check(expectedLength: 3, sha256: shaA), .proven)
        XCTAssertEqual(File.file(size: 3, sha256: nil).check(expectedLength: 3, sha256: nil), .unproven)
        XCTAssertEqual(File.file(size: 3, sha256: nil).check(expectedLength: nil, sha256: nil), .unproven)
        XCTAssertEqual(
            File.file(size: 3, sha256: shaA).check(expectedLength: 4, sha256: shaA), .wrong("holds 3 bytes, not the 4 expected"))
        XCTAssertEqual(
            File.file(size: 3, sha256: shaB).check(expectedLength: nil, sha256: shaA), .wrong("does not have the expected SHA-256"))
        XCTAssertEqual(File.other.check(expectedLength: nil, sha256: nil), .wrong("is not a regular file"))
        XCTAssertEqual(File.absent.check(expectedLength: nil, sha256: nil), .wrong("is not there"))
    }
}
