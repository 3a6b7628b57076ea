import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

@testable import Courier

/// The split crew as a value machine (SplitCrew*.swift): each test plays the driver
/// (``CrewHarness``) through events — a connection answered, data, ended, a tick at a time given
/// by hand, a stop — and asserts on the actions the crew returns. No socket, disk or clock.
/// The same behaviours over real sockets: SegmentedDownload*Tests.
final class SplitCrewTests: XCTestCase {
    private let mib = CrewHarness.mib
    private let kib: Int64 = 1024

    // MARK: - Starting

    func testAFixedSplitStartsEveryConnectionAtOnceEachOnALaneOfItsOwn() {
        var crew = CrewHarness(fixed: 4)
        crew.begin()
        XCTAssertEqual(crew.launches.map(\.id), [2, 3, 4])
        XCTAssertEqual(crew.launches.map(\.lane), [1, 2, 3])
        XCTAssertEqual(crew.crew.connectionCount, 4)
        // The map's ranges tile the file: the first connection keeps the start.
        let ranges = (1...4).compactMap { crew.crew.map.position(of: ConnectionID($0)) }.sorted { $0.lowerBound < $1.lowerBound }
        XCTAssertEqual(ranges.first?.lowerBound, 0)
        XCTAssertEqual(ranges.last?.upperBound, 8 * mib)
        XCTAssertEqual(crew.crew.map.position(of: ConnectionID(1)), 0..<(2 * mib))
    }

    func testEachRangeIsAskedExactlyWithTheValidatorNoContentCodingAndACloseOnItsLane() {
        var crew = CrewHarness(fixed: 2)
        crew.begin()
        let request = try! XCTUnwrap(crew.launches.first?.request)
        XCTAssertEqual(request.value(forHTTPHeaderField: "Range"), "bytes=\(4 * mib)-\(8 * mib - 1)")
        XCTAssertEqual(request.value(forHTTPHeaderField: "If-Range"), CrewHarness.etag)
        XCTAssertEqual(request.value(forHTTPHeaderField: "Accept-Encoding"), "identity")
        XCTAssertEqual(request.value(forHTTPHeaderField: "Connection"), "close")
        XCTAssertEqual(request.url, CrewHarness.url)
    }

    func testAnAutomaticSplitStartsWithItsFirstConnectionAlone() {
        var crew = CrewHarness(fixed: nil)
        crew.begin()
        XCTAssertTrue(crew.launches.isEmpty)
        XCTAssertEqual(crew.crew.target, 1)
        XCTAssertEqual(crew.crew.connectionCount, 1)
    }

    func testARequestMadeAfterItsConnectionStoppedIsNotStarted() {
        var crew = CrewHarness(fixed: 2)
        crew.begin()
        _ = crew.stop()
        XCTAssertFalse(crew.crew.launched(ConnectionID(2), CrewRequest()))
        XCTAssertFalse(crew.crew.owns(ConnectionID(1), crew.primary))
        XCTAssertEqual(crew.crew.connectionCount, 0)
    }

    // MARK: - Bytes

    func testAnAcceptedAnswerIsWrittenAtItsOwnOffsetInBatches() {
        var crew = CrewHarness(fixed: 2)
        crew.begin()
        crew.answer(2)
        crew.send(2, 100 * kib)
        XCTAssertTrue(crew.writes.isEmpty, "under a batch: gathered, not written")
        XCTAssertTrue(crew.progress.isEmpty)
        crew.send(2, 200 * kib)
        XCTAssertEqual(crew.writes.count, 1)
        XCTAssertEqual(crew.writes.first?.offset, 4 * mib)
        XCTAssertEqual(crew.writtenBytes, 300 * kib)
        XCTAssertEqual(crew.progress.last, 300 * kib)
        crew.assertWritesAreTheFile()
    }

    func testBytesBeforeTheAnswerIsAcceptedAreNeverWritten() {
        var crew = CrewHarness(fixed: 2)
        crew.begin()
        crew.send(2, 300 * kib)
        XCTAssertTrue(crew.last.isEmpty)
        XCTAssertEqual(crew.crew.tally.networkBytes, 0)
    }

