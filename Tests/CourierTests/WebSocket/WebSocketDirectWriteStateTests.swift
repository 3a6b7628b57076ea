import Foundation
import XCTest
@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The decisions behind a `send` that writes on its own thread and a `receive` that takes a held
/// message without waiting: no socket, clock or queue (the stream is only held, never called).
final class WebSocketDirectWriteStateTests: XCTestCase {
    private let url = URL(string: "ws://example.com/chat")!

    /// A byte stream the state holds and never calls: every call fails the test.
    private final class UnusedStream: WebSocketByteStream {
        let descriptor: Int32 = -1
        func write(_ bytes: UnsafeRawBufferPointer) throws(CourierError) -> Int {
            XCTFail("the state wrote")
            return 0
        }
        func read(into buffer: UnsafeMutableRawBufferPointer) throws(CourierError) -> ByteStreamRead {
            XCTFail("the state read")
            return .wouldBlock
        }
        func close() {}
    }

    /// A state with its stream attached, open unless `open` is `false`.
    private func makeState(open: Bool = true, options: WebSocketOptions = WebSocketOptions()) throws -> WebSocketConnectionState {
        var state = WebSocketConnectionState(url: url, options: options)
        let handshake = try WebSocketHandshake(url: url, nonce: Array(0..<16))
        XCTAssertTrue(state.resume(handshake: handshake))
        XCTAssertTrue(state.connected())
        state.stream = UnusedStream()
        guard open else { return state }
        _ = state.wrote(handshake.head.utf8.count)
        let answer =
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: \(WebSocketHandshake.acceptValue(forKey: handshake.key))\r\n\r\n"
        _ = Data(answer.utf8).withUnsafeBytes { state.received($0) }
        XCTAssertEqual(state.phase, .open)
        return state
    }

    private func written(_ decision: WebSocketConnectionState.SendDecision) -> Data? {
        if case .write(let bytes) = decision { return bytes }
        return nil
    }

    private func queued(_ decision: WebSocketConnectionState.SendDecision) -> WebSocketEffects? {
        if case .queued(let effects) = decision { return effects }
        return nil
    }

    // MARK: - Sending

    func testASendWithNothingQueuedGetsTheClaimAndTheQueueWaitsForIt() throws {
        var state = try makeState()
        let first = Data("first".utf8)
        let second = Data("second".utf8)
        let sentBefore = state.bytesSent  // the handshake's head

        // The first send may write itself; the second is queued behind it
        XCTAssertEqual(written(state.sendNow(first)), first)
        let behind = try XCTUnwrap(queued(state.sendNow(second)))
        XCTAssertTrue(behind.flush)
        XCTAssertNil(state.nextOutgoing)  // the queue does not write while the claim is out

        // The claim comes back with the first written: the queue writes the second
        let ended = state.directWriteEnded(.success(first.count))
        XCTAssertTrue(ended.flush)
        XCTAssertEqual(state.nextOutgoing?.0, second)
        XCTAssertEqual(state.nextOutgoing?.1, 0)
        XCTAssertEqual(state.bytesSent - sentBefore, Int64(first.count))
    }

    func testAWholeDirectWriteLeavesNothingForTheQueue() throws {
        var state = try makeState()
        let frame = Data("frame".utf8)
        XCTAssertEqual(written(state.sendNow(frame)), frame)

        let ended = state.directWriteEnded(.success(frame.count))

        XCTAssertFalse(ended.flush)
        XCTAssertNil(state.nextOutgoing)
        XCTAssertEqual(state.outgoingBytes, 0)
        // The next send may write itself again
        XCTAssertNotNil(written(state.sendNow(frame)))
    }

    func testAPartialDirectWriteLeavesTheRestToTheQueue() throws {
        var state = try makeState()
        let frame = Data("0123456789".utf8)
        XCTAssertNotNil(written(state.sendNow(frame)))

        let ended = state.directWriteEnded(.success(4))

        XCTAssertTrue(ended.flush)
        XCTAssertEqual(state.nextOutgoing?.0, frame)
        XCTAssertEqual(state.nextOutgoing?.1, 4)
        XCTAssertEqual(state.outgoingBytes, 6)
    }

