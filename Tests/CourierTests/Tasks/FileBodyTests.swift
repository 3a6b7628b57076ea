import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

@testable import Courier

/// A download's own bookkeeping decisions as a pure value (the writer is made, never used).
final class FileBodyTests: XCTestCase {
    private func body() -> FileBody {
        let plan = DownloadPlan(
            destination: .file(URL(fileURLWithPath: "/nonexistent/out")), policy: DownloadPolicy(), validation: .default,
            partialFile: nil, resumeFrom: nil)
        return FileBody(plan: plan, writer: DiskWriter(batchBytes: 1024, callQueue: DispatchQueue(label: "file-body-tests")))
    }

    func testAContinuationThatAddsBytesIsNoStall() {
        var file = body()
        XCTAssertEqual(file.endedShort(holding: 100), 0)
        XCTAssertEqual(file.endedShort(holding: 200), 0)
    }

    func testContinuationsThatAddNothingCountAsStallsInARow() {
        // Given a body that ended short at 100 bytes
        var file = body()
        _ = file.endedShort(holding: 100)
        // When the next continuations end at the same byte
        // Then each one is one more stall in a row
        XCTAssertEqual(file.endedShort(holding: 100), 1)
        XCTAssertEqual(file.endedShort(holding: 100), 2)
        // And a continuation that adds bytes starts the count again
        XCTAssertEqual(file.endedShort(holding: 101), 0)
    }

    func testAnEquallyShortRestartIsAStallEvenThoughItsAttemptAddedBytes() {
        // Given 100 bytes held at a continuation
        var file = body()
        _ = file.endedShort(holding: 100)
        // When the server answers with a new 200 that again ends at 100 (the attempt went 0 → 100)
        // Then nothing was gained over the most ever held
        XCTAssertEqual(file.endedShort(holding: 100), 1)
        XCTAssertEqual(file.endedShort(holding: 60), 2, "less than before is no progress either")
    }

    func testARefusedResponsesBodyIsKeptUpToItsLimit() {
        var file = body()
        file.keepRejected(Data(count: FileBody.rejectedBodyLimit - 10))
        file.keepRejected(Data(repeating: 1, count: 100))
        XCTAssertEqual(file.rejectedBody.count, FileBody.rejectedBodyLimit)
        file.keepRejected(Data(count: 5))
        XCTAssertEqual(file.rejectedBody.count, FileBody.rejectedBodyLimit)
    }

    func testANewResponseForgetsTheRefusedOne() {
        var file = body()
        file.rejected = HTTPURLResponse(url: URL(string: "http://a.test/")!, statusCode: 503, httpVersion: nil, headerFields: nil)
        file.keepRejected(Data("busy".utf8))
        file.responseArrived()
        XCTAssertNil(file.rejected)
        XCTAssertTrue(file.rejectedBody.isEmpty)
    }

    func testTheReportSaysWhatTheDownloadDid() {
        var file = body()
        file.attempts = 3
        file.retries = 1
        file.unverified = true
        let report = file.report
        XCTAssertEqual(report.attempts, 3)
        XCTAssertEqual(report.retries, 1)
        XCTAssertFalse(report.isVerified)
    }
}
