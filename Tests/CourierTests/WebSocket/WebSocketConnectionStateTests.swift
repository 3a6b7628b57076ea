import Foundation
import XCTest
@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The connection's decisions with no socket, clock or queue: bytes and ticks in, effects out.
final class WebSocketConnectionStateTests: XCTestCase {
    private let url = URL(string: "ws://example.com/chat")!

    /// A state whose handshake was sent, or answered when `open`.
    private func makeState(open: Bool, options: WebSocketOptions = WebSocketOptions()) throws -> WebSocketConnectionState {
        var state = WebSocketConnectionState(url: url, options: options)
        let handshake = try WebSocketHandshake(url: url, nonce: Array(0..<16))
        XCTAssertTrue(state.resume(handshake: handshake))
        XCTAssertTrue(state.connected())
        guard open else { return state }
        _ = state.wrote(handshake.head.utf8.count)
        let answer =
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: \(WebSocketHandshake.acceptValue(forKey: handshake.key))\r\n\r\n"
        let effects = Data(answer.utf8).withUnsafeBytes { state.received($0) }
        XCTAssertTrue(effects.opened)
        XCTAssertEqual(state.phase, .open)
        return state
    }

    private func receive(_ frame: WebSocketFrame, into state: inout WebSocketConnectionState) throws -> WebSocketEffects {
        let bytes = try frame.encoded(maskingKey: nil)
        return bytes.withUnsafeBytes { state.received($0) }
    }

    func testFramesQueuedBeforeTheAnswerWaitBehindTheHandshake() throws {
        var state = try makeState(open: false)
        let head = try XCTUnwrap(state.nextOutgoing?.0)

        _ = state.ping { _ in }
        _ = state.wrote(head.count)

        // The head is written; the ping waits for the 101 (§4.1)
        XCTAssertNil(state.nextOutgoing)
        XCTAssertGreaterThan(state.outgoingBytes, 0)
    }

    func testASilentIntervalAfterAPingFailsTheConnectionWithTimedOut() throws {
        var state = try makeState(open: true, options: WebSocketOptions(pingInterval: .seconds(1)))

        let first = state.keepaliveTick()
        XCTAssertTrue(first.flush)  // a ping is queued
        XCTAssertTrue(first.completion == nil)
        let second = state.keepaliveTick()

        XCTAssertEqual(second.completion??.code, .timedOut)
        XCTAssertTrue(second.teardown)
        XCTAssertEqual(state.closeCode, .abnormalClosure)
    }

    func testAnythingHeardBetweenTicksKeepsTheConnection() throws {
        var state = try makeState(open: true, options: WebSocketOptions(pingInterval: .seconds(1)))

        _ = state.keepaliveTick()
        _ = try receive(WebSocketFrame(opcode: .pong), into: &state)
        let second = state.keepaliveTick()

        XCTAssertTrue(second.completion == nil)
        XCTAssertEqual(state.phase, .open)
    }

    func testAPongAnswersItsPingAndEveryEarlierOne() throws {
        var state = try makeState(open: true)
        _ = state.ping { _ in }
        _ = state.ping { _ in }
        _ = state.ping { _ in }

        // The pong of the second ping (payload: its counter, big-endian)
        let effects = try receive(WebSocketFrame(opcode: .pong, payload: Data([0, 0, 0, 0, 0, 0, 0, 2])), into: &state)

        XCTAssertEqual(effects.pongs.count, 2)
        XCTAssertEqual(state.pings.count, 1)
    }

    func testThePausePolicyReadsOnlyControlFramesAtTheLimitStopsAtDataAndResumesBelowIt() async throws {
        var state = try makeState(open: true, options: WebSocketOptions(receiveBufferLimit: 100, overflow: .pause))

        _ = try receive(WebSocketFrame(opcode: .binary, payload: Data(count: 60)), into: &state)
        XCTAssertEqual(state.readMode, .all)
        _ = try receive(WebSocketFrame(opcode: .binary, payload: Data(count: 60)), into: &state)
        // Behind: short reads, so that a ping is still read and answered
        XCTAssertEqual(state.readMode, .controlFrames)
        let answer = try receive(WebSocketFrame(opcode: .ping, payload: Data("p".utf8)), into: &state)
        XCTAssertTrue(answer.flush)
        XCTAssertEqual(state.readMode, .controlFrames)
        // A data frame begun while behind stops reading
        let header = try WebSocketFrame(opcode: .binary, payload: Data(count: 60)).encoded(maskingKey: nil).prefix(10)
        _ = header.withUnsafeBytes { state.received($0) }
        XCTAssertEqual(state.readMode, .none)
        XCTAssertTrue(state.readingPaused)

        var effects = WebSocketEffects()
        let ticket = state.makeReceiveTicket()
        let taken = await withCheckedContinuation { (receiver: WebSocketConnectionState.Receiver) in
            effects = state.receive(receiver, ticket: ticket)
            for (waiting, outcome) in effects.receivers { waiting.resume(returning: outcome) }
        }

        XCTAssertEqual(try taken.get().map { WebSocketConnectionState.size(of: $0) }, 60)
        XCTAssertTrue(effects.resumeReading)
        XCTAssertEqual(state.readMode, .all)
    }

