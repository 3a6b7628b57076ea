import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

@testable import Courier

/// A transfer's decisions as a value (TransferState.swift and its extensions): no socket, no
/// driver. Each test builds the state an attempt is in, runs one event (head arrived, body
/// arrived, attempt ended, cancel requested) and asserts on what it returns and what it leaves.
///
/// A download's file operations are decided, never done: the tests read them in the file body's
/// outbox (``FileBody/diskRequests``), so no test touches the disk; the paths below never exist.
final class TransferStateTests: XCTestCase {
    private static let session = URLSession(configuration: .ephemeral)
    private let url = URL(string: "http://files.test/big.bin")!
    private let directory = URL(fileURLWithPath: "/nonexistent/transfer-state", isDirectory: true)

    // MARK: - Helpers

    /// A URLSession task that stands for the attempt; it is never resumed.
    private func makeAttempt() -> URLSessionTask { Self.session.dataTask(with: url) }

    private func state(
        kind: TransferTask.Kind, emitsEvents: Bool = false, interceptor: Interceptor? = nil, maximumResponseSize: Int = 1 << 20
    ) -> TransferState {
        var upload: UploadBody?
        if case .upload(let body) = kind { upload = body }
        var state = TransferState(
            context: TransferState.Context(
                originalRequest: URLRequest(url: url), upload: upload, validation: .default,
                maximumResponseSize: maximumResponseSize, progressInterval: .seconds(1), temporaryDirectory: directory,
                emitsEvents: emitsEvents),
            options: TaskOptions(
                interceptor: interceptor, redirectPolicy: .follow, credential: nil, sensitiveHeaders: [], deadline: nil), now: .now)
        switch kind {
        case .download(let plan):
            state.file = FileBody(plan: plan)
        case .stream(let buffer, let policy):
            state.stream = StreamBody(buffer: buffer, policy: policy)
        case .data, .upload:
            break
        }
        return state
    }

    private func plan(_ policy: DownloadPolicy = DownloadPolicy(), partialFile: URL? = nil) -> DownloadPlan {
        DownloadPlan(
            destination: .file(directory.appendingPathComponent("out.bin")), policy: policy, validation: .default,
            partialFile: partialFile, resumeFrom: nil)
    }

    /// Puts `state` into a running attempt made of `attempt`.
    private func run(_ state: inout TransferState, _ attempt: URLSessionTask) {
        _ = state.phase.resumeRequested()
        let number = state.phase.attemptQueued()
        XCTAssertEqual(state.phase.attemptMade(attempt, number: number), .start)
        XCTAssertFalse(state.phase.launchFinished(attempt, failureRecorded: false))
    }

    /// A download that holds `held` bytes of a `total`-byte body with validator `"v1"`, running an
    /// attempt that asked for the rest with `Range`.
    private func continuingDownload(
        held: Int64, total: Int64, policy: DownloadPolicy = DownloadPolicy(), attempt: URLSessionTask
    ) -> (TransferState, URLRequest) {
        var state = state(kind: .download(plan(policy)))
        state.received = held
        state.validator = "\"v1\""
        state.expectedToReceive = total
        let request = state.restartRequest()
        run(&state, attempt)
        return (state, request)
    }

    /// A download running its first attempt, with no byte held.
    private func freshDownload(
        policy: DownloadPolicy = DownloadPolicy(), partialFile: URL? = nil, attempt: URLSessionTask
    )
        -> TransferState
    {
        var state = state(kind: .download(plan(policy, partialFile: partialFile)))
        run(&state, attempt)
        return state
    }

