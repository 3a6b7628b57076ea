import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

@testable import Courier

/// A split download's decisions on the transfer's state (TransferState+Segments.swift): whether
/// the first answer starts a crew (only a 206 with the complete length and a strong `ETag`, from
/// the origin asked, for a file worth a second connection), and how a range the crew hands over is
/// announced. Pure: the state's writer is never used.
final class TransferStateSegmentsTests: XCTestCase {
    private let url = URL(string: "http://files.test/big.bin")!
    private let total: Int64 = 8 << 20

    /// A split download whose first request (`bytes=0-`) was answered with `etag` and `lastModified`.
    private func state(
        etag: String?, lastModified: String? = nil, total: Int64? = nil, emitsEvents: Bool = false
    )
        -> (TransferState, DownloadPlan, HTTPURLResponse)
    {
        var policy = DownloadPolicy()
        policy.split = .connections(4)
        let plan = DownloadPlan(
            destination: .file(URL(fileURLWithPath: "/nonexistent/out.bin")), policy: policy, validation: .default,
            partialFile: nil, resumeFrom: nil)
        var state = TransferState(
            context: TransferState.Context(
                originalRequest: URLRequest(url: url), upload: nil, validation: .default, maximumResponseSize: 1 << 20,
                progressInterval: .seconds(1), temporaryDirectory: URL(fileURLWithPath: "/nonexistent"), emitsEvents: emitsEvents),
            options: TaskOptions(interceptor: nil, redirectPolicy: .follow, credential: nil, sensitiveHeaders: [], deadline: nil), now: .now
        )
        state.file = FileBody(plan: plan)
        let length = total ?? self.total
        var fields = ["Content-Range": "bytes 0-\(length - 1)/\(length)", "Content-Length": String(length)]
        if let etag { fields["ETag"] = etag }
        if let lastModified { fields["Last-Modified"] = lastModified }
        let http = HTTPURLResponse(url: url, statusCode: 206, httpVersion: "HTTP/1.1", headerFields: fields)!
        // What the head's decision reads before asking (TransferState+Downloads.swift).
        state.expectedToReceive = length
        state.validator = BodyFacts.strongValidator(of: http)
        return (state, plan, http)
    }

    func testA206WithAStrongETagStartsACrewWithTheFirstConnectionOnTheWholeFile() {
        let (state, plan, http) = state(etag: "\"v1\"")
        guard case .begin(let map) = state.segmentsToBegin(http, offset: 0, end: total, plan) else {
            return XCTFail("no split")
        }
        XCTAssertEqual(map.validator, "\"v1\"")
        XCTAssertEqual(map.position(of: TransferState.primaryConnection), 0..<total)
    }

    func testAWeakETagOrOnlyADateGivesOneStream() {
        let (weak, plan, weakHTTP) = state(etag: "W/\"v1\"")
        XCTAssertEqual(weak.segmentsToBegin(weakHTTP, offset: 0, end: total, plan), .none)
        let (dated, _, datedHTTP) = state(etag: nil, lastModified: "Mon, 07 Dec 2026 09:00:00 GMT")
        XCTAssertEqual(dated.segmentsToBegin(datedHTTP, offset: 0, end: total, plan), .none)
    }

    func testAFileTooSmallForASecondConnectionGivesOneStream() {
        let small: Int64 = 1 << 20
        let (state, plan, http) = state(etag: "\"v1\"", total: small)
        XCTAssertEqual(state.segmentsToBegin(http, offset: 0, end: small, plan), .none)
    }

    func testAMapKeptForAnotherVersionIsNotContinued() throws {
        var (state, plan, http) = state(etag: "\"v2\"")
        state.file?.segments = try SegmentMap(
            url: url, validator: "\"v1\"", length: total, segments: [SegmentMap.Segment(start: 0, end: total, written: 0)])
        guard case .restart = state.segmentsToBegin(http, offset: 0, end: total, plan) else { return XCTFail("continued") }
    }

    func testARangeHandedOverIsAnnouncedAsARetryOwnedByASplitConnection() {
        var (state, _, _) = state(etag: "\"v1\"", emitsEvents: true)
        let error = CourierError(code: .connectionLost, message: "reset", url: url)
        state.announce(
            SplitCrew<URLSessionTask>.RangeRetry(
                connection: ConnectionID(3), error: error, retry: 2, limit: 7, delay: .seconds(1), bytesWritten: 1000,
                continuesFrom: 5000))
        guard case .retrying(let event)? = state.outbox.last?.0 else { return XCTFail("\(state.outbox.map(\.0))") }
        XCTAssertEqual(event.owner, .splitConnection)
        XCTAssertEqual(event.owner.name, "split-connection")
        XCTAssertEqual(event.retry, 2)
        XCTAssertEqual(event.retryLimit, 7)
        XCTAssertEqual(event.delay, .seconds(1))
        XCTAssertEqual(event.bytesReceived, 1000)
        XCTAssertEqual(event.continuesFrom, 5000)
        XCTAssertEqual(event.error.code, .connectionLost)
    }

    func testAnAttemptRetryEventIsOwnedByTheAttemptUnlessSaidOtherwise() {
        let event = TaskRetryEvent(
            error: CourierError(code: .timedOut, message: "slow"), retry: 1, retryLimit: 3, delay: .zero, bytesReceived: 0,
            continuesFrom: 0)
        XCTAssertEqual(event.owner, .attempt)
        XCTAssertNotEqual(RetryOwner.attempt, RetryOwner.splitConnection)
    }
}
