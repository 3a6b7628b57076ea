import Foundation
import XCTest
@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The state's side of `close(withCloseCode:reason:)`, with no socket, clock or queue: a client's
/// close that keeps receiving until the server's Close frame.
final class WebSocketCloseReceivingStateTests: XCTestCase {
    private let url = URL(string: "ws://example.com/chat")!

    private func openState(options: WebSocketOptions = WebSocketOptions()) throws -> WebSocketConnectionState {
        var state = WebSocketConnectionState(url: url, options: options)
        let handshake = try WebSocketHandshake(url: url, nonce: Array(0..<16))
        XCTAssertTrue(state.resume(handshake: handshake))
        XCTAssertTrue(state.connected())
        _ = state.wrote(handshake.head.utf8.count)
        let answer =
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: \(WebSocketHandshake.acceptValue(forKey: handshake.key))\r\n\r\n"
        _ = Data(answer.utf8).withUnsafeBytes { state.received($0) }
        XCTAssertEqual(state.phase, .open)
        return state
    }

    private func receive(_ frame: WebSocketFrame, into state: inout WebSocketConnectionState) throws -> WebSocketEffects {
        try frame.encoded(maskingKey: nil).withUnsafeBytes { state.received($0) }
    }

    func testAMessageAfterTheClientsCloseIsDeliveredAndTheServersCloseEndsCleanly() throws {
        var state = try openState()

        _ = state.cancel(code: .normalClosure, reason: "", failure: nil, receivingUntilServerCloses: true)
        XCTAssertNil(state.ending, "not decided until the server answers")
        XCTAssertEqual(state.phase, .closing)
        _ = try receive(WebSocketFrame(opcode: .text, payload: Data("late".utf8)), into: &state)
        _ = try receive(.close(.normalClosure), into: &state)

        XCTAssertEqual(state.inbox.count, 1, "the answer in flight is kept for the consumer")
        guard case .clean? = state.ending else { return XCTFail("\(String(describing: state.ending))") }
        XCTAssertEqual(state.closeCode, .normalClosure)
    }

    func testWithoutItTheEndIsDecidedAtTheCloseAndALateMessageIsDropped() throws {
        var state = try openState()

        _ = state.cancel(code: .normalClosure, reason: "", failure: nil)
        _ = try receive(WebSocketFrame(opcode: .text, payload: Data("late".utf8)), into: &state)

        guard case .clean? = state.ending else { return XCTFail("\(String(describing: state.ending))") }
        XCTAssertTrue(state.inbox.isEmpty)
    }

    func testAnUnansweredCloseFailsWithTimedOutWhenTheTimerFires() throws {
        var state = try openState()
        _ = state.cancel(code: .goingAway, reason: "", failure: nil, receivingUntilServerCloses: true)

        let effects = state.closeTimerFired()

        guard case .failed(let error)? = state.ending else { return XCTFail("\(String(describing: state.ending))") }
        XCTAssertEqual(error.code, .timedOut)
        XCTAssertEqual(effects.completion??.code, .timedOut)
        XCTAssertEqual(state.closeCode, .abnormalClosure)
    }
}
