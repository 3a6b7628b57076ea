import CourierTestSupport
import Foundation
import XCTest
@testable import Courier

#if canImport(Glibc)
import Glibc
#endif

/// `CurlByteStream` over real TLS: `openssl s_server` without `-HTTP` ties the TLS connection to
/// its standard input and output, so what the stream writes shows in the server's output and what
/// is written to the server's input arrives at the stream. Skipped where `openssl` is missing.
final class CurlByteStreamTests: TLSServerTestCase {
    private var trustingTestCA: TLSPolicy { TLSPolicy(trust: .only([.file(pki.caFile)])) }

    private func startRawServer(requireClientCertificate: Bool = false, extraArguments: [String] = []) throws -> OpenSSLServer {
        let server = try OpenSSLServer(
            pki: pki, requireClientCertificate: requireClientCertificate, mode: .raw, extraArguments: extraArguments)
        addTeardownBlock { server.stop() }
        return server
    }

    private func wssURL(_ port: Int) -> URL { URL(string: "wss://127.0.0.1:\(port)/socket?x=1")! }

    private func open(_ url: URL, _ policy: TLSPolicy?, timeout: TimeInterval = 10) async throws -> CurlByteStream {
        let stream = try await CurlByteStream.open(
            url: url, tls: TLSEnforcer(TLSPolicies(default: policy)), timeout: timeout)
        addTeardownBlock { stream.close() }
        return stream
    }

    /// The error `open` threw (fails the test when it returned a stream).
    private func openingError(_ url: URL, _ policy: TLSPolicy?, timeout: TimeInterval = 10) async -> CourierError? {
        do {
            let stream = try await CurlByteStream.open(url: url, tls: TLSEnforcer(TLSPolicies(default: policy)), timeout: timeout)
            stream.close()
            XCTFail("the stream opened")
            return nil
        } catch {
            return error
        }
    }

