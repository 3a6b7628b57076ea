import CourierTestServer
import CourierTestSupport
import Foundation
import XCTest
@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// WebSocket tasks over `wss://` end to end: `TLSRelay` (`openssl s_server -quiet`) terminates TLS
/// with a throwaway CA's certificate and carries the plaintext to `TestServer`'s `/ws/echo` or a
/// `WebSocketTestServer` script. Skipped where `openssl` is missing.
final class WebSocketTLSTests: WebSocketTaskTestCase {
    private var pki: TLSTestPKI!

    override func setUpWithError() throws {
        if let reason = TLSTestPKI.unavailableReason { throw XCTSkip(reason) }
        try super.setUpWithError()
        pki = try TLSTestPKI()
    }

    override func tearDown() {
        pki = nil
        super.tearDown()
    }

    private var trustingTestCA: TLSPolicy { TLSPolicy(trust: .only([.file(pki.caFile)])) }

    /// A manager whose default TLS policy is `policy` (`nil`: the system's CAs).
    private func makeManager(_ policy: TLSPolicy?) -> SessionManager {
        var configuration = makeWebSocketConfiguration()
        configuration.tls = TLSPolicies(default: policy)
        let manager = SessionManager(configuration: configuration)
        addTeardownBlock { manager.invalidate(cancelingTasks: true) }
        return manager
    }

    /// A TLS front for the plain server at `port`, stopped after the test.
    private func relay(to port: some BinaryInteger) throws -> TLSRelay {
        let relay = try TLSRelay(pki: pki, targetPort: Int(port))
        addTeardownBlock { relay.stop() }
        return relay
    }

    // MARK: - Messages

    func testTextAndBinaryMessagesComeBackOverTLS() async throws {
        // Given the echo endpoint behind TLS with the test CA's certificate, and a policy trusting that CA
        let server = try TestServer()
        let front = try relay(to: server.port)
        let task = makeManager(trustingTestCA).webSocketTask(with: front.url("/ws/echo"))
        task.resume()

        // When a text and a binary message are sent
        try await task.send(.string("hello over TLS, Grüße 😀"))
        try await task.send(.data(Data([0, 1, 2, 255])))

        // Then both come back in order, of their kind, after a 101
        let first = try await task.receive()
        let second = try await task.receive()
        XCTAssertEqual(text(first), "hello over TLS, Grüße 😀")
        XCTAssertEqual(data(second), Data([0, 1, 2, 255]))
        XCTAssertEqual(task.response?.statusCode, 101)
        XCTAssertEqual(server.requests.first?.path, "/ws/echo")
        task.cancel(with: .normalClosure, reason: nil)
        let completion = await waitForCompletion(of: task)
        XCTAssertNil(completion?.error)
    }

    func testTheRelayStartsPromptlyWhenManySocketsComeBeforeItInTheKernelsTable() throws {
        // Given 200 more listeners on 127.0.0.1 than a test usually has (late in the full suite
        // the socket table is long; `/proc/net/tcp` then spans many pages)
        let server = try TestServer()
        let listeners = try (0..<200).map { _ in try TestServer() }
        defer { listeners.forEach { $0.stop() } }

        // When a relay starts
        let started = Date()
        let front = try relay(to: server.port)

        // Then it is found listening on its first attempt (each attempt waits up to 15 s), and
        // the whole table was read: every one of the listeners is in it
        XCTAssertLessThan(Date().timeIntervalSince(started), 10)
        XCTAssertTrue(front.isRunning)
        let table = TLSRelay.readToEnd("/proc/net/tcp")
        let missing = listeners.filter { listener in
            table.range(of: Data(String(format: "0100007F:%04X 00000000:0000 0A", Int(listener.port)).utf8)) == nil
        }
        XCTAssertEqual(missing.count, 0)
    }