    func testASocketThatWouldBlockHandsTheWholeFrameToTheQueue() throws {
        var state = try makeState()
        let frame = Data("frame".utf8)
        XCTAssertNotNil(written(state.sendNow(frame)))

        let ended = state.directWriteEnded(.success(0))

        XCTAssertTrue(ended.flush)
        XCTAssertEqual(state.nextOutgoing?.0, frame)
        XCTAssertEqual(state.nextOutgoing?.1, 0)
    }

    func testTheEndDuringADirectWriteWaitsForTheClaimBeforeTheTeardown() throws {
        var state = try makeState()
        XCTAssertNotNil(written(state.sendNow(Data("frame".utf8))))

        // The server closes TCP while the write is out
        let ended = state.connectionEnded(nil)
        XCTAssertFalse(ended.teardown)
        XCTAssertEqual(ended.completion??.code, .connectionLost)

        let handedBack = state.directWriteEnded(.success(5))
        XCTAssertTrue(handedBack.teardown)
        XCTAssertTrue(handedBack.completion == nil)  // completed once, before
    }

    func testAFailedDirectWriteEndsTheConnection() throws {
        var state = try makeState()
        XCTAssertNotNil(written(state.sendNow(Data("frame".utf8))))

        let ended = state.directWriteEnded(.failure(CourierError(code: .connectionLost, message: "reset", url: url)))

        XCTAssertTrue(ended.teardown)
        XCTAssertEqual(ended.completion??.code, .connectionLost)
        XCTAssertEqual(state.phase, .closed)
    }

    func testASendOverTheBufferLimitWaitsAndQueuesNothing() throws {
        var state = try makeState(options: WebSocketOptions(sendBufferLimit: 10))
        XCTAssertNotNil(written(state.sendNow(Data(count: 8))))

        guard case .wait = state.sendNow(Data(count: 8)) else { return XCTFail("a send over the limit did not wait") }
        XCTAssertEqual(state.outgoingBytes, 8)
    }

    func testASendBeforeTheAnswerWaits() throws {
        var state = try makeState(open: false)
        let before = state.outgoingBytes

        guard case .wait = state.sendNow(Data("early".utf8)) else { return XCTFail("a send before the 101 did not wait") }
        XCTAssertEqual(state.outgoingBytes, before)
    }

    func testASendAfterTheClientsCloseIsRefused() throws {
        var state = try makeState()
        _ = state.cancel(code: .normalClosure, reason: "", failure: nil)

        guard case .refused(let error) = state.sendNow(Data("late".utf8)) else { return XCTFail("a send after the close went") }
        XCTAssertEqual(error.code, .cancelled)
    }

    func testWithoutAStreamTheSendIsQueued() throws {
        var state = try makeState()
        state.stream = nil

        XCTAssertEqual(queued(state.sendNow(Data("frame".utf8)))?.flush, true)
    }

    // MARK: - Receiving

    func testAHeldMessageIsTakenWithoutAWaitAndAnEmptyInboxChangesNothing() throws {
        var state = try makeState()
        let frame = try WebSocketFrame(opcode: .text, payload: Data("hi".utf8)).encoded(maskingKey: nil)
        _ = frame.withUnsafeBytes { state.received($0) }

        let (result, _) = try XCTUnwrap(state.receiveHeld())
        guard case .string("hi")? = try result.get() else { return XCTFail("not the held message") }
        XCTAssertTrue(state.consumerHoldsMessage)

        XCTAssertNil(state.receiveHeld())
        XCTAssertTrue(state.consumerHoldsMessage)
        XCTAssertTrue(state.receivers.isEmpty)
    }

    func testTheEndIsTakenWithoutAWait() throws {
        var state = try makeState()
        _ = state.cancel(code: .normalClosure, reason: "", failure: nil)

        let (result, _) = try XCTUnwrap(state.receiveHeld())
        XCTAssertNil(try result.get())
    }
}