    func testARecordIsDecidedAfterTheWritesItClaims() {
        var crew = CrewHarness(fixed: 2)
        crew.begin()
        crew.answer(2)
        crew.wait(150)
        // 512 KiB per connection on average (2 connections): 1 MiB since the last record.
        crew.send(1, 512 * kib)
        crew.send(2, 512 * kib)
        let record = try! XCTUnwrap(crew.records.last)
        XCTAssertEqual(record.writtenBytes, mib)
        XCTAssertTrue(record.connections.isEmpty)
        // In the last event's actions, the write comes before the record that counts it.
        let kinds = crew.last.map { action -> String in
            switch action {
            case .write: return "write"
            case .record: return "record"
            default: return "other"
            }
        }.filter { $0 != "other" }
        XCTAssertEqual(kinds, ["write", "record"])
    }

    func testTheRecordIsBroughtUpToDateEveryIntervalByTheTick() {
        var crew = CrewHarness(fixed: 2, recordInterval: .seconds(1))
        crew.begin()
        crew.run(990)
        XCTAssertTrue(crew.records.isEmpty)
        crew.run(20)
        XCTAssertEqual(crew.records.count, 1)
    }

    // MARK: - Completion

    func testAFileSplitOverFourConnectionsEndsCompleteExactlyOnceWithTheFilesBytes() {
        var crew = CrewHarness(fixed: 4)
        crew.begin()
        for id in 2...4 { crew.answer(id) }
        for id in 1...4 { crew.sendRange(id) }
        XCTAssertTrue(crew.endings.isEmpty, "completion is decided when a connection ends or at a tick")
        // Each range complete: its request is cancelled (the first one asked for the whole file).
        for id in 1...4 { XCTAssertTrue(crew.wasCancelled(id), "connection \(id)") }
        // The crew ends once the server let every request go: their endings came.
        for id in 1...3 {
            XCTAssertTrue(crew.end(id, .cancelled))
            crew.run(20)
            XCTAssertTrue(crew.endings.isEmpty, "a request is still open after connection \(id)'s ending")
        }
        XCTAssertTrue(crew.end(4, .cancelled))
        guard case .complete? = crew.ending else { return XCTFail("not complete once: \(crew.endings)") }
        XCTAssertTrue(crew.endings[0].handover.map.isComplete)
        XCTAssertEqual(crew.writtenBytes, 8 * mib)
        crew.assertWritesAreTheFile()
        // Nothing after the end: a late ending is not the crew's, ticks do nothing.
        XCTAssertFalse(crew.end(2, .cancelled))
        crew.run(100)
        XCTAssertEqual(crew.endings.count, 1)
        let again = crew.stop()
        XCTAssertTrue(again.map.isComplete)
        XCTAssertEqual(crew.endings.count, 1)
    }

    func testTheFirstConnectionEndingCleanlyWithTheLastBytesCompletesTheFile() {
        var crew = CrewHarness(fixed: 1)
        crew.begin()
        XCTAssertTrue(crew.launches.isEmpty)
        crew.sendRange(1, chunk: 256 * kib)
        crew.end(1)
        guard case .complete? = crew.ending else { return XCTFail("\(crew.endings)") }
        XCTAssertTrue(crew.endings[0].handover.primaryEnded)
        crew.assertWritesAreTheFile()
    }

    // MARK: - Answers

    func testAnotherValidatorStartsTheFileOver() {
        var crew = CrewHarness(fixed: 2)
        crew.begin()
        crew.answer(2, etag: "\"v2\"")
        guard case .restart? = crew.ending else { return XCTFail("\(crew.endings)") }
        XCTAssertTrue(crew.wasCancelled(1))
        XCTAssertTrue(crew.wasCancelled(2))
    }

    func testA200ToASegmentsRequestStartsTheFileOver() {
        var crew = CrewHarness(fixed: 2)
        crew.begin()
        crew.answer(2, status: 200)
        guard case .restart(let why)? = crew.ending else { return XCTFail("\(crew.endings)") }
        XCTAssertTrue(why.contains("200"), why)
    }

