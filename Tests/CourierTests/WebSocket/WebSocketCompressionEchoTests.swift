import CourierTestServer
import Foundation
import XCTest
@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `permessage-deflate` over real sockets against `WebSocketTestServer` (which sends the RFC's
/// compressed bytes as they are) and `/ws/echo` (which offers no extension).
final class WebSocketCompressionEchoTests: WebSocketTaskTestCase {
    /// "Hello" compressed on its own (RFC 7692 §7.2.3.1), and the second "Hello" of a kept context (§7.2.3.2).
    private let hello = Data([0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00])
    private let helloAgain = Data([0xF2, 0x00, 0x11, 0x00, 0x00])
    /// RSV1 in `WebSocketServerFrame`'s numbering (RSV1–RSV3 as bits 2, 1, 0).
    private let rsv1: UInt8 = 4

    override func setUpWithError() throws {
        try super.setUpWithError()
        guard WebSocketDeflateStream.isAvailable else { throw XCTSkip("the system's zlib (libz.so.1) does not load") }
    }

    private func compressedTask(_ server: WebSocketTestServer) -> WebSocketTask {
        let task = manager.webSocketTask(with: server.url("/"))
        task.options.compression = WebSocketCompression()
        task.resume()
        return task
    }

    func testATaskWithTheDefaultOptionsOffersPermessageDeflateAndInflates() async throws {
        // Given a server that accepts permessage-deflate and sends one compressed "Hello"
        let server = try WebSocketTestServer(
            script: .init(
                handshake: .acceptExtensions("permessage-deflate"),
                steps: [.send(.init(opcode: 1, payload: hello, reservedBits: rsv1)), .send(.close(1000)), .read(count: 1)]))
        // When a task with the manager's default options reads it
        let task = manager.webSocketTask(with: server.url("/"))
        XCTAssertEqual(task.options.compression, WebSocketCompression())
        task.resume()
        let message = try await task.receive()

        // Then the offer went out and the message arrived inflated
        XCTAssertEqual(text(message), "Hello")
        XCTAssertEqual(
            server.requests.first?.header("Sec-WebSocket-Extensions"),
            "permessage-deflate; client_no_context_takeover; client_max_window_bits")
        task.cancel(with: .normalClosure, reason: nil)
    }

    func testCompressedMessagesFromTheServerArriveInflatedWithTheContextKept() async throws {
        // Given a server that accepts permessage-deflate and sends "Hello" twice with its context
        // kept, then "Hello" in two fragments (RSV1 on the first only)
        let server = try WebSocketTestServer(
            script: .init(
                handshake: .acceptExtensions("permessage-deflate"),
                steps: [
                    .send(.init(opcode: 1, payload: hello, reservedBits: rsv1)),
                    .send(.init(opcode: 1, payload: helloAgain, reservedBits: rsv1)),
                    .send(.init(opcode: 2, payload: Data([0xF2, 0x48, 0xCD]), fin: false, reservedBits: rsv1)),
                    .send(.continuation(Data([0xC9, 0xC9, 0x07, 0x00]), fin: true)),
                    .read(count: 1), .send(.close(1000)), .read(count: 1),
                ]))
        let task = compressedTask(server)

        // When the messages are read
        let first = try await task.receive()
        let second = try await task.receive()
        let third = try await task.receive()
        // (the client's reply, compressed: the RFC's bytes with RSV1)
        try await task.send(.string("Hello"))

        // Then each is inflated, and the offer and the reply were as RFC 7692 has them
        XCTAssertEqual(text(first), "Hello")
        XCTAssertEqual(text(second), "Hello")
        XCTAssertEqual(data(third), Data("Hello".utf8))
        let completion = await waitForCompletion(of: task)
        XCTAssertNil(completion?.error)
        XCTAssertEqual(
            server.requests.first?.header("Sec-WebSocket-Extensions"),
            "permessage-deflate; client_no_context_takeover; client_max_window_bits")
        let reply = try XCTUnwrap(server.receivedFrames.first)
        XCTAssertEqual(reply.frame.opcode, 1)
        XCTAssertEqual(reply.frame.reservedBits, rsv1)
        XCTAssertEqual(reply.frame.payload, hello)
    }

    func testRSV1OnAContinuationFailsWith1002() async throws {
        // Given deflate negotiated and a message whose second fragment has RSV1 set too
        let server = try WebSocketTestServer(
            script: .init(
                handshake: .acceptExtensions("permessage-deflate"),
                steps: [
                    .send(.init(opcode: 1, payload: Data([0xF2, 0x48]), fin: false, reservedBits: rsv1)),
                    .send(.init(opcode: 0, payload: Data([0xCD, 0xC9, 0xC9, 0x07, 0x00]), fin: true, reservedBits: rsv1)),
                    .awaitClose(),
                ]))
        let task = compressedTask(server)

        let error = await thrown { try await task.receive() }

        XCTAssertEqual(error?.code, .invalidResponse)
        await waitForCompletion(of: task)
        XCTAssertEqual(server.receivedFrames.last?.frame.closeCode, 1002)
    }

    func testACompressedMessageThatIsNotDeflateFailsWith1007() async throws {
        let server = try WebSocketTestServer(
            script: .init(
                handshake: .acceptExtensions("permessage-deflate; server_no_context_takeover"),
                steps: [.send(.init(opcode: 2, payload: Data([0xFF, 0xFF, 0xFF]), reservedBits: rsv1)), .awaitClose()]))
        let task = compressedTask(server)

        let error = await thrown { try await task.receive() }

        XCTAssertEqual(error?.code, .invalidResponse)
        await waitForCompletion(of: task)
        XCTAssertEqual(server.receivedFrames.last?.frame.closeCode, 1007)
    }

    func testAnAnswerWithAParameterNotOfferedFailsTheHandshake() async throws {
        let server = try WebSocketTestServer(
            script: .init(handshake: .acceptExtensions("permessage-deflate; mystery=1"), steps: [.awaitClose()]))
        let task = compressedTask(server)

        let error = await thrown { try await task.receive() }

        XCTAssertEqual(error?.code, .invalidResponse)
        XCTAssertTrue(error?.message.contains("mystery") == true, error?.message ?? "")
    }

    func testAServerThatDeclinesTheOfferGetsPlainMessages() async throws {
        // Given /ws/echo, which accepts no extension
        let server = try TestServer()
        let task = manager.webSocketTask(with: echoURL(server))
        task.options.compression = WebSocketCompression()
        task.resume()

        // When a message goes out and comes back
        try await task.send(.string("plain"))
        let echoed = try await task.receive()

        // Then it was sent and echoed uncompressed
        XCTAssertEqual(text(echoed), "plain")
        task.cancel(with: .normalClosure, reason: nil)
        let completion = await waitForCompletion(of: task)
        XCTAssertNil(completion?.error)
    }
}