    /// `count` bytes of decimal counters ("0000000,0000001,…"): none of `s_server`'s
    /// single-letter commands, and a misplaced or lost chunk shows.
    private func counters(_ count: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + 8)
        var index = 0
        while bytes.count < count {
            var digits = Array(String(index).utf8)
            while digits.count < 7 { digits.insert(UInt8(ascii: "0"), at: 0) }
            bytes += digits + [UInt8(ascii: ",")]
            index += 1
        }
        return Array(bytes.prefix(count))
    }

    private struct Exchange {
        var received: [UInt8] = []
        var blockedWrites = 0
        var blockedReads = 0
        var closed = false
    }

    /// Writes `payload` and reads until `expected` bytes came (or the peer closed), as a WebSocket
    /// does: poll the descriptor, read until `.wouldBlock`, write until 0. Every write is given a
    /// fresh copy of the bytes, so a send the socket blocked is retried from another address.
    private func exchange(
        _ stream: CurlByteStream, sending payload: [UInt8], expecting expected: Int, within seconds: TimeInterval = 60
    )
        throws -> Exchange
    {
        var result = Exchange()
        var sent = 0
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        let deadline = Date().addingTimeInterval(seconds)
        while sent < payload.count || result.received.count < expected, !result.closed {
            guard Date() < deadline else {
                XCTFail("timed out: sent \(sent) of \(payload.count), received \(result.received.count) of \(expected)")
                break
            }
            var descriptor = pollfd(
                fd: stream.descriptor, events: Int16(POLLIN) | (sent < payload.count ? Int16(POLLOUT) : 0), revents: 0)
            _ = poll(&descriptor, 1, 100)
            reading: while true {
                switch try buffer.withUnsafeMutableBytes({ try stream.read(into: $0) }) {
                case .bytes(let count): result.received += buffer[0..<count]
                case .wouldBlock:
                    result.blockedReads += 1
                    break reading
                case .closed:
                    result.closed = true
                    break reading
                }
            }
            while sent < payload.count {
                let chunk = Array(payload[sent..<min(sent + 64 * 1024, payload.count)])
                let taken = try chunk.withUnsafeBytes { try stream.write($0) }
                if taken == 0 {
                    result.blockedWrites += 1
                    break
                }
                sent += taken
            }
        }
        return result
    }

    // MARK: - Bytes

    func testOneMebibyteEachWayAtOnceArrivesWholeAndInOrder() async throws {
        // Given a server whose CA only the policy trusts
        let server = try startRawServer()
        let stream = try await open(wssURL(server.port), trustingTestCA)
        // (small socket buffers: 1 MiB must meet a full socket both ways, however fast the machine)
        shrinkBuffers(of: stream.descriptor)
        let up = counters(1 << 20)
        let down = counters(1 << 20).reversed().map { $0 }
        // When 1 MiB goes each way at the same time (the server's input is fed from another thread)
        DispatchQueue.global().async { server.send(Data(down)) }
        let exchange = try exchange(stream, sending: up, expecting: down.count)
        // Then the stream's bytes are the server's, whole and in order
        XCTAssertEqual(exchange.received.count, down.count)
        XCTAssertTrue(exchange.received == down, "the bytes read differ from the bytes the server sent")
        // And the server got every byte written, in order
        let upText = String(decoding: up, as: UTF8.self)
        waitUntil("the server printed all it read", timeout: 30) { server.output.contains(upText) }
        // And both directions met a full socket at least once (the test exercised `.wouldBlock` and 0)
        XCTAssertGreaterThan(exchange.blockedReads, 0)
        XCTAssertGreaterThan(exchange.blockedWrites, 0, "no write was ever blocked: 1 MiB should fill the socket")
    }

    func testAReadLeavesTheStreamDrainedOnlyOnceOpenSSLHoldsNothingMore() async throws {
        // Given one TLS record of 11 bytes from the server
        let server = try startRawServer()
        let stream = try await open(wssURL(server.port), trustingTestCA)
        server.send(Data("0123456789\n".utf8))
        var first = [UInt8](repeating: 0, count: 4)
        var firstRead = ByteStreamRead.wouldBlock
        let deadline = Date().addingTimeInterval(10)
        while firstRead == .wouldBlock, Date() < deadline {
            var descriptor = pollfd(fd: stream.descriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, 100)
            firstRead = try first.withUnsafeMutableBytes { try stream.read(into: $0) }
        }

        // When 4 of its bytes are read, then the rest
        XCTAssertEqual(firstRead, .bytes(4))
        let heldAfterFirst = !stream.shortReadDrains
        var rest = [UInt8](repeating: 0, count: 64)
        let secondRead = try rest.withUnsafeMutableBytes { try stream.read(into: $0) }

        // Then OpenSSL held the other 7 after the first read (the reader must read on), and nothing after the second
        XCTAssertTrue(heldAfterFirst)
        XCTAssertEqual(secondRead, .bytes(7))
        XCTAssertEqual(String(decoding: first + rest.prefix(7), as: UTF8.self), "0123456789\n")
        XCTAssertTrue(stream.shortReadDrains)
    }

    func testTheServerEndingTheConnectionReadsAsClosed() async throws {
        // Given an open stream
        let server = try startRawServer()
        let stream = try await open(wssURL(server.port), trustingTestCA)
        server.send(Data("0123\n".utf8))
        // When the server ends (its input closed)
        server.closeInput()
        // Then the stream reads what was sent, then the end
        let exchange = try exchange(stream, sending: [], expecting: Int.max, within: 10)
        XCTAssertEqual(String(decoding: exchange.received, as: UTF8.self), "0123\n")
        XCTAssertTrue(exchange.closed)
    }

    func testWritingAfterTheServerWentIsATypedErrorNotASignal() async throws {
        // Given an open stream whose server then goes away
        let server = try startRawServer()
        let stream = try await open(wssURL(server.port), trustingTestCA)
        server.stop()
        // When the stream keeps writing
        var failure: (any Error)?
        let deadline = Date().addingTimeInterval(10)
        while failure == nil, Date() < deadline {
            do {
                _ = try counters(16 * 1024).withUnsafeBytes { try stream.write($0) }
                try await Task.sleep(for: .milliseconds(10))
            } catch {
                failure = error
            }
        }
        // Then it fails with a lost connection (and no SIGPIPE ended the process)
        XCTAssertEqual((failure as? CourierError)?.code, .connectionLost, "\(String(describing: failure))")
    }

    // MARK: - TLS policies

    func testTheSystemTrustRefusesTheTestCAWithATypedError() async throws {
        // Given a server whose certificate the system's CAs do not lead to
        let server = try startRawServer()
        // When it is opened with no policy
        let error = try await XCTUnwrapAsync(await openingError(wssURL(server.port), nil))
        // Then the certificate is untrusted, as for an HTTP request
        XCTAssertEqual(error.code, .tlsCertificateUntrusted, error.message)
        XCTAssertTrue(error.message.contains("host 127.0.0.1:\(server.port)"), error.message)
    }

    func testAPolicyTrustingAnotherCARefusesTheServer() async throws {
        let server = try startRawServer()
        let error = try await XCTUnwrapAsync(
            await openingError(wssURL(server.port), TLSPolicy(trust: .only([.file(pki.otherCAFile)]))))
        XCTAssertEqual(error.code, .tlsCertificateUntrusted, error.message)
    }

    func testASecondConnectTrustingTheSameCAsTakesTheStoreTheFirstParsed() async throws {
        // Given two servers and one policy
        let first = try startRawServer()
        let second = try startRawServer()
        let enforcer = TLSEnforcer(TLSPolicies(default: trustingTestCA))
        let before = CurlByteStream.caStoreCounts
        // When a stream opens to each
        let one = try await CurlByteStream.open(url: wssURL(first.port), tls: enforcer, timeout: 10)
        let afterFirst = CurlByteStream.caStoreCounts
        let two = try await CurlByteStream.open(url: wssURL(second.port), tls: enforcer, timeout: 10)
        let afterSecond = CurlByteStream.caStoreCounts
        one.close()
        two.close()
        // Then the first parsed the CA file (or took a store another test parsed) and the second
        // took that store without parsing
        XCTAssertEqual(afterFirst.parsed + afterFirst.reused, before.parsed + before.reused + 1)
        XCTAssertEqual(afterSecond.parsed, afterFirst.parsed)
        XCTAssertEqual(afterSecond.reused, afterFirst.reused + 1)
    }

    func testAStoreKeptForOneCAFileTrustsNothingForAnother() async throws {
        // Given a store parsed for the test CA by a connect that succeeded
        let trusted = try startRawServer()
        _ = try await open(wssURL(trusted.port), trustingTestCA)
        // When a policy trusting another CA connects to the same kind of server
        let other = try startRawServer()
        let error = try await XCTUnwrapAsync(
            await openingError(wssURL(other.port), TLSPolicy(trust: .only([.file(pki.otherCAFile)]))))
        // Then it is refused: stores are kept per CA file
        XCTAssertEqual(error.code, .tlsCertificateUntrusted, error.message)
    }

    func testAWrongPinFailsWithATypedErrorNamingThePin() async throws {
        // Given a trusted server and a pin of another key
        let server = try startRawServer()
        let wrong = try XCTUnwrap(PublicKeyPin(curl: pki.pin(of: "client")))
        var policy = trustingTestCA
        policy.pins = [wrong]
        // When it is opened
        let error = try await XCTUnwrapAsync(await openingError(wssURL(server.port), policy))
        // Then the pin does not match
        XCTAssertEqual(error.code, .tlsPinMismatch, error.message)
        XCTAssertTrue(error.message.contains(wrong.description), error.message)
    }

    func testARightPinPasses() async throws {
        let server = try startRawServer()
        var policy = trustingTestCA
        policy.pins = [try XCTUnwrap(PublicKeyPin(curl: pki.pin(of: "good")))]
        let stream = try await open(wssURL(server.port), policy)
        XCTAssertGreaterThanOrEqual(stream.descriptor, 0)
    }

    func testAServerRequiringAClientCertificateGetsTheOneThePolicyGives() async throws {
        // Given a server that requires a client certificate from the test CA
        let server = try startRawServer(requireClientCertificate: true)
        var policy = trustingTestCA
        policy.clientIdentity = .init(certificateFile: pki.clientCertificate, keyFile: pki.clientKey)
        // When the stream opens with the policy's identity and writes
        let stream = try await open(wssURL(server.port), policy)
        _ = try exchange(stream, sending: Array("4242\n".utf8), expecting: 0)
        // Then the server read the bytes
        waitUntil("the server printed the bytes") { server.output.contains("4242\n") }
    }

    func testAServerRequiringAClientCertificateRefusesAStreamWithout() async throws {
        // Given a server that requires a client certificate
        let server = try startRawServer(requireClientCertificate: true)
        // When a stream without one opens (TLS 1.3: the refusal comes after the client's handshake)
        var failure: CourierError?
        do {
            let stream = try await open(wssURL(server.port), trustingTestCA)
            _ = try exchange(stream, sending: Array("1\n".utf8), expecting: 1, within: 10)
        } catch {
            failure = error as? CourierError
        }
        // Then it fails with the code HTTP requests get
        XCTAssertEqual(failure?.code, .tlsClientCertificateRequired, "\(String(describing: failure))")
    }

    func testALPNOffersOnlyHTTP1() async throws {
        // Given a server that would choose h2 if offered
        let server = try startRawServer(extraArguments: ["-alpn", "h2,http/1.1"])
        // When the stream opens
        _ = try await open(wssURL(server.port), trustingTestCA)
        // Then the client offered http/1.1 alone (s_server prints the client's list)
        let prefix = "ALPN protocols advertised by the client: "
        waitUntil("the server printed the client's ALPN list") { server.output.contains(prefix) }
        let line = server.output.components(separatedBy: "\n").first { $0.hasPrefix(prefix) }
        XCTAssertEqual(line?.dropFirst(prefix.count).trimmingCharacters(in: .whitespacesAndNewlines), "http/1.1", server.output)
    }

    // MARK: - Transport failures

    func testARefusedConnectionIsTyped() async throws {
        let port = try ListeningSocket().closedPort()
        let error = try await XCTUnwrapAsync(await openingError(wssURL(port), nil))
        XCTAssertEqual(error.code, .connectionRefused, error.message)
    }

    func testAnUnknownHostIsTyped() async throws {
        let error = try await XCTUnwrapAsync(await openingError(URL(string: "wss://courier-wss-test.invalid/")!, nil))
        XCTAssertEqual(error.code, .dnsFailed, error.message)
    }

    func testAServerThatNeverAnswersTheHandshakeTimesOut() async throws {
        // Given a socket that accepts connections (the kernel does) and never says a word
        let silent = try ListeningSocket()
        defer { silent.close() }
        // When a stream opens with a 0.5 s timeout
        let started = Date()
        let error = try await XCTUnwrapAsync(await openingError(wssURL(silent.port), nil, timeout: 0.5))
        // Then it times out, in about that time
        XCTAssertEqual(error.code, .timedOut, error.message)
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
    }

    func testCancellingTheOpeningTaskEndsTheConnectPromptly() async throws {
        // Given a connect that would wait 30 s for a silent server
        let silent = try ListeningSocket()
        defer { silent.close() }
        let url = wssURL(silent.port)
        let started = Date()
        let opening = Task { try await CurlByteStream.open(url: url, tls: nil, timeout: 30) }
        // When its task is cancelled
        try await Task.sleep(for: .milliseconds(300))
        opening.cancel()
        // Then it ends with `cancelled`, long before the timeout
        do {
            let stream = try await opening.value
            stream.close()
            XCTFail("the stream opened")
        } catch {
            XCTAssertEqual((error as? CourierError)?.code, .cancelled, "\(error)")
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 3)
    }

    // MARK: - Closing

    func testCloseIsIdempotentFromManyThreadsAndTheStreamThenReadsClosed() async throws {
        // Given an open stream
        let server = try startRawServer()
        let stream = try await open(wssURL(server.port), trustingTestCA)
        // When it is closed from eight threads at once
        DispatchQueue.concurrentPerform(iterations: 8) { _ in stream.close() }
        // Then a read says closed and a write throws a typed error
        var buffer = [UInt8](repeating: 0, count: 16)
        XCTAssertEqual(try buffer.withUnsafeMutableBytes { try stream.read(into: $0) }, .closed)
        XCTAssertThrowsError(try Array("x".utf8).withUnsafeBytes { try stream.write($0) }) { error in
            XCTAssertEqual((error as? CourierError)?.code, .connectionLost)
        }
        // And the connection is gone: the server read its end (s_server prints DONE)
        waitUntil("the server saw the connection end") { server.output.contains("\nDONE\n") }
    }

    func testAStreamLetGoClosesItsConnection() async throws {
        // Given a stream nobody closes
        let server = try startRawServer()
        var stream: CurlByteStream? = try await CurlByteStream.open(
            url: wssURL(server.port), tls: TLSEnforcer(TLSPolicies(default: trustingTestCA)), timeout: 10)
        XCTAssertNotNil(stream)
        // When the last reference goes
        stream = nil
        // Then the connection ended with it
        waitUntil("the server saw the connection end") { server.output.contains("\nDONE\n") }
    }

    func testAPolicyThatCannotBeEnforcedFailsBeforeConnecting() async throws {
        // Given a policy whose CA file cannot be read
        let server = try startRawServer()
        let policy = TLSPolicy(trust: .only([.file(pki.path("missing-ca.pem"))]))
        // When a stream opens with it
        let error = try await XCTUnwrapAsync(await openingError(wssURL(server.port), policy))
        // Then it is refused before anything is sent, as a request would be
        XCTAssertEqual(error.code, .tlsPolicyUnenforceable, error.message)
        try await Task.sleep(for: .milliseconds(200))
        XCTAssertFalse(server.output.contains("CIPHER is"), server.output)
    }

    func testReadsAndWritesFromTwoThreadsWhileAThirdCloses() async throws {
        // Given an open stream with bytes coming
        let server = try startRawServer()
        let stream = try await open(wssURL(server.port), trustingTestCA)
        // (less than a pipe holds: the write never waits for the server, which is gone at the end)
        server.send(Data(repeating: UInt8(ascii: "7"), count: 32 * 1024))
        // When one thread reads, one writes and a third closes part way
        DispatchQueue.concurrentPerform(iterations: 3) { role in
            var buffer = [UInt8](repeating: 0, count: 4096)
            for round in 0..<2000 {
                if role == 2 {
                    if round == 500 { stream.close() }
                    continue
                }
                do {
                    if role == 0 {
                        if try buffer.withUnsafeMutableBytes({ try stream.read(into: $0) }) == .closed { return }
                    } else {
                        _ = try Array("1234\n".utf8).withUnsafeBytes { try stream.write($0) }
                    }
                } catch {
                    return
                }
            }
        }
        // Then nothing crashed, and the stream stays closed
        var buffer = [UInt8](repeating: 0, count: 16)
        XCTAssertEqual(try buffer.withUnsafeMutableBytes { try stream.read(into: $0) }, .closed)
    }
}