    func testAnAnswerFromAnotherOffsetStartsTheFileOver() {
        var crew = CrewHarness(fixed: 2)
        crew.begin()
        crew.answer(2, headers: ["Content-Range": "bytes 0-\(4 * mib - 1)/\(8 * mib)", "Content-Length": String(4 * mib)])
        guard case .restart? = crew.ending else { return XCTFail("\(crew.endings)") }
    }

    func testAnEncodedRangeFailsTyped() {
        var crew = CrewHarness(fixed: 2)
        crew.begin()
        crew.answer(2, headers: ["Content-Encoding": "gzip"])
        guard case .failed(let error)? = crew.ending else { return XCTFail("\(crew.endings)") }
        XCTAssertEqual(error.code, .invalidResponse)
    }

    func testAnImpossibleContentLengthBreaksOnlyThatConnection() {
        var crew = CrewHarness(fixed: 2)
        crew.begin()
        crew.answer(2, headers: ["Content-Length": String(Int64.max)])
        XCTAssertTrue(crew.endings.isEmpty)
        XCTAssertEqual(crew.retries.count, 1)
        XCTAssertEqual(crew.retries.first?.continuesFrom, 4 * mib)
        XCTAssertTrue(crew.wasCancelled(2))
    }

    func testAMalformedContentLengthFailsTyped() {
        var crew = CrewHarness(fixed: 2)
        crew.begin()
        crew.answer(2, headers: ["Content-Length": "0x5"])
        guard case .failed(let error)? = crew.ending else { return XCTFail("\(crew.endings)") }
        XCTAssertEqual(error.code, .invalidResponse)
    }

    // MARK: - Failures: the retry owned by a split connection

    func testAConnectionResetMidRangeHandsItsRestOverAndIsAnnouncedAsARetry() {
        var crew = CrewHarness(fixed: 4, cap: 8)
        crew.begin()
        for id in 2...4 { crew.answer(id) }
        let third = crew.crew.map.position(of: ConnectionID(3))!
        crew.send(3, 300 * kib)
        crew.end(3, .connectionLost)
        XCTAssertTrue(crew.endings.isEmpty)
        XCTAssertEqual(crew.retries.count, 1)
        let retry = crew.retries[0]
        XCTAssertEqual(retry.connection, ConnectionID(3))
        XCTAssertEqual(retry.error.code, .connectionLost)
        XCTAssertEqual(retry.retry, 1)
        XCTAssertEqual(retry.limit, 3 + 8)
        XCTAssertEqual(retry.delay, .zero)
        XCTAssertEqual(retry.continuesFrom, third.lowerBound + 300 * kib)
        XCTAssertEqual(retry.bytesWritten, 300 * kib)
        // A reset is the server pushing back: half the connections.
        XCTAssertEqual(crew.crew.target, 2)
        // The first connection finishes its range and continues the one left, from its next byte.
        crew.sendRange(1)
        crew.end(1, .cancelled)
        let next = try! XCTUnwrap(crew.launches.last)
        XCTAssertEqual(next.id, 1)
        XCTAssertEqual(next.lane, 0)
        XCTAssertNil(next.request.value(forHTTPHeaderField: "Connection"), "the manager's own session keeps its connection alive")
        XCTAssertEqual(CrewHarness.range(of: next.request), (third.lowerBound + 300 * kib)..<third.upperBound)
        crew.assertWritesAreTheFile()
    }

    func testAResetBeforeTheAnswerIsARefusalThatHalvesTheCount() {
        var crew = CrewHarness(fixed: 4, cap: 8)
        crew.begin()
        crew.answer(2)
        crew.answer(3)
        crew.end(4, .connectionLost)
        XCTAssertEqual(crew.retries.map(\.connection), [ConnectionID(4)])
        XCTAssertEqual(crew.crew.target, 2)
        // The halving stopped the reset connection itself: its request ended, nothing to wait for.
        XCTAssertNil(crew.crew.closing[ObjectIdentifier(crew.requests[4]!)])
    }