    private func response(_ status: Int, _ headers: [String: String]) -> HTTPURLResponse {
        HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)!
    }

    /// The file operations `state` decided since the last call, in order, in short words; taken
    /// from the outbox as `TransferTask.locked` takes them.
    private func diskRequests(_ state: inout TransferState) -> [String] {
        defer { state.file?.diskRequests.removeAll() }
        return (state.file?.diskRequests ?? []).map { request in
            switch request {
            case .directory(let url, let mayCreate, _):
                return "directory \(url.lastPathComponent)" + (mayCreate ? ", may create" : "")
            case .open(.fresh(let url), let hashing):
                return "open a fresh file in \(url.deletingLastPathComponent().lastPathComponent)" + (hashing ? ", hashing" : "")
            case .open(.existing(let url, let keeping), _): return "open \(url.lastPathComponent) keeping \(keeping)"
            case .append(let data): return "append \(data.count)"
            case .write(let data, let offset): return "write \(data.count) at \(offset)"
            case .truncate: return "truncate"
            case .remove(let urls): return "remove " + urls.map(\.lastPathComponent).joined(separator: " ")
            case .record(let resume, let url): return "record \(resume.bytesOnDisk) bytes in \(url.lastPathComponent)"
            }
        }
    }

    private func isNone(_ action: TransferAction) -> Bool {
        if case .none = action { return true }
        return false
    }

    private func cancelled(_ action: TransferAction) -> URLSessionTask? {
        if case .cancel(let task) = action { return task }
        return nil
    }

    // MARK: - A download's head

    func testTheRequestThatContinuesABodyAsksForTheRestOnlyIfUnchanged() {
        // Given a download holding 100 of 1000 bytes with a strong validator
        let (state, request) = continuingDownload(held: 100, total: 1000, attempt: makeAttempt())
        // Then the next attempt asks for byte 100 on, under If-Range, in identity encoding
        XCTAssertEqual(request.value(forHTTPHeaderField: "Range"), "bytes=100-")
        XCTAssertEqual(request.value(forHTTPHeaderField: "If-Range"), "\"v1\"")
        XCTAssertEqual(request.value(forHTTPHeaderField: "Accept-Encoding"), "identity")
        XCTAssertEqual(state.rangeOffset, 100)
    }

    func testA206ThatContinuesTheBytesHeldIsAppended() {
        // Given a download holding 100 of 1000 bytes that asked for the rest
        let attempt = makeAttempt()
        var (state, _) = continuingDownload(held: 100, total: 1000, attempt: attempt)
        // When a 206 for exactly bytes 100-999 arrives
        let action = state.headArrived(
            response(206, ["Content-Range": "bytes 100-999/1000", "Content-Length": "900", "ETag": "\"v1\""]), attempt)
        // Then the bytes held are kept and the span ends at the file's end
        XCTAssertTrue(isNone(action))
        XCTAssertNil(state.failure)
        XCTAssertEqual(state.received, 100)
        XCTAssertEqual(state.spanEnd, 1000)
        XCTAssertEqual(state.validator, "\"v1\"")
        XCTAssertNotNil(state.file?.partialFile)
    }

    func testA200WhereA206WasAskedForStartsTheFileOver() {
        // Given a download holding 100 bytes that asked for the rest
        let attempt = makeAttempt()
        var (state, _) = continuingDownload(held: 100, total: 1000, attempt: attempt)
        // When the server answers 200 with a whole, new body
        let action = state.headArrived(response(200, ["Content-Length": "1200", "ETag": "\"v2\""]), attempt)
        // Then nothing is appended: the body starts at byte 0, with the new validator and length
        XCTAssertTrue(isNone(action))
        XCTAssertNil(state.failure)
        XCTAssertEqual(state.received, 0)
        XCTAssertEqual(state.validator, "\"v2\"")
        XCTAssertEqual(state.expectedToReceive, 1200)
        XCTAssertNil(state.spanEnd)
    }

    func testA416ForExactlyTheBytesHeldMeansTheFileIsComplete() {
        // Given a download holding all 1000 bytes that asked for more
        let attempt = makeAttempt()
        var (state, _) = continuingDownload(held: 1000, total: 1000, attempt: attempt)
        // When the server answers 416 for a 1000-byte resource
        let action = state.headArrived(response(416, ["Content-Range": "bytes */1000"]), attempt)
        // Then the body is ignored, and the attempt's end completes the task with no error
        XCTAssertTrue(isNone(action))
        XCTAssertTrue(state.ignoresBody)
        guard case .finish(let completion) = state.attemptEnded(nil, facts: AttemptFacts(invalidated: false)) else {
            return XCTFail("a complete file finishes the task")
        }
        XCTAssertNil(completion.outcome.error)
        XCTAssertTrue(completion.outcome.alreadyComplete)
        guard case .publish? = completion.ending?.0 else { return XCTFail("the file is published") }
    }

    func testA416ForADifferentLengthIsNoProofOfCompletion() {
        // Given a download holding 100 of 1000 bytes
        let attempt = makeAttempt()
        var (state, _) = continuingDownload(held: 100, total: 1000, attempt: attempt)
        // When the server answers 416 for a 5000-byte resource
        let action = state.headArrived(response(416, ["Content-Range": "bytes */5000"]), attempt)
        // Then the file is not taken as complete: it is fetched again from byte 0
        XCTAssertFalse(state.ignoresBody)
        guard case .restart(let stopped, let request) = action else { return XCTFail("a restart without Range") }
        XCTAssertTrue(stopped === attempt)
        XCTAssertNil(request.value(forHTTPHeaderField: "Range"))
        XCTAssertEqual(state.received, 0)
    }

    func testA206ThatStartsElsewhereStartsOverWithoutRangeABoundedNumberOfTimes() {
        // Given a download holding 100 bytes that asked for the rest
        var attempt = makeAttempt()
        var (state, _) = continuingDownload(held: 100, total: 1000, attempt: attempt)
        for round in 1...FileBody.restartLimit {
            // When the 206 starts at byte 50
            let action = state.headArrived(
                response(206, ["Content-Range": "bytes 50-999/1000", "Content-Length": "950", "ETag": "\"v1\""]), attempt)
            // Then the attempt is replaced by the whole request, the bytes held dropped
            guard case .restart(let stopped, let request) = action else { return XCTFail("round \(round): a restart") }
            XCTAssertTrue(stopped === attempt)
            XCTAssertNil(request.value(forHTTPHeaderField: "Range"))
            XCTAssertEqual(state.received, 0)
            XCTAssertEqual(state.restarts, round)
            // (the next attempt asked with Range again, as a server that keeps doing this would see)
            attempt = makeAttempt()
            state.received = 100
            _ = state.rangeRequest(URLRequest(url: url), from: 100, validator: "\"v1\"")
            _ = state.phase.attemptQueued()
            _ = state.phase.attemptMade(attempt, number: state.phase.attemptQueued())
            _ = state.phase.launchFinished(attempt, failureRecorded: false)
        }
        // And one more in a row fails instead of looping
        let last = state.headArrived(
            response(206, ["Content-Range": "bytes 50-999/1000", "Content-Length": "950", "ETag": "\"v1\""]), attempt)
        XCTAssertNotNil(cancelled(last))
        XCTAssertEqual(state.failure?.code, .invalidResponse)
    }

    func testA206ToARequestWithoutRangeIsNeverTakenAsTheFile() {
        // Given a fresh download
        let attempt = makeAttempt()
        var state = freshDownload(attempt: attempt)
        // When a 206 answers it
        let action = state.headArrived(response(206, ["Content-Range": "bytes 0-9/100", "Content-Length": "10"]), attempt)
        // Then the attempt stops with an invalid response
        XCTAssertTrue(cancelled(action) === attempt)
        XCTAssertEqual(state.failure?.code, .invalidResponse)
    }

    func testAnErrorPageNeverTouchesThePartialFile() {
        // Given a download holding 100 bytes that asked for the rest
        let attempt = makeAttempt()
        var (state, _) = continuingDownload(held: 100, total: 1000, attempt: attempt)
        // When a 503 error page arrives
        XCTAssertTrue(isNone(state.headArrived(response(503, ["Content-Length": "4"]), attempt)))
        XCTAssertTrue(isNone(state.bodyArrived(Data("busy".utf8), attempt)))
        // Then it is kept aside for the error, and the bytes held stay
        XCTAssertEqual(state.file?.rejected?.statusCode, 503)
        XCTAssertEqual(state.file?.rejectedBody, Data("busy".utf8))
        XCTAssertEqual(state.received, 100)
    }

    func testABodyNothingCanProveCompleteIsRefusedBeforeAnyByte() {
        // Given a fresh download with no expected length or checksum
        let attempt = makeAttempt()
        var state = freshDownload(attempt: attempt)
        // When a 200 arrives with no length that is not chunked
        let action = state.headArrived(response(200, [:]), attempt)
        // Then the attempt stops with an integrity failure
        XCTAssertTrue(cancelled(action) === attempt)
        XCTAssertEqual(state.failure?.code, .integrityFailed)
    }

    func testAcceptingABodyWritesTheRecordBeforeAnyByte() throws {
        // Given a download whose partial file has a fixed place (so it keeps a record)
        let attempt = makeAttempt()
        let partial = directory.appendingPathComponent("out.bin.part")
        var state = freshDownload(partialFile: partial, attempt: attempt)
        let record = try XCTUnwrap(state.file?.plan.recordFile).lastPathComponent
        // When its 200 arrives
        XCTAssertTrue(isNone(state.headArrived(response(200, ["Content-Length": "10", "ETag": "\"v1\""]), attempt)))
        // Then the writer is asked to drop any earlier record, then for the file's directory (not
        // created: the caller did not allow it), the file, and the new record at once, in that order
        XCTAssertNotNil(state.file?.lastRecordWrite)
        XCTAssertEqual(
            diskRequests(&state),
            ["remove \(record)", "directory transfer-state", "open out.bin.part keeping 0", "record 0 bytes in \(record)"])
        // And the bytes follow
        _ = state.bodyArrived(Data(count: 4), attempt)
        XCTAssertEqual(diskRequests(&state), ["append 4"])
    }

    func testAFreshDownloadIsStagedInItsOwnDirectoryAndNothingIsAskedOfTheDiskBeforeItsHead() {
        // Given a download with no fixed partial file, whose SHA-256 is expected
        var policy = DownloadPolicy()
        policy.expectedSHA256 = [UInt8](repeating: 0, count: 32)
        let attempt = makeAttempt()
        var state = freshDownload(policy: policy, attempt: attempt)
        XCTAssertEqual(diskRequests(&state), [])
        // When its 200 and its body arrive
        _ = state.headArrived(response(200, ["Content-Length": "10"]), attempt)
        _ = state.bodyArrived(Data(count: 10), attempt)
        // Then a fresh staging file is asked for beside the destination, hashed, then written;
        // nothing else (no record: the file has no fixed place)
        XCTAssertEqual(
            diskRequests(&state), ["directory transfer-state", "open a fresh file in transfer-state, hashing", "append 10"])
    }

    func testAFullBodyAfterHeldBytesDropsTheRecordThenStartsTheSameFileOver() throws {
        // Given a download with a fixed partial file holding 400 of 1000 bytes, continuing
        let attempt = makeAttempt()
        var state = freshDownload(partialFile: directory.appendingPathComponent("out.bin.part"), attempt: attempt)
        let record = try XCTUnwrap(state.file?.plan.recordFile).lastPathComponent
        _ = state.headArrived(response(200, ["Content-Length": "1000", "ETag": "\"v1\""]), attempt)
        _ = state.bodyArrived(Data(count: 400), attempt)
        guard case .retry = state.attemptEnded(nil, facts: AttemptFacts(invalidated: false)) else { return XCTFail("a continuation") }
        _ = diskRequests(&state)
        let next = makeAttempt()
        _ = state.phase.retryDelayElapsed()
        _ = state.phase.attemptMade(next, number: state.phase.attemptQueued())
        _ = state.phase.launchFinished(next, failureRecorded: false)
        // When the server answers the Range with a full 200 (the resource changed)
        XCTAssertTrue(isNone(state.headArrived(response(200, ["Content-Length": "1000", "ETag": "\"v2\""]), next)))
        // Then the old record goes first, then the file is truncated (not opened again; once by the
        // body's reset, once by the new start, which is a no-op on an empty file), then the new
        // record: no record ever claims bytes the file no longer holds
        XCTAssertEqual(diskRequests(&state), ["remove \(record)", "truncate", "truncate", "record 0 bytes in \(record)"])
        XCTAssertEqual(state.received, 0)
    }

    func testAContinuationAppendsToTheFileItHasWithoutOpeningItAgain() {
        // Given a download with a fixed partial file holding 400 of 1000 bytes, continuing
        let attempt = makeAttempt()
        var state = freshDownload(partialFile: directory.appendingPathComponent("out.bin.part"), attempt: attempt)
        _ = state.headArrived(response(200, ["Content-Length": "1000", "ETag": "\"v1\""]), attempt)
        _ = state.bodyArrived(Data(count: 400), attempt)
        guard case .retry = state.attemptEnded(nil, facts: AttemptFacts(invalidated: false)) else { return XCTFail("a continuation") }
        _ = diskRequests(&state)
        let next = makeAttempt()
        _ = state.phase.retryDelayElapsed()
        _ = state.phase.attemptMade(next, number: state.phase.attemptQueued())
        _ = state.phase.launchFinished(next, failureRecorded: false)
        // When the 206 for the rest arrives, then its bytes
        _ = state.headArrived(response(206, ["Content-Range": "bytes 400-999/1000", "Content-Length": "600", "ETag": "\"v1\""]), next)
        _ = state.bodyArrived(Data(count: 600), next)
        // Then only the record and the new bytes are asked for
        let requests = diskRequests(&state)
        XCTAssertEqual(requests.filter { !$0.hasPrefix("record") }, ["append 600"])
        XCTAssertEqual(requests.first?.hasPrefix("record 400 bytes"), true, "\(requests)")
    }

    // MARK: - A download's body

    func testAChunkPastTheEndOfItsRangeStopsTheAttemptKeepingTheBytesInRange() {
        // Given a 206 for bytes 100-199 of a download holding 100 bytes
        let attempt = makeAttempt()
        var (state, _) = continuingDownload(held: 100, total: 1000, attempt: attempt)
        _ = state.headArrived(response(206, ["Content-Range": "bytes 100-199/1000", "Content-Length": "100", "ETag": "\"v1\""]), attempt)
        // When 150 bytes arrive
        let action = state.bodyArrived(Data(count: 150), attempt)
        // Then only the 100 in range count, and the attempt stops
        XCTAssertTrue(cancelled(action) === attempt)
        XCTAssertEqual(state.received, 200)
        XCTAssertEqual(state.failure?.code, .invalidResponse)
        XCTAssertEqual(state.file?.keepsBytes, true)
    }

    func testMoreThanTheExpectedLengthStopsTheDownload() {
        // Given a download that expects 10 bytes
        var policy = DownloadPolicy()
        policy.expectedLength = 10
        let attempt = makeAttempt()
        var state = freshDownload(policy: policy, attempt: attempt)
        _ = state.headArrived(response(200, ["Transfer-Encoding": "chunked"]), attempt)
        // When 11 arrive
        let action = state.bodyArrived(Data(count: 11), attempt)
        // Then it stops with an integrity failure
        XCTAssertTrue(cancelled(action) === attempt)
        XCTAssertEqual(state.failure?.code, .integrityFailed)
    }

    func testADiskThatFallsBehindPausesAContinuableDownload() {
        // Given a continuable download whose writer may hold 64 KiB
        var policy = DownloadPolicy()
        policy.maximumBufferedBytes = 0
        let attempt = makeAttempt()
        var (state, _) = continuingDownload(held: 100, total: 10_000_000, policy: policy, attempt: attempt)
        _ = state.headArrived(
            response(206, ["Content-Range": "bytes 100-9999999/10000000", "Content-Length": "9999900", "ETag": "\"v1\""]), attempt)
        // When a chunk leaves more than that waiting for the disk
        let action = state.bodyArrived(Data(count: 200 * 1024), attempt)
        // Then the attempt stops, to continue once the backlog is down to half the limit
        guard case .pauseDownload(let stopped, let drainedTo) = action else { return XCTFail("a pause for the disk") }
        XCTAssertTrue(stopped === attempt)
        XCTAssertEqual(drainedTo, 32 * 1024)
        XCTAssertEqual(state.file?.diskPauses, 1)
        XCTAssertFalse(state.phase.isRunning(attempt), "its late callbacks are ignored")
    }

    // MARK: - A download's end

    func testABodyThatEndsShortContinuesWithRangeWithoutARetry() {
        // Given a fresh download whose 200 announced 1000 bytes
        let attempt = makeAttempt()
        var state = freshDownload(attempt: attempt)
        _ = state.headArrived(response(200, ["Content-Length": "1000", "ETag": "\"v1\""]), attempt)
        _ = state.bodyArrived(Data(count: 400), attempt)
        // When the attempt ends without an error after 400
        let followUp = state.attemptEnded(nil, facts: AttemptFacts(invalidated: false))
        // Then the next attempt asks for byte 400 on, at once, announced as no retry
        guard case .retry(let request, let delay, let event) = followUp else { return XCTFail("a continuation") }
        XCTAssertEqual(request.value(forHTTPHeaderField: "Range"), "bytes=400-")
        XCTAssertEqual(request.value(forHTTPHeaderField: "If-Range"), "\"v1\"")
        XCTAssertEqual(delay, .zero)
        XCTAssertNil(event)
        XCTAssertEqual(state.file?.retries, 0)
        // And its continuation event will name the continuation as who tries again (Docs/Retries.md)
        XCTAssertEqual(state.metrics.nextOwner, .continuation)
    }

    func testContinuationsThatAddNothingEndTheDownloadKeepingItsBytes() {
        // Given a download whose every attempt ends at byte 400 of 1000
        let attempt = makeAttempt()
        var state = freshDownload(attempt: attempt)
        _ = state.headArrived(response(200, ["Content-Length": "1000", "ETag": "\"v1\""]), attempt)
        _ = state.bodyArrived(Data(count: 400), attempt)
        var followUp = state.attemptEnded(nil, facts: AttemptFacts(invalidated: false))
        for _ in 0..<FileBody.stallLimit {
            guard case .retry = followUp else { break }
            let next = makeAttempt()
            _ = state.phase.retryDelayElapsed()
            _ = state.phase.attemptMade(next, number: state.phase.attemptQueued())
            _ = state.phase.launchFinished(next, failureRecorded: false)
            _ = state.headArrived(
                response(206, ["Content-Range": "bytes 400-999/1000", "Content-Length": "600", "ETag": "\"v1\""]), next)
            followUp = state.attemptEnded(nil, facts: AttemptFacts(invalidated: false))
        }
        // Then the download fails, and what it holds is kept with resume data
        guard case .finish(let completion) = followUp else { return XCTFail("the stalls end the download") }
        XCTAssertEqual(completion.outcome.error?.code, .invalidResponse)
        guard case .keep(let resume, _)? = completion.ending?.0 else { return XCTFail("the bytes are kept") }
        XCTAssertEqual(resume.bytesOnDisk, 400)
        XCTAssertEqual(resume.validator, "\"v1\"")
    }

    func testATransientFailureRetriesAndContinuesWithRange() {
        // Given a download holding 400 of 1000 bytes under the default retry policy
        let attempt = makeAttempt()
        var state = freshDownload(attempt: attempt)
        _ = state.headArrived(response(200, ["Content-Length": "1000", "ETag": "\"v1\""]), attempt)
        _ = state.bodyArrived(Data(count: 400), attempt)
        // When the connection is reset
        let reset = URLError(.networkConnectionLost)
        let followUp = state.attemptEnded(reset, facts: AttemptFacts(invalidated: false))
        // Then a retry is planned that continues from byte 400
        guard case .retry(let request, _, let event?) = followUp else { return XCTFail("a retry") }
        XCTAssertEqual(request.value(forHTTPHeaderField: "Range"), "bytes=400-")
        XCTAssertEqual(event.continuesFrom, 400)
        XCTAssertEqual(state.attempt, 1)
        XCTAssertEqual(state.file?.retries, 1)
    }

    /// A GET data task in a running attempt, waiting for connectivity or not.
    private func dataTask(waitsForConnectivity: Bool, attempt: URLSessionTask) -> TransferState {
        var state = TransferState(
            context: TransferState.Context(
                originalRequest: URLRequest(url: url), upload: nil, validation: .default, maximumResponseSize: 1 << 20,
                progressInterval: .seconds(1), temporaryDirectory: directory, emitsEvents: false,
                waitsForConnectivity: waitsForConnectivity),
            options: TaskOptions(interceptor: nil, redirectPolicy: .follow, credential: nil, sensitiveHeaders: [], deadline: nil), now: .now
        )
        run(&state, attempt)
        return state
    }

    func testALostRouteIsTheNetworksFaultDecidedFromTheFactsTheDriverGives() {
        let lost = URLError(.networkConnectionLost)
        // Given a route the driver found gone, and a task that waits for connectivity
        var waiting = dataTask(waitsForConnectivity: true, attempt: makeAttempt())
        // Then the request waits for the route: an attempt at once, no retry spent, nothing announced
        guard case .retry(_, let delay, let event) = waiting.attemptEnded(lost, facts: AttemptFacts(invalidated: false, routeIsGone: true))
        else { return XCTFail("a wait for the route") }
        XCTAssertEqual(delay, .zero)
        XCTAssertNil(event)
        // And without waitsForConnectivity the task fails with networkUnreachable (not transient)
        var plain = dataTask(waitsForConnectivity: false, attempt: makeAttempt())
        guard case .finish(let completion) = plain.attemptEnded(lost, facts: AttemptFacts(invalidated: false, routeIsGone: true))
        else { return XCTFail("the end") }
        XCTAssertEqual(completion.outcome.error?.code, .networkUnreachable)
        // And with the route there the same failure is an ordinary lost connection
        var routed = dataTask(waitsForConnectivity: true, attempt: makeAttempt())
        guard case .finish(let ordinary) = routed.attemptEnded(lost, facts: AttemptFacts(invalidated: false, routeIsGone: false))
        else { return XCTFail("no retry policy: the end") }
        XCTAssertEqual(ordinary.outcome.error?.code, .connectionLost)
        // And an invalidated manager never waits
        var closing = dataTask(waitsForConnectivity: true, attempt: makeAttempt())
        guard case .finish = closing.attemptEnded(lost, facts: AttemptFacts(invalidated: true, routeIsGone: true))
        else { return XCTFail("the end") }
    }

    func testProgressIsThrottledByTheTimeTheDriverGivesNotByAClock() {
        // Given a data task with a download observer and a progress interval of 1 s
        var state = dataTask(waitsForConnectivity: false, attempt: makeAttempt())
        state.observers.append(ProgressObserver(direction: .download, handler: { _ in }, finish: nil))
        let start = state.now
        // Then the first update is due, one 0.5 s later is not, one 1 s after the first is
        XCTAssertNotNil(state.dueProgress(.download))
        state.now = start + .milliseconds(500)
        XCTAssertNil(state.dueProgress(.download))
        state.now = start + .seconds(1)
        XCTAssertNotNil(state.dueProgress(.download))
        // And the clock standing still means no update, however long the test takes
        Thread.sleep(forTimeInterval: 0.01)
        XCTAssertNil(state.dueProgress(.download))
    }

    func testNothingRetriesOnceTheManagerIsInvalidated() {
        // Given a download holding 400 bytes
        let attempt = makeAttempt()
        var state = freshDownload(attempt: attempt)
        _ = state.headArrived(response(200, ["Content-Length": "1000", "ETag": "\"v1\""]), attempt)
        _ = state.bodyArrived(Data(count: 400), attempt)
        // When its attempt is cancelled because the manager was invalidated
        let followUp = state.attemptEnded(URLError(.cancelled), facts: AttemptFacts(invalidated: true))
        // Then it finishes as invalidated, keeping its bytes
        guard case .finish(let completion) = followUp else { return XCTFail("no retry") }
        XCTAssertEqual(completion.outcome.error?.code, .sessionInvalidated)
        guard case .keep? = completion.ending?.0 else { return XCTFail("the bytes are kept") }
    }

    func testCancelProducingResumeDataKeepsTheBytesWithTheirResumeData() {
        // Given a download holding 400 bytes, cancelled with a request for resume data
        let attempt = makeAttempt()
        var state = freshDownload(attempt: attempt)
        _ = state.headArrived(response(200, ["Content-Length": "1000", "ETag": "\"v1\""]), attempt)
        _ = state.bodyArrived(Data(count: 400), attempt)
        state.file?.producesResumeData = true
        XCTAssertEqual(state.phase.cancelRequested(), .cancelAttempt(attempt))
        // When the cancelled attempt ends
        guard case .finish(let completion) = state.attemptEnded(URLError(.cancelled), facts: AttemptFacts(invalidated: false)) else {
            return XCTFail("a cancel finishes the task")
        }
        // Then the task is cancelled, and its bytes are kept with resume data
        XCTAssertEqual(completion.outcome.error?.code, .cancelled)
        guard case .keep(let resume, _)? = completion.ending?.0 else { return XCTFail("the bytes are kept") }
        XCTAssertEqual(resume.bytesOnDisk, 400)
        XCTAssertEqual(resume.validator, "\"v1\"")
        XCTAssertEqual(resume.totalLength, 1000)
    }

    func testAPlainCancelDiscardsTheFile() {
        // Given a download holding 400 bytes
        let attempt = makeAttempt()
        var state = freshDownload(attempt: attempt)
        _ = state.headArrived(response(200, ["Content-Length": "1000", "ETag": "\"v1\""]), attempt)
        _ = state.bodyArrived(Data(count: 400), attempt)
        // When it is cancelled without asking for resume data
        XCTAssertEqual(state.phase.cancelRequested(), .cancelAttempt(attempt))
        guard case .finish(let completion) = state.attemptEnded(URLError(.cancelled), facts: AttemptFacts(invalidated: false)) else {
            return XCTFail("a cancel finishes the task")
        }
        // Then the file goes
        XCTAssertEqual(completion.outcome.error?.code, .cancelled)
        guard case .discard? = completion.ending?.0 else { return XCTFail("the bytes are discarded") }
    }

    // MARK: - Memory and streams

    func testADataTaskRefusesABodyAnnouncedOverItsLimit() {
        // Given a data task that may hold 100 bytes
        let attempt = makeAttempt()
        var state = state(kind: .data, maximumResponseSize: 100)
        run(&state, attempt)
        // When a 200 announces 101
        let action = state.headArrived(response(200, ["Content-Length": "101"]), attempt)
        // Then the attempt stops before any of it arrives
        XCTAssertTrue(cancelled(action) === attempt)
        XCTAssertEqual(state.failure?.code, .responseTooLarge)
    }

    func testADataTasksValidatorIsItsSuccessfulResponsesStrongOneAndAnErrorPageHasNone() {
        // Given a data task whose 200 carries a strong ETag and a date
        let attempt = makeAttempt()
        var state = state(kind: .data)
        run(&state, attempt)
        _ = state.headArrived(
            response(200, ["Content-Length": "10", "ETag": "\"v1\"", "Last-Modified": "Mon, 07 Dec 2026 10:00:00 GMT"]), attempt)
        // Then a continuation would ask `If-Range` with the ETag (read from the head when asked)
        XCTAssertEqual(state.validator, "\"v1\"")
        // And a weak ETag falls back to the date; a content-encoded body has no validator
        _ = state.headArrived(response(200, ["ETag": "W/\"v1\"", "Last-Modified": "Mon, 07 Dec 2026 10:00:00 GMT"]), attempt)
        XCTAssertEqual(state.validator, "Mon, 07 Dec 2026 10:00:00 GMT")
        _ = state.headArrived(response(200, ["ETag": "\"v1\"", "Content-Encoding": "gzip"]), attempt)
        XCTAssertNil(state.validator)
        // And an error page's validator never backs a `Range` request for the resource
        _ = state.headArrived(response(500, ["ETag": "\"oops\""]), attempt)
        XCTAssertNil(state.validator)
        // And a value set later replaces the one read from the head
        _ = state.headArrived(response(200, ["ETag": "\"v2\""]), attempt)
        state.validator = "\"kept\""
        XCTAssertEqual(state.validator, "\"kept\"")
    }

    func testAStreamThatDeliveredBytesNeverStartsOver() {
        // Given a stream whose consumer has 10 bytes of a body with no validator
        let attempt = makeAttempt()
        var state = state(kind: .stream(StreamBuffer(url: url, limit: 1 << 20), StreamPolicy()))
        run(&state, attempt)
        guard case .streamResponse = state.headArrived(response(200, ["Content-Length": "100"]), attempt) else {
            return XCTFail("the head goes to the consumer")
        }
        guard case .streamChunk = state.bodyArrived(Data(count: 10), attempt) else { return XCTFail("the chunk too") }
        // Then no later attempt may start it over
        XCTAssertTrue(state.streamCannotContinue())
        // And a new 200 on the same attempt is refused rather than delivered twice
        let again = state.headArrived(response(200, ["Content-Length": "100"]), attempt)
        XCTAssertTrue(cancelled(again) === attempt)
        XCTAssertEqual(state.failure?.code, .invalidResponse)
    }

    // MARK: - Public operations and stops

    /// Stands for the public handle.
    private final class Handle: SessionTask {
        var taskIdentifier: Int { 1 }
        var state: TaskLifecycle.State { .running }
        var originalRequest: URLRequest { URLRequest(url: URL(string: "http://files.test/")!) }
        var currentRequest: URLRequest? { nil }
        var response: HTTPURLResponse? { nil }
        var uploadProgress: Progress { Progress(totalUnitCount: 0) }
        var downloadProgress: Progress { Progress(totalUnitCount: 0) }
        func resume() {}
        func suspend() {}
        func cancel() {}
        func addProgressHandler(_ direction: ProgressDirection, _ handler: @escaping @Sendable (Progress) -> Void) {}
        func progressUpdates(_ direction: ProgressDirection) -> AsyncStream<Progress> { AsyncStream { $0.finish() } }
    }

    func testResumeAfterSuspendContinuesTheDownloadWithRange() {
        // Given a download holding 400 of 1000 bytes, suspended
        let attempt = makeAttempt()
        var state = freshDownload(attempt: attempt)
        _ = state.headArrived(response(200, ["Content-Length": "1000", "ETag": "\"v1\""]), attempt)
        _ = state.bodyArrived(Data(count: 400), attempt)
        let handle = Handle()
        guard case .some(let stopped?) = state.suspendRequested(handle: handle) else { return XCTFail("its attempt stops") }
        XCTAssertTrue(stopped === attempt)
        // When it is resumed
        let step = state.resumeRequested(handle: handle, initialRequest: URLRequest(url: url))
        // Then the next attempt asks for byte 400 on, and is no first resume
        guard case .start(let request, let first) = step else { return XCTFail("an attempt starts") }
        XCTAssertFalse(first)
        XCTAssertEqual(request.value(forHTTPHeaderField: "Range"), "bytes=400-")
    }

    func testResumingAStreamThatCannotContinueFailsIt() {
        // Given a stream whose consumer has 10 bytes of a body with no validator, suspended
        let attempt = makeAttempt()
        var state = state(kind: .stream(StreamBuffer(url: url, limit: 1 << 20), StreamPolicy()))
        run(&state, attempt)
        _ = state.headArrived(response(200, ["Content-Length": "100"]), attempt)
        _ = state.bodyArrived(Data(count: 10), attempt)
        let handle = Handle()
        _ = state.suspendRequested(handle: handle)
        // When it is resumed
        // Then it cannot be: starting over would repeat the bytes delivered
        guard case .cannotContinue = state.resumeRequested(handle: handle, initialRequest: URLRequest(url: url)) else {
            return XCTFail("the stream cannot continue")
        }
    }

    func testTheRecordIsBroughtUpToDateAtEachCheckpoint() {
        // Given a download with a fixed partial file (so it keeps a record), 400 of 1000 bytes in
        let attempt = makeAttempt()
        var state = freshDownload(partialFile: directory.appendingPathComponent("out.bin.part"), attempt: attempt)
        _ = state.headArrived(response(200, ["Content-Length": "1000", "ETag": "\"v1\""]), attempt)
        _ = state.bodyArrived(Data(count: 400), attempt)
        // When the body ends short (a continuation)
        state.file?.lastRecordWrite = nil
        guard case .retry = state.attemptEnded(nil, facts: AttemptFacts(invalidated: false)) else { return XCTFail("a continuation") }
        // Then the record holds what the next attempt continues from
        XCTAssertNotNil(state.file?.lastRecordWrite)
        // And so after a retry
        let next = makeAttempt()
        _ = state.phase.retryDelayElapsed()
        _ = state.phase.attemptMade(next, number: state.phase.attemptQueued())
        _ = state.phase.launchFinished(next, failureRecorded: false)
        _ = state.headArrived(response(206, ["Content-Range": "bytes 400-999/1000", "Content-Length": "600", "ETag": "\"v1\""]), next)
        state.file?.lastRecordWrite = nil
        guard case .retry = state.attemptEnded(URLError(.networkConnectionLost), facts: AttemptFacts(invalidated: false)) else {
            return XCTFail("a retry")
        }
        XCTAssertNotNil(state.file?.lastRecordWrite)
        // And on suspend
        state.file?.lastRecordWrite = nil
        _ = state.suspendRequested(handle: Handle())
        XCTAssertNotNil(state.file?.lastRecordWrite)
    }

    func testACancelWhileTheAttemptIsLaunchedIsLeftToTheLauncher() {
        // Given a download whose attempt is made but not yet registered
        var state = state(kind: .download(plan()))
        _ = state.phase.resumeRequested()
        XCTAssertEqual(state.phase.attemptMade(makeAttempt(), number: state.phase.attemptQueued()), .start)
        // When it is cancelled
        // Then nothing is done now: the launcher cancels it once it can be routed
        guard case .none = state.cancelRequested() else { return XCTFail("left to the launcher") }
        XCTAssertEqual(state.phase.state, .cancelling)
    }

    func testAStopWhileWaitingToRetryFinishesNowKeepingTheBytes() {
        // Given a download holding 400 bytes that waits to retry after a reset
        let attempt = makeAttempt()
        var state = freshDownload(attempt: attempt)
        _ = state.headArrived(response(200, ["Content-Length": "1000", "ETag": "\"v1\""]), attempt)
        _ = state.bodyArrived(Data(count: 400), attempt)
        guard case .retry = state.attemptEnded(URLError(.networkConnectionLost), facts: AttemptFacts(invalidated: false)) else {
            return XCTFail("a retry")
        }
        // When its deadline passes
        let deadline = CourierError(code: .deadlineExceeded, message: "the deadline passed")
        // Then it finishes now, with that error and its bytes kept
        guard case .finish(let completion) = state.stopRequested(deadline, keepingBytes: true) else {
            return XCTFail("no attempt runs: it finishes now")
        }
        XCTAssertEqual(completion.outcome.error?.code, .deadlineExceeded)
        guard case .keep(let resume, _)? = completion.ending?.0 else { return XCTFail("the bytes are kept") }
        XCTAssertEqual(resume.bytesOnDisk, 400)
        // And a second stop does nothing
        guard case .none = state.stopRequested(deadline, keepingBytes: true) else { return XCTFail("once") }
    }

    func testAStopWhileAnAttemptRunsIsReportedByItsCompletion() {
        // Given a running data task
        let attempt = makeAttempt()
        var state = state(kind: .data)
        run(&state, attempt)
        // When a stop arrives
        let deadline = CourierError(code: .deadlineExceeded, message: "the deadline passed")
        guard case .cancel(let stopped) = state.stopRequested(deadline, keepingBytes: false) else {
            return XCTFail("the attempt is cancelled")
        }
        XCTAssertTrue(stopped === attempt)
        // Then the attempt's end reports it, with no retry
        guard case .finish(let completion) = state.attemptEnded(URLError(.cancelled), facts: AttemptFacts(invalidated: false)) else {
            return XCTFail("the task finishes")
        }
        XCTAssertEqual(completion.outcome.error?.code, .deadlineExceeded)
    }

    func testTheTaskCompletesOnce() {
        // Given a data task that failed at once
        var state = state(kind: .data)
        let handle = Handle()
        XCTAssertNotNil(state.finishRequested(.cancelled(url: url), handle: handle, keepingBytes: false))
        // When it is failed again
        // Then there is no second completion
        XCTAssertNil(state.finishRequested(.cancelled(url: url), handle: handle, keepingBytes: false))
        guard case .none = state.cancelRequested() else { return XCTFail("nothing to cancel") }
    }

    // MARK: - Events

    func testEventsWaitInTheOutboxInTheOrderTheyWereDecided() {
        // Given a download that continues from byte 100, with someone listening
        var state = state(kind: .download(plan()), emitsEvents: true)
        state.received = 100
        state.validator = "\"v1\""
        let request = state.restartRequest()
        // When its attempt starts
        state.noteAttempt(request)
        // Then the attempt's start, then its continuation, wait for the driver to queue them
        XCTAssertEqual(state.outbox.count, 2)
        guard case .attemptStarted = state.outbox.first?.0, case .continuing(let continuing) = state.outbox.last?.0 else {
            return XCTFail("attemptStarted, then continuing")
        }
        XCTAssertEqual(continuing.offset, 100)
    }

    func testNoEventIsBuiltWhenNobodyListens() {
        var state = state(kind: .data)
        state.noteAttempt(URLRequest(url: url))
        XCTAssertTrue(state.outbox.isEmpty)
    }
}
