import XCTest
@testable import Courier

/// The worker's pure decisions (DownloadQueueWorker+Rules.swift): no store, no disk, no clock.
final class DownloadQueueWorkerRuleTests: XCTestCase {
    func testTheHeartbeatIsAThirdOfTheLeaseAndNeverUnderFiftyMilliseconds() {
        XCTAssertEqual(DownloadQueueWorker.heartbeatInterval(leaseDuration: 30), 10)
        XCTAssertEqual(DownloadQueueWorker.heartbeatInterval(leaseDuration: 0.06), 0.05)
    }

    func testAWorkerIsNamedAfterItsHostAndProcess() {
        let name = DownloadQueueWorker.defaultName()
        XCTAssertTrue(name.hasSuffix(":\(getpid())"), name)
        XCTAssertGreaterThan(name.count, ":\(getpid())".count, name)
    }

    func testALeaseStartsFromWhatIsAtTheDestination() {
        typealias Start = DownloadQueueWorker.LeaseStart
        let rows: [(ExistingFile: DownloadQueue.ExistingFile.Verdict?, marked: Bool, Start)] = [
            (nil, false, .download),
            (nil, true, .download),  // marked, but the link never happened: fetch again
            (.proven, false, .complete),  // the item's SHA-256: its file, whoever put it there
            (.proven, true, .complete),
            (.unproven, true, .complete),  // an earlier lease marked it, then linked it
        ]
        for (verdict, marked, expected) in rows {
            XCTAssertEqual(
                DownloadQueueWorker.start(destination: verdict, markedPublishing: marked), expected,
                "\(String(describing: verdict)) \(marked)")
        }
        guard case .fail(let why) = DownloadQueueWorker.start(destination: .unproven, markedPublishing: false) else {
            return XCTFail("an unproven file nobody marked is never adopted")
        }
        XCTAssertTrue(why.contains("nothing proves"), why)
        for marked in [false, true] {
            guard case .fail(let why) = DownloadQueueWorker.start(destination: .wrong("holds 3 bytes"), markedPublishing: marked) else {
                return XCTFail("a wrong file is never adopted nor replaced")
            }
            XCTAssertTrue(why.contains("holds 3 bytes"), why)
        }
    }

    func testADownloadEndsItsLeaseByWhatHappened() {
        typealias End = DownloadQueueWorker.LeaseEnd
        let file = URL(fileURLWithPath: "/tmp/x")
        let lost = CourierError(code: .leaseLost, message: "taken over")
        let cancelled = CourierError(code: .cancelled, message: "stopped")
        let notFound = CourierError(code: .unacceptableStatusCode, message: "404")
        XCTAssertEqual(DownloadQueueWorker.end(.success(file), lost: false, stopping: false), .complete(file))
        XCTAssertEqual(DownloadQueueWorker.end(.success(file), lost: false, stopping: true), .complete(file), "published wins over a stop")
        XCTAssertEqual(DownloadQueueWorker.end(.failure(lost), lost: false, stopping: false), .lost, "refused at publishing")
        XCTAssertEqual(DownloadQueueWorker.end(.failure(lost), lost: false, stopping: true), .lost)
        XCTAssertEqual(DownloadQueueWorker.end(.failure(cancelled), lost: true, stopping: false), .lost, "stopped by a renewal")
        XCTAssertEqual(DownloadQueueWorker.end(.success(file), lost: true, stopping: false), .lost, "the store refuses it anyway")
        XCTAssertEqual(DownloadQueueWorker.end(.failure(cancelled), lost: false, stopping: true), .release)
        let unreachable = CourierError(code: .storeUnavailable, message: "the server closed the connection")
        XCTAssertEqual(DownloadQueueWorker.end(.failure(unreachable), lost: false, stopping: false), .release, "not the item's failure")
        XCTAssertEqual(DownloadQueueWorker.end(.failure(notFound), lost: false, stopping: false), .fail(DownloadQueue.Failure(notFound)))
    }

    func testOnlyALostLeaseStopsADownloadOnARenewal() {
        XCTAssertTrue(DownloadQueueWorker.renewalStopsDownload(CourierError(code: .leaseLost, message: "")))
        XCTAssertFalse(DownloadQueueWorker.renewalStopsDownload(CourierError(code: .storeUnavailable, message: "")))
        XCTAssertFalse(DownloadQueueWorker.renewalStopsDownload(CourierError(code: .fileSystem, message: "")))
    }

    func testATakenOverLeaseContinuesFromTheLongerReadableBytes() {
        typealias Start = DownloadQueueWorker.PartialStart
        let mine = URL(fileURLWithPath: "/w/b/parts/x.courier-partial")
        let theirs = URL(fileURLWithPath: "/w/a/parts/x.courier-partial")
        func record(_ file: URL, _ bytes: Int64) -> ResumeData {
            ResumeData(url: URL(string: "http://h/x")!, partialFile: file, bytesOnDisk: bytes, validator: "\"v\"", totalLength: 1000)
        }
        let readable: (URL) -> Int64? = { $0 == theirs ? 600 : nil }
        let unreadable: (URL) -> Int64? = { _ in nil }
        func start(own: ResumeData?, recorded: ResumeData?, _ size: (URL) -> Int64? = readable) -> Start {
            DownloadQueueWorker.partialStart(own: own, recorded: recorded, ownPartial: mine, readableSize: size)
        }
        // Nothing recorded: this worker's own bytes, or zero
        XCTAssertEqual(start(own: nil, recorded: nil), .zero)
        XCTAssertEqual(start(own: record(mine, 10), recorded: nil), .own)
        // Recorded by another worker whose file is readable here (shared storage): a copy
        XCTAssertEqual(start(own: nil, recorded: record(theirs, 500)), .copy(record(theirs, 500)))
        XCTAssertEqual(start(own: record(mine, 100), recorded: record(theirs, 500)), .copy(record(theirs, 500)), "the longer")
        XCTAssertEqual(start(own: record(mine, 500), recorded: record(theirs, 500)), .own, "no copy for nothing more")
        // Not readable (another machine's disk), or shorter than recorded: own bytes or zero
        XCTAssertEqual(start(own: nil, recorded: record(theirs, 500), unreadable), .zero)
        XCTAssertEqual(start(own: record(mine, 100), recorded: record(theirs, 500), unreadable), .own)
        XCTAssertEqual(start(own: nil, recorded: record(theirs, 700)), .zero, "the file holds 600 of the 700 recorded")
        // This worker's own record (it held the item last), or an empty one: never a copy
        XCTAssertEqual(start(own: record(mine, 300), recorded: record(mine, 300)), .own)
        XCTAssertEqual(start(own: nil, recorded: record(theirs, 0)), .zero)
        var split = record(theirs, 500)
        split.segments = []
        XCTAssertEqual(start(own: nil, recorded: split), .zero, "a split record is not copied")
    }
}