    func testAOneMebibyteMessageComesBackWholeOverTLS() async throws {
        // Given the echo behind TLS
        let server = try TestServer()
        let front = try relay(to: server.port)
        let task = makeManager(trustingTestCA).webSocketTask(with: front.url("/ws/echo"))
        task.maximumMessageSize = 2 << 20
        task.resume()
        // (no byte repeats with a period of a TLS record: a misplaced record would show)
        let payload = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: ($0 &* 31) ^ ($0 >> 11)) })

        // When 1 MiB goes out in one message, and a text message after it
        try await task.send(.data(payload))
        try await task.send(.string("after"))

        // Then it comes back byte for byte, and the next message after it
        let echoed = try await task.receive()
        XCTAssertEqual(data(echoed)?.count, payload.count)
        XCTAssertTrue(data(echoed) == payload, "the echoed mebibyte differs")
        let after = try await task.receive()
        XCTAssertEqual(text(after), "after")
        task.cancel(with: .normalClosure, reason: nil)
        await waitForCompletion(of: task)
    }

    // MARK: - Closing

    func testTheClientsCloseHandshakeCompletesCleanlyOverTLS() async throws {
        // Given an open connection to the echo behind TLS
        let server = try TestServer()
        let front = try relay(to: server.port)
        let task = makeManager(trustingTestCA).webSocketTask(with: front.url("/ws/echo"))
        task.resume()
        try await task.send(.string("ping"))
        _ = try await task.receive()

        // When the client closes with 1000 and a reason
        task.cancel(with: .normalClosure, reason: Data("done".utf8))

        // Then the server echoed the Close frame and closed first: a clean completion with its code
        let completion = await waitForCompletion(of: task)
        XCTAssertNil(completion?.error)
        XCTAssertEqual(task.closeCode, .normalClosure)
        let error = await thrown { try await task.receive() }
        XCTAssertEqual(error?.code, .cancelled)
    }

    func testTheServersCloseHandshakeEndsTheMessagesOverTLS() async throws {
        // Given a scripted server behind TLS that sends two messages, then closes with 4000
        let server = try WebSocketTestServer(
            script: .init(steps: [.send(.text("one")), .send(.binary(Data([2]))), .send(.close(4000, reason: "bye")), .read(count: 1)]))
        let front = try relay(to: server.port)
        let task = makeManager(trustingTestCA).webSocketTask(with: front.url("/"))
        task.resume()

        // When the messages are read to their end
        var received: [URLSessionWebSocketTask.Message] = []
        for try await message in task.messages { received.append(message) }

        // Then both arrived, the sequence ended without an error, and the client echoed 4000
        XCTAssertEqual(received.count, 2)
        XCTAssertEqual(text(received[0]), "one")
        let completion = await waitForCompletion(of: task)
        XCTAssertNil(completion?.error)
        XCTAssertEqual(task.webSocketCloseCode, WebSocketCloseCode(rawValue: 4000))
        XCTAssertEqual(task.closeReason, Data("bye".utf8))
        XCTAssertEqual(server.receivedFrames.last?.frame.closeCode, 4000)
        XCTAssertTrue(server.receivedFrames.allSatisfy { $0.frame.maskingKey?.count == 4 })
    }

    // MARK: - Trust

    func testAPolicyTrustingAnotherCAFailsTypedBeforeAnyFrame() async throws {
        // Given the echo behind TLS and a policy that trusts only another CA
        let server = try TestServer()
        let front = try relay(to: server.port)
        let task = makeManager(TLSPolicy(trust: .only([.file(pki.otherCAFile)]))).webSocketTask(with: front.url("/ws/echo"))
        task.resume()

        // When a message is sent before the connection is open, and the answer awaited
        let sendError = await thrown { try await task.send(.string("never")) }
        let error = await thrown { try await task.receive() }

        // Then the send (which waited for the handshake) and the receive get the TLS error, and no
        // handshake (so no frame) reached the server
        XCTAssertEqual(sendError?.code, .tlsCertificateUntrusted, sendError?.message ?? "")
        XCTAssertEqual(error?.code, .tlsCertificateUntrusted, error?.message ?? "")
        let completion = await waitForCompletion(of: task)
        XCTAssertEqual(completion?.error?.code, .tlsCertificateUntrusted)
        XCTAssertNil(task.response)
        XCTAssertTrue(server.requests.isEmpty, "\(server.requests)")
    }

    func testTheSystemsTrustRefusesTheTestCA() async throws {
        // Given no policy: the system's CAs, which do not lead to the test CA
        let server = try TestServer()
        let front = try relay(to: server.port)
        let task = makeManager(nil).webSocketTask(with: front.url("/ws/echo"))
        task.resume()

        let error = await thrown { try await task.receive() }

        XCTAssertEqual(error?.code, .tlsCertificateUntrusted, error?.message ?? "")
        XCTAssertTrue(server.requests.isEmpty)
    }

    func testAPinMismatchFailsTypedBeforeAnyFrame() async throws {
        // Given a trusted server and a pin of another key
        let server = try TestServer()
        let front = try relay(to: server.port)
        var policy = trustingTestCA
        policy.pins = [try XCTUnwrap(PublicKeyPin(curl: pki.pin(of: "client")))]
        let task = makeManager(policy).webSocketTask(with: front.url("/ws/echo"))
        task.resume()

        let error = await thrown { try await task.receive() }

        XCTAssertEqual(error?.code, .tlsPinMismatch, error?.message ?? "")
        XCTAssertTrue(server.requests.isEmpty)
    }

    func testTheRightPinPasses() async throws {
        let server = try TestServer()
        let front = try relay(to: server.port)
        var policy = trustingTestCA
        policy.pins = [try XCTUnwrap(PublicKeyPin(curl: pki.pin(of: "good")))]
        let task = makeManager(policy).webSocketTask(with: front.url("/ws/echo"))
        task.resume()

        try await task.send(.string("pinned"))

        let echoed = try await task.receive()
        XCTAssertEqual(text(echoed), "pinned")
        task.cancel(with: .normalClosure, reason: nil)
        let completion = await waitForCompletion(of: task)
        XCTAssertNil(completion?.error)
    }
}