    func testAWholeMessageReadWhileBehindStopsReading() throws {
        var state = try makeState(open: true, options: WebSocketOptions(receiveBufferLimit: 100, overflow: .pause))
        _ = try receive(WebSocketFrame(opcode: .binary, payload: Data(count: 100)), into: &state)
        XCTAssertEqual(state.readMode, .controlFrames)

        _ = try receive(WebSocketFrame(opcode: .text, payload: Data("x".utf8)), into: &state)

        XCTAssertEqual(state.readMode, .none)
        XCTAssertEqual(state.inboxBytes, 101)
    }

    func testACloseWhileReadingIsPausedReadsAgainForTheServersAnswer() throws {
        // Given a consumer behind with data waiting: reading stopped
        var state = try makeState(open: true, options: WebSocketOptions(receiveBufferLimit: 100, overflow: .pause))
        _ = try receive(WebSocketFrame(opcode: .binary, payload: Data(count: 100)), into: &state)
        _ = try receive(WebSocketFrame(opcode: .binary, payload: Data(count: 10)), into: &state)
        XCTAssertTrue(state.readingPaused)

        // When the client closes
        let effects = state.cancel(code: .normalClosure, reason: "", failure: nil)

        // Then reading starts again: the server's Close frame must be read, not waited out
        XCTAssertTrue(effects.resumeReading)
        XCTAssertFalse(state.readingPaused)
        XCTAssertEqual(state.phase, .closing)
    }

    func testAReceiveCancelledBeforeItWaitsTakesNoMessage() async throws {
        var state = try makeState(open: true)
        _ = try receive(WebSocketFrame(opcode: .text, payload: Data("kept".utf8)), into: &state)

        let ticket = state.makeReceiveTicket()
        XCTAssertTrue(state.cancelReceive(ticket).receivers.isEmpty)
        let cancelled = await withCheckedContinuation { (receiver: WebSocketConnectionState.Receiver) in
            for (waiting, outcome) in state.receive(receiver, ticket: ticket).receivers { waiting.resume(returning: outcome) }
        }

        XCTAssertEqual(courierError { () throws(CourierError) in try cancelled.get() }?.code, .cancelled)
        XCTAssertEqual(state.inboxBytes, 4)
        XCTAssertTrue(state.unregisteredReceives.isEmpty)
        XCTAssertEqual(state.phase, .open)
    }

    func testAWaitingReceiveIsCancelledAndRemoved() async throws {
        var state = try makeState(open: true)
        let ticket = state.makeReceiveTicket()
        var cancellation = WebSocketEffects()

        let cancelled = await withCheckedContinuation { (receiver: WebSocketConnectionState.Receiver) in
            XCTAssertTrue(state.receive(receiver, ticket: ticket).receivers.isEmpty)
            cancellation = state.cancelReceive(ticket)
            for (waiting, outcome) in cancellation.receivers { waiting.resume(returning: outcome) }
        }

        XCTAssertEqual(courierError { () throws(CourierError) in try cancelled.get() }?.code, .cancelled)
        XCTAssertTrue(state.receivers.isEmpty)
        XCTAssertTrue(state.unregisteredReceives.isEmpty)
        XCTAssertTrue(cancellation.completion == nil)
        XCTAssertFalse(cancellation.teardown)
    }

    func testASendBeforeTheAnswerWaitsForItAndGetsTheHandshakesError() async throws {
        var state = try makeState(open: false)
        let frame = try WebSocketFrame(opcode: .text, payload: Data("early".utf8)).encoded(maskingKey: rfcMaskingKey)

        let result = await withCheckedContinuation { (sender: WebSocketConnectionState.Sender) in
            XCTAssertTrue(state.send(frame, sender: sender).senders.isEmpty)  // waits for the 101
            let refused = Data("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".utf8).withUnsafeBytes { state.received($0) }
            for (waiting, outcome) in refused.senders { waiting.resume(returning: outcome) }
        }

        XCTAssertEqual(courierError { () throws(CourierError) in try result.get() }?.code, .unacceptableStatusCode)
    }
}
