import CourierTestSupport
import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Each transport failure a service can act on gets its own code, checked over real sockets where
/// a socket can produce it; the texts libcurl gives for the rest are checked as a table.
final class TransportErrorTests: CourierTestCase {
    // MARK: - Over real sockets

    func testARefusedConnectionIsConnectionRefused() throws {
        // Given a port that was just bound and closed, so nothing listens on it
        let closed = try TestServer()
        let url = closed.url("/get")
        closed.stop()
        // When it is asked for
        let error = try XCTUnwrap(data(URLRequest(url: url)).error)
        // Then the code says so, and the message keeps libcurl's words
        XCTAssertEqual(error.code, .connectionRefused, "\(error)")
        XCTAssertTrue(error.isTransport)
        XCTAssertTrue(error.message.contains("Couldn't connect to server"), error.message)
        XCTAssertEqual(error.underlyingError.map { $0 as NSError }?.code, NSURLErrorCannotConnectToHost)
        XCTAssertEqual(error.url, url)
        XCTAssertNil(error.response)
    }

    func testAnUnresolvableHostIsDNSFailed() throws {
        // Given a name in `.invalid`, which never resolves (RFC 6761 §6.4), with or without a network
        let url = try XCTUnwrap(URL(string: "http://courier-test.invalid/get"))
        // When it is asked for
        let error = try XCTUnwrap(data(URLRequest(url: url)).error)
        // Then
        XCTAssertEqual(error.code, .dnsFailed, "\(error)")
        XCTAssertTrue(error.isTransport)
        XCTAssertTrue(error.message.contains("Could not resolve host: courier-test.invalid"), error.message)
    }

    func testAConnectionResetMidBodyIsConnectionLost() throws {
        let error = try XCTUnwrap(data(request("/bytes/100000?reset_after=5000")).error)
        XCTAssertEqual(error.code, .connectionLost, "\(error)")
        XCTAssertTrue(error.message.contains("Connection reset by peer"), error.message)
    }

    func testABodyCutShortByAFINIsConnectionLost() throws {
        let error = try XCTUnwrap(data(request("/bytes/100000?close_after=5000")).error)
        XCTAssertEqual(error.code, .connectionLost, "\(error)")
        XCTAssertTrue(error.message.contains("transfer closed with 95000 bytes remaining to read"), error.message)
        XCTAssertEqual(error.statusCode, 200, "the head had arrived")
    }

    func testAConnectionClosedBeforeAnyResponseIsNoResponse() throws {
        let error = try XCTUnwrap(data(request("/close-immediately")).error)
        XCTAssertEqual(error.code, .noResponse, "\(error)")
        XCTAssertTrue(error.message.contains("Empty reply from server"), error.message)
        XCTAssertNil(error.response)
    }