    func testAnErrorNoAttemptGetsPastEndsTheCrewForTheTransfersRetryModel() {
        for code: CourierError.Code in [.tlsCertificateUntrusted, .dnsFailed] {
            var crew = CrewHarness(fixed: 2)
            crew.begin()
            crew.answer(2)
            crew.end(2, code)
            guard case .failed(let error)? = crew.ending else { return XCTFail("\(code): \(crew.endings)") }
            XCTAssertEqual(error.code, code)
            XCTAssertTrue(crew.retries.isEmpty, "\(code) is not transient: no range is handed over")
            XCTAssertTrue(crew.wasCancelled(1))
        }
    }

    func testARequestCancelledByTheDriverIsHandedOverNotFatal() {
        var crew = CrewHarness(fixed: 2)
        crew.begin()
        crew.answer(2)
        crew.end(2, .cancelled)
        XCTAssertTrue(crew.endings.isEmpty)
        XCTAssertEqual(crew.retries.count, 1)
    }

    func testFailuresInARowWithoutABytePassTheFailureToTheTransfer() {
        // Answers that end before their range, no byte written: each is handed over (no back-off)
        // and asked again, until 3 + cap failures in a row.
        var crew = CrewHarness(fixed: 2, cap: 2)
        crew.begin()
        for _ in 0..<5 {
            let id = try! XCTUnwrap(crew.launches.last?.id)
            crew.answer(id)
            crew.end(id)
        }
        XCTAssertEqual(crew.retries.map(\.retry), [1, 2, 3, 4])
        XCTAssertEqual(crew.retries.map(\.limit), [5, 5, 5, 5])
        guard case .failed(let error)? = crew.ending else { return XCTFail("\(crew.endings)") }
        XCTAssertEqual(error.code, .invalidResponse)
    }

    func testAByteWrittenBetweenFailuresStartsTheCountAgain() {
        var crew = CrewHarness(fixed: 2, cap: 2)
        crew.begin()
        for _ in 0..<8 {
            let id = try! XCTUnwrap(crew.launches.last?.id)
            crew.answer(id)
            crew.send(id, 256 * kib)
            crew.end(id)
        }
        XCTAssertTrue(crew.endings.isEmpty)
        XCTAssertEqual(crew.retries.map(\.retry), Array(repeating: 1, count: 8))
        crew.assertWritesAreTheFile()
    }

    // MARK: - Refusals and back-off

    func testA503HandsTheRangeBackToTheFirstConnectionWhoseRequestStillStreamsIt() {
        var crew = CrewHarness(fixed: 2)
        crew.begin()
        crew.answer(2, status: 503)
        XCTAssertEqual(crew.retries.first?.error.statusCode, 503)
        XCTAssertEqual(crew.retries.first?.continuesFrom, 4 * mib)
        XCTAssertTrue(crew.wasCancelled(2))
        // SegmentMap.extend: the first connection asked for the rest of the file, and gets it back.
        XCTAssertEqual(crew.crew.map.position(of: ConnectionID(1)), 0..<(8 * mib))
        XCTAssertEqual(crew.crew.target, 1)
        crew.sendRange(1, chunk: 256 * kib)
        crew.end(1)
        XCTAssertTrue(crew.endings.isEmpty, "the refused request's ending has not come")
        crew.end(2, .cancelled)
        guard case .complete? = crew.ending else { return XCTFail("\(crew.endings)") }
        XCTAssertEqual(crew.launches.count, 1, "the file was finished without asking again")
        crew.assertWritesAreTheFile()
    }

    func testA429WithRetryAfterStartsNoRequestBeforeTheDelay() {
        var crew = CrewHarness(fixed: 4, cap: 8)
        crew.begin()
        crew.answer(3)
        crew.answer(4)
        crew.answer(2, status: 429, headers: ["Retry-After": "2"])
        XCTAssertEqual(crew.retries.first?.delay, .seconds(2))
        XCTAssertEqual(crew.retries.first?.error.statusCode, 429)
        let launched = crew.launches.count
        crew.run(1900)
        XCTAssertEqual(crew.launches.count, launched, "nothing asked during the Retry-After")
        crew.run(200)
        XCTAssertGreaterThan(crew.launches.count, launched, "the idle range is asked for once the wait is over")
    }

