import Foundation
import XCTest
@testable import Courier
import CourierTestServer

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Handshakes refused and frames that break RFC 6455: a typed error, and the RFC's close code sent.
final class WebSocketFailureTests: WebSocketTaskTestCase {
    private func failure(
        _ script: WebSocketTestServer.Script, maximumMessageSize: Int? = nil, file: StaticString = #filePath, line: UInt = #line
    ) async throws -> (CourierError?, WebSocketTestServer, WebSocketTask) {
        let server = try WebSocketTestServer(script: script)
        let task = manager.webSocketTask(with: server.url("/"))
        if let maximumMessageSize { task.maximumMessageSize = maximumMessageSize }
        task.resume()
        let completion = await waitForCompletion(of: task, file: file, line: line)
        return (completion?.error, server, task)
    }

    func testA200IsRefusedAsUnacceptableStatusWithTheResponse() async throws {
        let (error, _, task) = try await failure(.init(handshake: .status(200), steps: []))
        XCTAssertEqual(error?.code, .unacceptableStatusCode)
        XCTAssertEqual(error?.response?.statusCode, 200)
        XCTAssertEqual(task.response?.statusCode, 200)
    }

    func testARedirectIsRefusedAndNotFollowed() async throws {
        let (error, server, _) = try await failure(
            .init(handshake: .status(302, headers: [("Location", "ws://127.0.0.1:9/elsewhere")]), steps: []))
        XCTAssertEqual(error?.code, .redirectRefused)
        XCTAssertEqual(server.requests.count, 1)
    }

    func testAWrongAcceptKeyIsRefused() async throws {
        let (error, _, _) = try await failure(.init(handshake: .wrongAcceptKey, steps: []))
        XCTAssertEqual(error?.code, .invalidResponse)
        XCTAssertTrue(error?.message.contains("Sec-WebSocket-Accept") ?? false)
    }

    func testA101WithoutUpgradeIsRefused() async throws {
        let (error, _, _) = try await failure(.init(handshake: .missingUpgrade, steps: []))
        XCTAssertEqual(error?.code, .invalidResponse)
    }

    func testAClosedPortFailsWithConnectionRefused() async throws {
        let server = try WebSocketTestServer(script: .echo)
        let url = server.url("/")
        server.stop()
        let task = manager.webSocketTask(with: url)
        task.resume()
        let completion = await waitForCompletion(of: task)
        XCTAssertEqual(completion?.error?.code, .connectionRefused)
    }

    func testWssToAPortNobodyListensOnIsRefused() async throws {
        // wss:// opens over libcurl (WebSocketTLSTests has the rest); its connect errors are typed too
        let server = try WebSocketTestServer(script: .init(steps: []))
        let port = server.port
        server.stop()
        let task = manager.webSocketTask(with: URL(string: "wss://127.0.0.1:\(port)/")!)
        task.resume()
        let completion = await waitForCompletion(of: task)
        XCTAssertEqual(completion?.error?.code, .connectionRefused)
    }

    /// The server sends `frame`; the client must close with `code` and fail with `error`.
    private func assertRefused(
        _ frame: WebSocketServerFrame, closesWith code: UInt16, error expected: CourierError.Code, maximumMessageSize: Int? = nil,
        file: StaticString = #filePath, line: UInt = #line
    ) async throws {
        let (error, server, _) = try await failure(
            .init(steps: [.send(frame), .awaitClose()]), maximumMessageSize: maximumMessageSize, file: file,
            line: line)
        XCTAssertEqual(error?.code, expected, file: file, line: line)
        let closes = server.receivedFrames.filter { $0.frame.opcode == 8 }
        XCTAssertEqual(closes.map(\.frame.closeCode), [code], file: file, line: line)
    }

    func testReservedBitsAreAProtocolError() async throws {
        try await assertRefused(
            WebSocketServerFrame(opcode: 1, payload: Data("x".utf8), reservedBits: 4), closesWith: 1002, error: .invalidResponse)
    }

    func testAReservedOpcodeIsAProtocolError() async throws {
        try await assertRefused(WebSocketServerFrame(opcode: 3), closesWith: 1002, error: .invalidResponse)
    }

    func testAMaskedFrameFromTheServerIsAProtocolError() async throws {
        try await assertRefused(
            WebSocketServerFrame(opcode: 1, payload: Data("x".utf8), maskingKey: [1, 2, 3, 4]), closesWith: 1002, error: .invalidResponse)
    }

    func testTextThatIsNotUTF8Closes1007() async throws {
        try await assertRefused(
            WebSocketServerFrame(opcode: 1, payload: Data([0x61, 0xC0, 0xAF])), closesWith: 1007, error: .invalidResponse)
    }

    func testAMessageOverTheMaximumCloses1009() async throws {
        try await assertRefused(
            .binary(Data(count: 2000)), closesWith: 1009, error: .responseTooLarge, maximumMessageSize: 1000)
    }

    func testAnInvalidCloseCodeFromTheServerIsAnswered1002() async throws {
        let (error, server, _) = try await failure(.init(steps: [.send(.close(1005)), .read(count: 1)]))
        XCTAssertEqual(error?.code, .invalidResponse)
        XCTAssertEqual(server.receivedFrames.last?.frame.closeCode, 1002)
    }

    func testAMessageBeforeABadFrameIsAnsweredBeforeTheClose() async throws {
        // Given a good message and a bad frame in one write
        let good = WebSocketServerFrame.text("good").encoded
        let bad = WebSocketServerFrame(opcode: 3).encoded
        let server = try WebSocketTestServer(script: .init(steps: [.sendRaw(good + bad), .awaitClose()]))
        let task = manager.webSocketTask(with: server.url("/"))
        task.resume()

        // When the consumer answers the good message, then asks for the next
        let first = try await task.receive()
        try await task.send(.string("echo"))
        let error = await thrown { try await task.receive() }

        // Then its answer went out before the Close frame (1002)
        XCTAssertEqual(text(first), "good")
        XCTAssertEqual(error?.code, .invalidResponse)
        await waitForCompletion(of: task)
        XCTAssertEqual(server.receivedFrames.map(\.frame.opcode), [1, 8])
        XCTAssertEqual(server.receivedFrames.last?.frame.closeCode, 1002)
    }

    func testAFailureWaitingForAConsumerThatNeverComesBackAppliesAfterTheCloseTimeout() async throws {
        let server = try WebSocketTestServer(
            script: .init(steps: [.send(.text("held")), .send(WebSocketServerFrame(opcode: 3)), .awaitClose()]))
        let task = manager.webSocketTask(with: server.url("/"))
        task.options.closeTimeout = .milliseconds(200)
        task.resume()

        let completion = await waitForCompletion(of: task)

        XCTAssertEqual(completion?.error?.code, .invalidResponse)
        XCTAssertEqual(server.receivedFrames.last?.frame.closeCode, 1002)
        let held = try await task.receive()
        XCTAssertEqual(text(held), "held")
    }
}
