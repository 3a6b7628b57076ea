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

    func testThePausePolicyStopsReadingAtTheLimitAndResumesBelowIt() async throws {
        var state = try makeState(open: true, options: WebSocketOptions(receiveBufferLimit: 100, overflow: .pause))

        _ = try receive(WebSocketFrame(opcode: .binary, payload: Data(count: 60)), into: &state)
        XCTAssertFalse(state.readingPaused)
        _ = try receive(WebSocketFrame(opcode: .binary, payload: Data(count: 60)), into: &state)
        XCTAssertTrue(state.readingPaused)

        var effects = WebSocketEffects()
        let taken = await withCheckedContinuation { (receiver: WebSocketConnectionState.Receiver) in
            effects = state.receive(receiver)
            for (waiting, outcome) in effects.receivers { waiting.resume(returning: outcome) }
        }

        XCTAssertEqual(try taken.get().map { WebSocketConnectionState.size(of: $0) }, 60)
        XCTAssertTrue(effects.resumeReading)
        XCTAssertFalse(state.readingPaused)
    }
}
