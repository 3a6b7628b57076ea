import Foundation
import XCTest
@testable import Courier
import CourierTestServer

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Messages over real sockets against `TestServer`'s `/ws/echo` and scripted servers.
final class WebSocketEchoTests: WebSocketTaskTestCase {
    func testTextAndBinaryMessagesComeBackFromTheEcho() async throws {
        // Given the echo endpoint
        let server = try TestServer()
        let task = manager.webSocketTask(with: echoURL(server))
        task.resume()

        // When a text and a binary message are sent
        try await task.send(.string("hello, Grüße 😀"))
        try await task.send(.data(Data([0, 1, 2, 255])))

        // Then both come back, in order, of their kind
        let first = try await task.receive()
        let second = try await task.receive()
        XCTAssertEqual(text(first), "hello, Grüße 😀")
        XCTAssertEqual(data(second), Data([0, 1, 2, 255]))
        XCTAssertEqual(task.response?.statusCode, 101)
        task.cancel(with: .normalClosure, reason: nil)
        let completion = await waitForCompletion(of: task)
        XCTAssertNil(completion?.error)
        XCTAssertEqual(task.closeCode, .normalClosure)
    }

    func testAOneMebibyteMessageComesBackWhole() async throws {
        let server = try TestServer()
        let task = manager.webSocketTask(with: echoURL(server))
        task.maximumMessageSize = 2 << 20
        task.resume()
        let payload = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })

        try await task.send(.data(payload))
        let echoed = try await task.receive()

        XCTAssertEqual(data(echoed), payload)
        task.cancel(with: .normalClosure, reason: nil)
        await waitForCompletion(of: task)
    }

    func testAFragmentedMessageFromTheServerArrivesAsOne() async throws {
        // Given a server that sends a text message in three fragments, a ping between them
        let server = try WebSocketTestServer(
            script: .init(steps: [
                .send(.text("frag", fin: false)), .send(.ping(Data("p".utf8))),
                .send(.continuation(Data("men".utf8), fin: false)), .send(.continuation(Data("ted".utf8), fin: true)),
                .awaitClose(),
            ]))
        let task = manager.webSocketTask(with: server.url("/"))
        task.resume()

        // Then one message arrives, and the ping was answered with its payload
        let message = try await task.receive()
        XCTAssertEqual(text(message), "fragmented")
        task.cancel(with: .normalClosure, reason: nil)
        await waitForCompletion(of: task)
        let pongs = server.receivedFrames.filter { $0.frame.opcode == 10 }
        XCTAssertEqual(pongs.map(\.frame.payload), [Data("p".utf8)])
        // Every frame the client sent was masked, each with its own key (§5.3)
        XCTAssertTrue(server.receivedFrames.allSatisfy { $0.frame.maskingKey?.count == 4 })
    }

    func testTheMessagesSequenceEndsWhenTheServerClosesCleanly() async throws {
        let server = try WebSocketTestServer(
            script: .init(steps: [.send(.text("one")), .send(.binary(Data([2]))), .send(.close(1000)), .read(count: 1)]))
        let task = manager.webSocketTask(with: server.url("/"))
        task.resume()

        var received: [URLSessionWebSocketTask.Message] = []
        for try await message in task.messages { received.append(message) }

        XCTAssertEqual(received.count, 2)
        XCTAssertEqual(text(received[0]), "one")
        XCTAssertEqual(data(received[1]), Data([2]))
        let completion = await waitForCompletion(of: task)
        XCTAssertNil(completion?.error)
        XCTAssertEqual(task.closeCode, .normalClosure)
        // The client echoed the close code (§5.5.1)
        XCTAssertEqual(server.receivedFrames.last?.frame.closeCode, 1000)
    }

    func testTheHandshakeSendsHostWithThePortAndTheRequestsHeaders() async throws {
        let server = try WebSocketTestServer { request, _ in
            let offered = request.header("Sec-WebSocket-Protocol") != nil
            return .init(handshake: .accept(subprotocol: offered ? "chat.v2" : nil), steps: [.send(.text("hi")), .awaitClose()])
        }
        var request = URLRequest(url: server.url("/path?q=1"))
        request.setValue("Bearer secret", forHTTPHeaderField: "Authorization")
        let task = manager.webSocketTask(with: server.url("/path?q=1"), protocols: ["chat.v1", "chat.v2"])
        let other = manager.webSocketTask(with: request)
        task.resume()
        other.resume()

        _ = try await task.receive()
        _ = try await other.receive()
        XCTAssertEqual(task.negotiatedProtocol, "chat.v2")
        XCTAssertNil(other.negotiatedProtocol)
        task.cancel(with: .normalClosure, reason: nil)
        other.cancel(with: .normalClosure, reason: nil)
        await waitForCompletion(of: task)
        await waitForCompletion(of: other)

        let requests = server.requests
        XCTAssertEqual(requests.count, 2)
        for recorded in requests {
            XCTAssertEqual(recorded.header("Host"), "127.0.0.1:\(server.port)")
            XCTAssertEqual(recorded.target, "/path?q=1")
            XCTAssertNotNil(recorded.header("User-Agent"))  // the configuration's default headers
        }
        XCTAssertTrue(requests.contains { $0.header("Sec-WebSocket-Protocol") == "chat.v1, chat.v2" })
        XCTAssertTrue(requests.contains { $0.header("Authorization") == "Bearer secret" })
    }

    func testARequestWithItsOwnHeadersOffersTheSubprotocolsGiven() async throws {
        // Given a server that accepts the second subprotocol offered, and a request with a token
        let server = try WebSocketTestServer { request, _ in
            let offered = request.header("Sec-WebSocket-Protocol")?.contains("chat.v2") == true
            return .init(handshake: .accept(subprotocol: offered ? "chat.v2" : nil), steps: [.send(.text("hi")), .awaitClose()])
        }
        var request = URLRequest(url: server.url("/chat"))
        request.setValue("Bearer secret", forHTTPHeaderField: "Authorization")

        // When the task is made from the request and the offer
        let task = manager.webSocketTask(with: request, protocols: ["chat.v1", "chat.v2"])
        task.resume()
        _ = try await task.receive()
        task.cancel(with: .normalClosure, reason: nil)
        await waitForCompletion(of: task)

        // Then the handshake carried both, and the server's choice is the task's
        XCTAssertEqual(task.negotiatedProtocol, "chat.v2")
        let sent = try XCTUnwrap(server.requests.first)
        XCTAssertEqual(sent.header("Sec-WebSocket-Protocol"), "chat.v1, chat.v2")
        XCTAssertEqual(sent.header("Authorization"), "Bearer secret")
    }
}