    func testHTTPSToAPlainHTTPServerIsTLSFailedWithOpenSSLsReason() throws {
        // Given a plain-HTTP server that answers as soon as a connection opens. (CourierTestServer
        // itself waits for a request head that a TLS ClientHello never completes, so an https URL
        // to it only times out.)
        let plain = try GreetingServer(greeting: "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        defer { plain.stop() }
        // When it is asked for over https
        let url = try XCTUnwrap(URL(string: "https://127.0.0.1:\(plain.port)/"))
        let error = try XCTUnwrap(data(URLRequest(url: url)).error)
        // Then OpenSSL read the HTTP answer as a TLS record, and its reason is in the message
        XCTAssertEqual(error.code, .tlsFailed, "\(error)")
        XCTAssertTrue(error.isTransport)
        XCTAssertTrue(error.message.contains("wrong version number"), error.message)
    }

    func testASelfSignedCertificateIsUntrustedWithOpenSSLsReason() throws {
        let tls = try OpenSSLServer.start(in: directory)
        defer { tls.stop() }
        let url = try XCTUnwrap(URL(string: "https://localhost:\(tls.port)/"))
        let error = try XCTUnwrap(data(URLRequest(url: url)).error)
        XCTAssertEqual(error.code, .tlsCertificateUntrusted, "\(error)")
        XCTAssertTrue(error.code.isTLS)
        XCTAssertTrue(error.message.contains("host localhost:\(tls.port); no TLS policy"), error.message)
        XCTAssertTrue(error.message.contains("self-signed certificate"), error.message)
    }

    // MARK: - What is retried

    /// Counts attempts: an adapter runs before every one.
    private func attempts(_ request: URLRequest) -> (error: CourierError?, attempts: Int) {
        let count = Counter()
        var policy = RetryPolicy()
        policy.initialDelay = .milliseconds(1)
        policy.maximumDelay = .milliseconds(1)
        let interceptor = Interceptor(
            adapters: [
                Adapter { request in
                    count.increment(); return request
                }
            ], retriers: [policy])
        let response = wait { finish in manager.dataTask(with: request, completion: finish).intercept(with: interceptor).resume() }
        return (response?.error, count.count)
    }

    func testTheDefaultRetryPolicyRetriesRefusedLostAndEmptyButNotDNSOrTLS() throws {
        let closed = try TestServer()
        let refusedURL = closed.url("/get")
        closed.stop()
        let plain = try GreetingServer(greeting: "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
        defer { plain.stop() }
        let table: [(URL, CourierError.Code, attempts: Int)] = [
            (refusedURL, .connectionRefused, 3),
            (server.url("/bytes/100000?reset_after=5000&no_validators=1"), .connectionLost, 3),
            (server.url("/bytes/100000?close_after=5000&no_validators=1"), .connectionLost, 3),
            (server.url("/close-immediately"), .noResponse, 3),
            (try XCTUnwrap(URL(string: "http://courier-test.invalid/get")), .dnsFailed, 1),
            (try XCTUnwrap(URL(string: "https://127.0.0.1:\(plain.port)/")), .tlsFailed, 1),
        ]
        for (url, code, expected) in table {
            let (error, count) = attempts(URLRequest(url: url))
            XCTAssertEqual(error?.code, code, url.absoluteString)
            XCTAssertEqual(count, expected, "\(code): attempts")
        }
        XCTAssertEqual(plain.connectionCount, 1, "a TLS failure is not retried")
    }

    func testAnUnknownContentOrTransferEncodingIsAnInvalidResponseAndNotRetried() throws {
        // Given an origin answering with a coding libcurl cannot decode, in either field
        for field in ["Content-Encoding", "Transfer-Encoding"] {
            let origin = try ScriptedServer { _, _ in
                .response(status: 200, headers: [(field, "x-unknown"), ("Content-Length", "5")], body: Data("hello".utf8))
            }
            defer { origin.stop() }
            // When a data task with the default retry policy asks for it
            let (error, count) = attempts(URLRequest(url: origin.url("/encoded")))
            // Then it fails once, typed, with libcurl's words, and is not asked again
            XCTAssertEqual(error?.code, .invalidResponse, "\(field): \(String(describing: error))")
            XCTAssertEqual(error?.code.isTransient, false)
            XCTAssertTrue(error?.message.contains("Unrecognized content encoding") == true, "\(String(describing: error?.message))")
            XCTAssertEqual(count, 1, "\(field): attempts")
            XCTAssertEqual(origin.requests.count, 1, "\(field): one request reached the origin")
        }
    }

    // MARK: - The texts FoundationNetworking and libcurl give

    func testURLSessionCodesAndLibcurlTextsAreClassified() {
        let table: [(code: Int, text: String, hasResponse: Bool, expected: CourierError.Code)] = [
            // Seen over sockets (libcurl 7.88.1, OpenSSL 3.0), see the tests above.
            (-1003, "Could not resolve host: courier-test.invalid", false, .dnsFailed),
            (-1004, "Failed to connect to 127.0.0.1 port 52751 after 0 ms: Couldn't connect to server", false, .connectionRefused),
            (-1005, "Recv failure: Connection reset by peer", true, .connectionLost),
            (-1, "transfer closed with 95000 bytes remaining to read", true, .connectionLost),
            (-1011, "Empty reply from server", false, .noResponse),
            (-1, "OpenSSL/3.0.19: error:0A00010B:SSL routines::wrong version number", false, .tlsFailed),
            (-1, "SSL certificate problem: self-signed certificate", false, .tlsCertificateUntrusted),
            // Seen with curl 7.88.1 against openssl s_server; FoundationNetworking passes the text on as -1.
            (-1, "SSL certificate problem: certificate has expired", false, .tlsCertificateExpired),
            (-1, "SSL: certificate subject name 'localhost' does not match target host name '127.0.0.1'", false, .tlsHostNameMismatch),
            (-1, "SSL: no alternative certificate subject name matches target host name 'example.org'", false, .tlsHostNameMismatch),
            // Seen through Courier's TLS policies (TLSPolicyTests): pins and client certificates.
            (-1, "SSL certificate problem: unable to get local issuer certificate", false, .tlsCertificateUntrusted),
            (-1, "SSL certificate problem: self-signed certificate in certificate chain", false, .tlsCertificateUntrusted),
            (-1, "SSL: public key does not match pinned public key", false, .tlsPinMismatch),
            (
                -1, "OpenSSL SSL_read: OpenSSL/3.0.19: error:0A00045C:SSL routines::tlsv13 alert certificate required, errno 0", false,
                .tlsClientCertificateRequired
            ),
            (-1, "OpenSSL/3.0.19: error:0A000418:SSL routines::tlsv1 alert unknown ca", false, .tlsClientCertificateRequired),
            (-1, "OpenSSL/3.0.19: error:0A000410:SSL routines::sslv3 alert handshake failure", false, .tlsFailed),
            // libcurl's other wordings of the same failures.
            (-1, "Could not resolve host: nowhere.invalid", false, .dnsFailed),
            (-1, "Could not resolve proxy: proxy.invalid", false, .dnsFailed),
            (-1, "Failed to connect to 10.0.0.1 port 80 after 3 ms: No route to host", false, .connectionRefused),
            (-1, "Empty reply from server", false, .noResponse),
            (-1, "Recv failure: Connection reset by peer", true, .connectionLost),
            (-1, "Send failure: Broken pipe", false, .connectionLost),
            (-1, "transfer closed with outstanding read data remaining", true, .connectionLost),
            (-1, "end of response with 4000 bytes missing", true, .connectionLost),
            (-1, "OpenSSL SSL_read: error:0A000126:SSL routines::unexpected eof while reading, errno 0", true, .connectionLost),
            (-1, "OpenSSL SSL_connect: SSL_ERROR_SYSCALL in connection to example.org:443", false, .tlsFailed),
            (-1200, "An SSL error has occurred", false, .tlsFailed),
            (-1202, "The certificate for this server is invalid", false, .tlsFailed),
            (-1206, "client certificate required (Apple's number)", false, .tlsFailed),
            (-1207, "client certificate required (swift-corelibs-foundation's number)", false, .tlsFailed),
            // Unchanged.
            (-1, "Invalid Content-Length: value", true, .invalidResponse),
            (
                -1, "Unrecognized content encoding type. libcurl understands deflate, gzip, br, zstd content encodings.", true,
                .invalidResponse
            ),
            (-1, "Weird server reply", true, .network),
            (-1001, "", false, .timedOut),
            (-999, "cancelled", false, .cancelled),
            (-1002, "unsupported URL", false, .invalidRequest),
            (-1009, "The Internet connection appears to be offline", false, .network),
            (-1011, "bad server response", true, .network),
        ]
        for row in table {
            let (code, message) = CourierError.classifyTransport(code: row.code, text: row.text, hasResponse: row.hasResponse)
            XCTAssertEqual(code, row.expected, "\(row.code) \(row.text)")
            if !row.text.isEmpty, code.isTransport {
                XCTAssertTrue(message.contains(row.text), "the message keeps libcurl's text: \(message)")
            }
        }
    }

    func testIsTransportCoversEveryCodeThatUsedToBeNetwork() {
        let transport: [CourierError.Code] = [.network, .dnsFailed, .connectionRefused, .connectionLost, .tlsFailed, .noResponse]
        let other: [CourierError.Code] = [
            .timedOut, .cancelled, .invalidRequest, .invalidResponse, .unacceptableStatusCode, .deadlineExceeded,
            .responseTooLarge, .sessionInvalidated, .fileSystem,
        ]
        for code in transport {
            XCTAssertTrue(CourierError(code: code, message: "m").isTransport, "\(code)")
        }
        for code in other {
            XCTAssertFalse(CourierError(code: code, message: "m").isTransport, "\(code)")
        }
        XCTAssertEqual(Set(transport.map(\.description)).count, transport.count, "distinct names")
    }

    func testTransientMeansTheSameFailuresAsBeforeExceptDNSAndTLS() {
        func error(_ code: Int, _ text: String) -> CourierError {
            .transport(
                NSError(domain: NSURLErrorDomain, code: code, userInfo: [NSLocalizedDescriptionKey: text]), url: nil,
                response: nil)
        }
        let retried = [
            error(-1004, "Failed to connect"), error(-1005, "Recv failure: Connection reset by peer"),
            error(-1, "transfer closed with 5 bytes remaining to read"), error(-1011, "Empty reply from server"),
            error(-1001, ""), error(-1009, "offline"), error(-1, "Weird server reply"),
        ]
        for failure in retried {
            XCTAssertTrue(failure.code.isTransient, "\(failure)")
        }
        let notRetried = [
            error(-1003, "Could not resolve host: x.invalid"), error(-1, "Could not resolve host: x.invalid"),
            error(-1, "SSL certificate problem: self-signed certificate"), error(-1202, "untrusted"),
            error(-1002, "unsupported URL"), error(-1, "Invalid Content-Length: x"),
        ]
        for failure in notRetried {
            XCTAssertFalse(failure.code.isTransient, "\(failure)")
        }
    }
}

/// A plain TCP server on 127.0.0.1 that writes `greeting` to every connection as soon as it is
/// accepted, without reading, then closes it: what a TLS client meets when it dials an HTTP port
/// (RetryMatrixTests uses it too).
final class GreetingServer: Sendable {
    let port: UInt16
    private let socket: Int32
    private let accepted = Counter()
    private let done = DispatchSemaphore(value: 0)

    var connectionCount: Int { accepted.count }

    init(greeting: String) throws {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else {
            close(fd)
            throw POSIXError(.EADDRNOTAVAIL)
        }
        socket = fd
        port = UInt16(bigEndian: address.sin_port)
        let bytes = Array(greeting.utf8)
        Thread.detachNewThread { [socket, accepted, done] in
            while true {
                let connection = accept(socket, nil, nil)
                guard connection >= 0 else { break }
                accepted.increment()
                _ = bytes.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                // Let the client read the bytes before the close, so it sees them rather than a reset.
                usleep(50_000)
                close(connection)
            }
            done.signal()
        }
    }

    /// Stops accepting and waits for the accept loop to end.
    func stop() {
        shutdown(socket, Int32(SHUT_RDWR))
        done.wait()
        close(socket)
    }
}

/// `openssl s_server` with a fresh self-signed certificate for `localhost`, on a free loopback
/// port; the test is skipped where the `openssl` tool is missing.
private struct OpenSSLServer {
    let port: UInt16
    let process: Process

    static func start(in directory: URL) throws -> OpenSSLServer {
        let tool = URL(fileURLWithPath: "/usr/bin/openssl")
        guard FileManager.default.isExecutableFile(atPath: tool.path) else { throw XCTSkip("no /usr/bin/openssl") }
        let key = directory.appendingPathComponent("key.pem").path
        let certificate = directory.appendingPathComponent("cert.pem").path
        let generate = Process()
        generate.executableURL = tool
        generate.arguments = [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key,
            "-out", certificate, "-days", "1", "-subj", "/CN=localhost",
        ]
        generate.standardError = FileHandle.nullDevice
        try generate.run()
        generate.waitUntilExit()
        guard generate.terminationStatus == 0 else { throw XCTSkip("openssl could not make a certificate") }
        // A port that was free a moment ago; s_server cannot report the one it would pick.
        let probe = try TestServer()
        let port = probe.port
        probe.stop()
        let server = Process()
        server.executableURL = tool
        server.arguments = ["s_server", "-accept", "127.0.0.1:\(port)", "-cert", certificate, "-key", key, "-www", "-quiet"]
        server.standardOutput = FileHandle.nullDevice
        server.standardError = FileHandle.nullDevice
        try server.run()
        let started = OpenSSLServer(port: port, process: server)
        // Wait until it listens.
        let deadline = Date().addingTimeInterval(5)
        while !Self.accepts(port: port) {
            guard Date() < deadline, server.isRunning else {
                started.stop()
                throw XCTSkip("openssl s_server did not start")
            }
            usleep(20_000)
        }
        return started
    }

    private static func accepts(port: UInt16) -> Bool {
        let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(probe) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(probe, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }
}