    func testA429WithoutRetryAfterHalvesAndAsksAgainAtOnce() {
        var crew = CrewHarness(fixed: 4, cap: 8)
        crew.begin()
        for id in 3...4 { crew.answer(id) }
        crew.answer(2, status: 429)
        XCTAssertEqual(crew.retries.first?.delay, .zero)
        XCTAssertNil(crew.crew.quietUntil)
        XCTAssertEqual(crew.crew.target, 2)
    }

    func testARedirectToASegmentsRequestIsARefusal() {
        var crew = CrewHarness(fixed: 2)
        crew.begin()
        crew.answer(2, status: 302, headers: ["Location": "http://elsewhere.test/big.bin"])
        XCTAssertTrue(crew.endings.isEmpty)
        XCTAssertEqual(crew.retries.first?.error.statusCode, 302)
        XCTAssertEqual(crew.crew.target, 1)
    }

    // MARK: - Speeds, stealing and the end game

    func testSpeedsCountBytesAsTheyArriveAndASilentConnectionIsStalledNotUnknown() {
        var crew = CrewHarness(fixed: 2)
        crew.begin()
        crew.answer(2)
        crew.send(1, 100 * kib)
        crew.run(250)
        XCTAssertTrue(crew.writes.isEmpty, "100 KiB is under a batch: nothing written yet")
        let first = try! XCTUnwrap(crew.crew.rates[ConnectionID(1)]?.bytesPerSecond)
        XCTAssertEqual(first, Double(100 * kib) / 0.25, accuracy: 1)
        XCTAssertEqual(crew.crew.rates[ConnectionID(2)]?.bytesPerSecond, 0, "measured at nothing: stalled")
        let report = try! XCTUnwrap(crew.reports.last)
        XCTAssertEqual(report.connections.first { $0.id == 2 }?.bytesPerSecond, 0)
    }

    func testAConnectionThatFinishesStealsTheSlowOnesTailSoBothEndTogether() {
        var crew = CrewHarness(fixed: 2)
        crew.begin()
        crew.answer(2)
        crew.send(1, mib)  // 4 MiB/s
        crew.send(2, 64 * kib)  // 256 KiB/s
        crew.run(250)
        crew.sendRange(1)
        crew.end(1, .cancelled)
        let steal = try! XCTUnwrap(crew.launches.last)
        XCTAssertEqual(steal.id, 1)
        let stolen = try! XCTUnwrap(CrewHarness.range(of: steal.request))
        XCTAssertEqual(stolen.upperBound, 8 * mib)
        XCTAssertEqual(crew.crew.map.position(of: ConnectionID(2))?.upperBound, stolen.lowerBound)
        // 16 times faster: it takes about 16/17 of what is left.
        XCTAssertGreaterThan(Int64(stolen.count), 3 * mib)
    }

    func testAFasterThiefTakesATailUnderOneMiBButNotUnderWhatItMovesInAQuarterSecond() {
        let crew = stealScene(thief: 512 * kib, owner: 256 * kib)
        let steal = try! XCTUnwrap(crew.launches.last)
        XCTAssertEqual(steal.id, 1)
        let stolen = try! XCTUnwrap(CrewHarness.range(of: steal.request))
        XCTAssertLessThan(Int64(stolen.count), mib)
        XCTAssertGreaterThanOrEqual(Int64(stolen.count), 512 * kib)
        crew.assertWritesAreTheFile()
    }

    func testASlowerThiefTakesNoTailUnderOneMiB() {
        let crew = stealScene(thief: 256 * kib, owner: 512 * kib)
        XCTAssertFalse(crew.launches.contains { $0.id == 1 }, "\(crew.launches.map(\.id))")
        XCTAssertNil(crew.crew.links[ConnectionID(1)], "the idle connection leaves")
        XCTAssertEqual(crew.crew.map.position(of: ConnectionID(2))?.upperBound, 8 * mib, "nothing was split off")
    }

