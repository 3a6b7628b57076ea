import XCTest
@testable import Courier
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// ``CourierError/Code-swift.struct/isTransient``, the one definition of "a later attempt may
/// succeed", for every code, and the places that use it.
final class TransientTests: XCTestCase {
    private static let transient: Set<String> = ["timedOut", "connectionRefused", "connectionLost", "noResponse", "network"]

    func testEveryCodeIsDecidedOnce() {
        let codes = CourierError.Code.allCodes
        XCTAssertEqual(codes.count, 36, "a new code must be decided here too")
        for code in codes {
            XCTAssertEqual(code.isTransient, Self.transient.contains(code.description), "\(code)")
        }
        XCTAssertFalse(CourierError.Code.dnsFailed.isTransient, "a name that did not resolve fails the same way again")
        XCTAssertFalse(CourierError.Code.tlsFailed.isTransient, "so does a certificate")
        XCTAssertFalse(CourierError.Code.deadlineExceeded.isTransient, "the task's time is spent")
        XCTAssertFalse(
            CourierError.Code.networkUnreachable.isTransient, "the next attempt meets the same routing table: wait for a route instead")
        XCTAssertTrue(CourierError.Code.networkUnreachable.isTransport, "nothing reached a server")
    }

    func testTheRetryPolicyRetriesExactlyTheTransientCodes() {
        let policy = RetryPolicy()
        let request = URLRequest(url: URL(string: "http://h/")!)
        for code in CourierError.Code.allCodes where code != .unacceptableStatusCode {
            let decision = policy.decision(for: request, error: CourierError(code: code, message: "m"), attempt: 0)
            XCTAssertEqual(decision != .doNotRetry, code.isTransient, "\(code)")
        }
    }

    func testAnEventStreamReconnectsAfterTheTransientCodesAPauseForItsConsumerAndALostRoute() {
        let state = ReconnectState(policy: .default, reconnects: true, pausesOnOverflow: true)
        for code in CourierError.Code.allCodes {
            let expected = code.isTransient || code == .bufferOverflow || code == .networkUnreachable
            XCTAssertEqual(state.mayReconnect(after: CourierError(code: code, message: "m")), expected, "\(code)")
        }
        let failing = ReconnectState(policy: .default, reconnects: true, pausesOnOverflow: false)
        XCTAssertFalse(failing.mayReconnect(after: CourierError(code: .bufferOverflow, message: "m")))
        let post = ReconnectState(policy: .default, reconnects: false, pausesOnOverflow: true)
        XCTAssertFalse(post.mayReconnect(after: CourierError(code: .connectionLost, message: "m")), "not sent again")
    }

    func testTheQueueTriesLaterWhatTimeCanMendBesidesTheTransientCodes() {
        func failure(_ code: CourierError.Code) -> DownloadQueue.Failure { DownloadQueue.Failure(CourierError(code: code, message: "m")) }
        for code in CourierError.Code.allCodes {
            let expected = code.isTransient || code.isTransport || code == .deadlineExceeded
            XCTAssertEqual(failure(code).isRetryable, expected, "\(code)")
        }
    }
}
