import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

@testable import Courier

/// A download's own bookkeeping decisions as a pure value (the writer is made, never used).
final class FileBodyTests: XCTestCase {
    private func body(
        _ policy: DownloadPolicy = DownloadPolicy(), destination: DownloadDestination = .file(URL(fileURLWithPath: "/nonexistent/out"))
    ) -> FileBody {
        let plan = DownloadPlan(
            destination: destination, policy: policy, validation: .default, partialFile: nil, resumeFrom: nil)
        return FileBody(plan: plan)
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
        let report = file.report(continuations: 2)
        XCTAssertEqual(report.continuations, 2)
        XCTAssertEqual(report.attempts, 3)
        XCTAssertEqual(report.retries, 1)
        XCTAssertFalse(report.isVerified)
    }

    // MARK: - The body's rules (FileBody+Rules.swift)

    private let url = URL(string: "http://files.test/big.bin")!
    private var ok: HTTPURLResponse { HTTPURLResponse(url: url, statusCode: 200, httpVersion: nil, headerFields: nil)! }

    func testABodyNothingCanProveCompleteIsRefusedUnlessTheCallerCanCheckIt() {
        // Given a body whose end nothing can prove
        let why = "the server announced no length"
        // When the policy has no expected length or checksum
        var plain = body()
        // Then it is refused, saying what would allow it
        XCTAssertEqual(plain.verify(why, url: url, response: ok)?.code, .integrityFailed)
        // And with an expected length it is fine, and verified
        var checked = DownloadPolicy()
        checked.expectedLength = 10
        var withLength = body(checked)
        XCTAssertNil(withLength.verify(why, url: url, response: ok))
        XCTAssertTrue(withLength.report(continuations: 0).isVerified)
    }

    func testAPolicyThatPublishesUnverifiedBodiesMarksThem() {
        var policy = DownloadPolicy()
        policy.publishesUnverifiedBodies = true
        var file = body(policy)
        XCTAssertNil(file.verify("no length", url: url, response: ok))
        XCTAssertFalse(file.report(continuations: 0).isVerified)
        // A later body that can be proven is verified again
        XCTAssertNil(file.verify(nil, url: url, response: ok))
        XCTAssertTrue(file.report(continuations: 0).isVerified)
    }

    func testTheLengthCheckComparesWithTheAnnouncementThenTheExpectedLength() {
        var policy = DownloadPolicy()
        policy.expectedLength = 100
        let file = body(policy)
        XCTAssertNil(file.lengthProblem(received: 100, announced: 100, url: url))
        XCTAssertEqual(file.lengthProblem(received: 90, announced: 100, url: url)?.code, .integrityFailed)
        XCTAssertEqual(file.lengthProblem(received: 90, announced: nil, url: url)?.code, .integrityFailed)
        XCTAssertNil(body().lengthProblem(received: 90, announced: nil, url: url), "nothing to compare with")
    }

    func testAnAtResponseDestinationIsAskedOnceThePartialFileExists() {
        // Given a download whose destination is decided when the head arrives
        let destination = DownloadDestination(timing: .atResponse) { _, _ in (URL(fileURLWithPath: "/tmp/x"), []) }
        var file = body(destination: destination)
        // Then it is not asked before the partial file exists
        XCTAssertNil(file.destinationToResolve)
        // And it is asked once it does
        file.partialFile = URL(fileURLWithPath: "/tmp/x.part")
        XCTAssertEqual(file.destinationToResolve?.1, URL(fileURLWithPath: "/tmp/x.part"))
        // And never again once it answered
        file.resolvedDestination = (URL(fileURLWithPath: "/tmp/x"), [])
        XCTAssertNil(file.destinationToResolve)
    }

    func testResumeDataNeedsAGetAStrongValidatorAndSomeBytes() {
        var file = body()
        file.partialFile = URL(fileURLWithPath: "/tmp/x.part")
        let get = URLRequest(url: url)
        var post = get
        post.httpMethod = "POST"
        func resume(_ request: URLRequest, _ received: Int64, _ validator: String?, allowEmpty: Bool = false) -> ResumeData? {
            file.resumeData(
                for: request, received: received, validator: validator, totalLength: 1000, sensitiveHeaders: [],
                allowEmpty: allowEmpty)
        }
        let made = resume(get, 400, "\"v1\"")
        XCTAssertEqual(made?.bytesOnDisk, 400)
        XCTAssertEqual(made?.validator, "\"v1\"")
        XCTAssertEqual(made?.totalLength, 1000)
        XCTAssertNil(resume(post, 400, "\"v1\""), "only a GET is continued")
        XCTAssertNil(resume(get, 400, nil), "no validator, no resuming")
        XCTAssertNil(resume(get, 0, "\"v1\""), "nothing to continue")
        XCTAssertNotNil(resume(get, 0, "\"v1\"", allowEmpty: true), "a record before any byte")
    }

    func testResumeDataKeepsNoCredential() {
        // Given a request with credentials in its URL and a secret header
        var file = body()
        file.partialFile = URL(fileURLWithPath: "/tmp/x.part")
        var request = URLRequest(url: URL(string: "http://user:secret@files.test/big.bin")!)
        request.setValue("Bearer abc", forHTTPHeaderField: "Authorization")
        request.setValue("yes", forHTTPHeaderField: "X-Trace")
        // When its resume data is made
        let resume = file.resumeData(
            for: request, received: 10, validator: "\"v1\"", totalLength: nil, sensitiveHeaders: ["x-trace"], allowEmpty: false)
        // Then neither the URL's credentials nor the secret headers are in it
        XCTAssertEqual(resume?.url.absoluteString, "http://files.test/big.bin")
        XCTAssertNil(resume?.headers["Authorization"])
        XCTAssertNil(resume?.headers["X-Trace"])
        XCTAssertEqual(Set(resume?.omittedHeaders ?? []), ["Authorization", "X-Trace"])
    }
}