    /// Two connections of 4 MiB each; over the last quarter second the first moved `thief` bytes
    /// and the second `owner` bytes, leaving it 840 KiB; then the first finishes its range.
    private func stealScene(thief: Int64, owner: Int64) -> CrewHarness {
        var crew = CrewHarness(fixed: 2)
        crew.begin()
        crew.answer(2)
        crew.send(2, 4096 * kib - 840 * kib - owner)
        crew.send(1, 512 * kib)
        crew.run(250)
        crew.send(2, owner)
        crew.send(1, thief)
        crew.run(250)
        XCTAssertEqual(crew.crew.map.segments.first { $0.owner == ConnectionID(2) }?.remaining, 840 * kib)
        crew.sendRange(1)
        crew.end(1, .cancelled)
        return crew
    }

    func testTheEndGameRacesAStalledTailAndTheFirstToFinishWinsOnce() {
        var crew = CrewHarness(fixed: 2)
        crew.begin()
        crew.answer(2)
        crew.send(1, mib)
        crew.send(2, 3584 * kib)
        crew.run(250)
        crew.send(1, mib)
        crew.run(250)  // the second sent nothing: stalled
        crew.sendRange(1)
        crew.end(1, .cancelled)
        let race = try! XCTUnwrap(crew.launches.last)
        XCTAssertEqual(race.id, 1)
        XCTAssertEqual(CrewHarness.range(of: race.request), (4 * mib + 3584 * kib)..<(8 * mib), "the whole tail, under 1 MiB")
        XCTAssertEqual(crew.reports.last?.connections.first { $0.id == 1 }?.racing, 2)
        crew.answer(1)
        crew.sendRange(1)
        XCTAssertTrue(crew.wasCancelled(2), "the loser is cancelled")
        crew.end(1, .cancelled)
        XCTAssertTrue(crew.endings.isEmpty, "the loser's request may still be open at the server")
        crew.end(2, .cancelled)
        guard case .complete? = crew.ending else { return XCTFail("\(crew.endings)") }
        XCTAssertEqual(crew.writtenBytes, 8 * mib, "no byte counted twice")
        crew.assertWritesAreTheFile()
    }

    func testInTheEndGameTheOwnerFinishingFirstCancelsTheDuplicate() {
        var crew = CrewHarness(fixed: 2)
        crew.begin()
        crew.answer(2)
        crew.send(1, mib)
        crew.send(2, 3584 * kib)
        crew.run(250)
        crew.send(1, mib)
        crew.run(250)
        crew.sendRange(1)
        crew.end(1, .cancelled)
        crew.answer(1)
        crew.sendRange(2)
        XCTAssertTrue(crew.wasCancelled(1))
        XCTAssertTrue(crew.end(1, .cancelled), "the cancelled duplicate's ending is the crew's and decides nothing")
        XCTAssertTrue(crew.endings.isEmpty)
        crew.end(2, .cancelled)
        guard case .complete? = crew.ending else { return XCTFail("\(crew.endings)") }
        XCTAssertEqual(crew.writtenBytes, 8 * mib)
        crew.assertWritesAreTheFile()
    }

    // MARK: - The automatic count

    func testTheAutomaticCountStepsToFourAndAddsThemOneAnswerAtATime() {
        var crew = CrewHarness(length: 32 * mib, fixed: nil, cap: 16)
        crew.begin()
        feed(&crew, [1], milliseconds: 70)
        XCTAssertEqual(crew.crew.target, 4)
        XCTAssertEqual(crew.launches.map(\.id), [2])
        feed(&crew, [1], milliseconds: 50)
        XCTAssertEqual(crew.launches.map(\.id), [2], "the next waits for this one's answer")
        crew.answer(2)
        XCTAssertEqual(crew.launches.map(\.id), [2, 3])
        crew.answer(3)
        crew.answer(4)
        XCTAssertEqual(crew.launches.map(\.id), [2, 3, 4])
        XCTAssertEqual(crew.crew.connectionCount, 4)
    }

