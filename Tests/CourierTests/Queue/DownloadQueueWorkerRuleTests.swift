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
}