/// Makes the socket's kernel buffers small, so that a test's megabyte fills them.
private func shrinkBuffers(of descriptor: Int32) {
    var size: Int32 = 8 * 1024
    for option in [SO_SNDBUF, SO_RCVBUF] {
        setsockopt(descriptor, SOL_SOCKET, option, &size, socklen_t(MemoryLayout<Int32>.size))
    }
}

/// `XCTUnwrap` for an async expression's value.
private func XCTUnwrapAsync<T>(_ value: T?, file: StaticString = #filePath, line: UInt = #line) async throws -> T {
    try XCTUnwrap(value, file: file, line: line)
}

/// A TCP socket listening on 127.0.0.1 that never accepts: the kernel completes connections to
/// it, and nothing is ever said on them.
private final class ListeningSocket {
    let descriptor: Int32
    let port: Int

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Bool in
                bind(descriptor, pointer, length) == 0 && listen(descriptor, 16) == 0 && getsockname(descriptor, pointer, &length) == 0
            }
        }
        guard bound else {
            Glibc.close(descriptor)
            throw POSIXError(.EADDRINUSE)
        }
        self.descriptor = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    /// Closes the socket and returns its port, where nothing listens now.
    func closedPort() -> Int {
        close()
        return port
    }

    func close() { Glibc.close(descriptor) }
}