    func testTheAutomaticCountNeverPassesItsCap() {
        var crew = CrewHarness(length: 32 * mib, fixed: nil, cap: 2)
        crew.begin()
        feed(&crew, [1], milliseconds: 70)
        XCTAssertEqual(crew.crew.target, 2)
        crew.answer(2)
        // Each connection as fast as the first alone: every window pays, and there is no room.
        feed(&crew, [1, 2], milliseconds: 1500)
        XCTAssertEqual(crew.crew.target, 2)
        XCTAssertEqual(crew.launches.map(\.id), [2])
    }

    func testARefusalSetsACeilingTheCountNeverAsksAboveAgain() {
        var crew = CrewHarness(length: 32 * mib, fixed: nil, cap: 8)
        crew.begin()
        feed(&crew, [1], milliseconds: 70)
        for id in 2...4 { crew.answer(id) }
        feed(&crew, [1, 2, 3, 4], milliseconds: 60)
        XCTAssertEqual(crew.crew.target, 8)
        let fifth = try! XCTUnwrap(crew.launches.last?.id)
        XCTAssertEqual(fifth, 5)
        crew.answer(5, status: 503)
        XCTAssertEqual(crew.crew.count.ceiling, 4)
        XCTAssertEqual(crew.crew.target, 4)
        // Long after the hold, with every window paying, it never asks for a fifth again.
        feed(&crew, [1, 2, 3, 4], milliseconds: 7000, bytes: 4 * kib)
        XCTAssertEqual(crew.crew.target, 4)
        XCTAssertEqual(crew.launches.map(\.id).filter { $0 > 5 }, [])
        XCTAssertTrue(crew.endings.isEmpty)
    }

    /// Every 10 ms for `milliseconds`: each of `ids` receives `bytes`, then a tick.
    private func feed(_ crew: inout CrewHarness, _ ids: [Int], milliseconds: Int, bytes: Int64 = 64 * 1024) {
        for _ in 0..<(milliseconds / 10) {
            crew.wait(10)
            for id in ids where crew.crew.map.position(of: ConnectionID(id)) != nil { crew.send(id, bytes) }
            crew.tick()
        }
    }

    // MARK: - Hand-overs: never more requests open than the cap

    func testAConnectionReplacingACancelledOneStartsOnlyAfterItsEndingCame() {
        // Given a crew of 2 under a cap of 2 whose writer fell behind: both requests cancelled
        var crew = CrewHarness(fixed: 2, cap: 2, bufferLimit: 8 * mib)
        crew.begin()
        crew.answer(2)
        crew.send(2, 100 * kib)
        crew.wait(10)
        crew.tick(backlog: 9 * mib)
        XCTAssertTrue(crew.wasCancelled(1) && crew.wasCancelled(2))
        let launched = crew.launches.count
        // When the writer caught up before the cancelled requests ended
        crew.take(crew.crew.diskDrained(now: crew.now))
        crew.run(100)
        // Then nothing starts while both may still be open at the server
        XCTAssertEqual(crew.launches.count, launched)
        XCTAssertEqual(crew.crew.held, 2)
        // And each ending lets exactly one request start, decided with that ending
        crew.end(1, .cancelled)
        XCTAssertEqual(crew.launches.count, launched + 1)
        XCTAssertTrue(crew.last.contains { if case .launch = $0 { return true } else { return false } })
        XCTAssertEqual(crew.crew.held, 2)
        crew.end(2, .cancelled)
        XCTAssertEqual(crew.launches.count, launched + 2)
        XCTAssertEqual(crew.crew.held, 2)
    }

    func testTheEndGamesLoserHoldsItsPlaceUntilItsEndingAndTheCrewEndsAfterIt() {
        // Given two connections under a cap of 2 racing the second's stalled tail
        var crew = CrewHarness(fixed: 2, cap: 2)
        crew.begin()
        crew.answer(2)
        crew.send(1, mib)
        crew.send(2, 3584 * kib)
        crew.run(250)
        crew.send(1, mib)
        crew.run(250)
        crew.sendRange(1)
        crew.end(1, .cancelled)
        crew.answer(1)
        // When the duplicate wins: the loser is cancelled, and the winner's request too (past its range)
        crew.sendRange(1)
        XCTAssertTrue(crew.wasCancelled(2))
        XCTAssertEqual(crew.crew.held, 2, "both requests may still be open at the server")
        crew.run(100)
        XCTAssertTrue(crew.endings.isEmpty)
        crew.end(2, .cancelled)
        XCTAssertTrue(crew.endings.isEmpty, "the winner's request has not ended")
        // Then the crew ends with the last request's ending, and nothing after it
        crew.end(1, .cancelled)
        guard case .complete? = crew.ending else { return XCTFail("\(crew.endings)") }
        guard case .end? = crew.last.last else { return XCTFail("\(crew.last)") }
        XCTAssertEqual(crew.crew.held, 0)
        crew.assertWritesAreTheFile()
    }

    // MARK: - The disk, stops and reports

    func testAWriterBehindStopsEveryConnectionUntilItCatchesUp() {
        var crew = CrewHarness(fixed: 2, bufferLimit: 8 * mib)
        crew.begin()
        crew.answer(2)
        crew.send(2, 100 * kib)
        crew.wait(10)
        crew.tick(backlog: 9 * mib)
        XCTAssertEqual(crew.diskWaits, [4 * mib])
        XCTAssertTrue(crew.wasCancelled(1))
        XCTAssertTrue(crew.wasCancelled(2))
        XCTAssertEqual(crew.writtenBytes, 100 * kib, "what was gathered is written first")
        XCTAssertEqual(crew.crew.tally.diskPauses, 1)
        let launched = crew.launches.count
        crew.run(500)
        XCTAssertEqual(crew.launches.count, launched)
        crew.take(crew.crew.diskDrained(now: crew.now))
        XCTAssertEqual(crew.launches.count, launched + 2)
    }

    func testAStopWritesWhatWasGatheredThenCancelsEveryRequestAndKeepsTheMap() {
        var crew = CrewHarness(fixed: 4)
        crew.begin()
        for id in 2...4 { crew.answer(id) }
        crew.send(2, 100 * kib)
        let handover = crew.stop()
        XCTAssertEqual(crew.writtenBytes, 100 * kib)
        for id in 1...4 { XCTAssertTrue(crew.wasCancelled(id), "connection \(id)") }
        guard case .write? = crew.last.first else { return XCTFail("the write comes before the cancels") }
        XCTAssertEqual(handover.map.writtenBytes, 100 * kib)
        XCTAssertTrue(handover.map.connections.isEmpty)
        XCTAssertFalse(handover.primaryEnded)
        XCTAssertTrue(crew.endings.isEmpty, "a stop is the transfer's: the crew does not end by itself")
        XCTAssertEqual(handover.tally.requests.filter { $0.ending == .stopped }.count, 4)
        // After the stop, nothing is the crew's.
        XCTAssertTrue(crew.crew.received(ConnectionID(2), crew.requests[2]!, Data(count: 300 * 1024), now: crew.now).isEmpty)
        XCTAssertFalse(crew.end(2, .cancelled))
    }

    func testAStopAfterTheFirstConnectionsRequestEndedSaysSo() {
        var crew = CrewHarness(fixed: 2)
        crew.begin()
        crew.answer(2)
        crew.end(1, .connectionLost)
        let handover = crew.stop()
        XCTAssertTrue(handover.primaryEnded, "the transfer's attempt will get no completion: it ends it itself")
    }

    func testReportsAreBuiltOnlyWhenSomeoneListens() {
        var quiet = CrewHarness(fixed: 4, reports: false)
        quiet.begin()
        quiet.run(500)
        XCTAssertTrue(quiet.reports.isEmpty)
        var heard = CrewHarness(fixed: 4)
        heard.begin()
        XCTAssertEqual(heard.reports.last?.connections.map(\.id), [1, 2, 3, 4])
        XCTAssertEqual(heard.reports.last?.wanted, 4)
    }
}
