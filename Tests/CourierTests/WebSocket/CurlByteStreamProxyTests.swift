import CourierTestSupport
import Foundation
import XCTest
@testable import Courier

#if canImport(Glibc)
import Glibc
#endif

/// `CurlByteStream` through an HTTP proxy named in the environment, as libcurl reads it: a
/// `CONNECT` tunnel for `wss://` (`https_proxy`) and for `ws://` (`http_proxy`, with
/// `CURLOPT_HTTPPROXYTUNNEL`). The proxy is a small one in the test, on 127.0.0.1, that records
/// the request lines it reads. The environment is the process's: each test sets it and puts it back.
final class CurlByteStreamProxyTests: TLSServerTestCase {
    private var savedEnvironment: [String: String?] = [:]

    /// Sets the proxy variables for this test only (`no_proxy` cleared: the runner's own names 127.0.0.1).
    private func useProxy(_ variable: String, _ proxy: ConnectProxy) {
        for name in ["http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"] {
            savedEnvironment[name] = ProcessInfo.processInfo.environment[name]
            unsetenv(name)
        }
        setenv(variable, "http://127.0.0.1:\(proxy.port)", 1)
    }

    override func tearDownWithError() throws {
        for (name, value) in savedEnvironment {
            if let value { setenv(name, value, 1) } else { unsetenv(name) }
        }
        savedEnvironment = [:]
        try super.tearDownWithError()
    }

    func testWSSGoesThroughTheHTTPSProxyInACONNECTTunnel() async throws {
        // Given a TLS server, and https_proxy naming a CONNECT proxy
        let tlsServer = try OpenSSLServer(pki: pki, mode: .raw)
        addTeardownBlock { tlsServer.stop() }
        let proxy = try ConnectProxy()
        defer { proxy.stop() }
        useProxy("https_proxy", proxy)
        // When a wss stream opens and writes
        let stream = try await CurlByteStream.open(
            url: URL(string: "wss://127.0.0.1:\(tlsServer.port)/chat")!,
            tls: TLSEnforcer(TLSPolicies(default: TLSPolicy(trust: .only([.file(pki.caFile)])))), timeout: 10)
        defer { stream.close() }
        _ = try Array("31337\n".utf8).withUnsafeBytes { try stream.write($0) }
        // Then the bytes reached the server through the proxy's tunnel
        waitUntil("the server printed the bytes") { tlsServer.output.contains("31337\n") }
        XCTAssertEqual(proxy.requestLines.first, "CONNECT 127.0.0.1:\(tlsServer.port) HTTP/1.1")
    }

    func testWSIsTunnelledThroughTheHTTPProxyToo() async throws {
        // Given http_proxy naming a CONNECT proxy
        let proxy = try ConnectProxy()
        defer { proxy.stop() }
        useProxy("http_proxy", proxy)
        // When a ws stream to the test server opens and sends a request of its own
        let stream = try await CurlByteStream.open(url: URL(string: "ws://127.0.0.1:\(server.port)/x")!, tls: nil, timeout: 10)
        defer { stream.close() }
        let request = "GET /status/204 HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\nConnection: close\r\n\r\n"
        _ = try Array(request.utf8).withUnsafeBytes { try stream.write($0) }
        // Then the server's answer comes back through the tunnel (not the proxy's own forwarding)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = Date().addingTimeInterval(10)
        reading: while Date() < deadline {
            var descriptor = pollfd(fd: stream.descriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, 100)
            while true {
                switch try buffer.withUnsafeMutableBytes({ try stream.read(into: $0) }) {
                case .bytes(let count): received += buffer[0..<count]
                case .wouldBlock: continue reading
                case .closed: break reading
                }
            }
        }
        XCTAssertTrue(String(decoding: received, as: UTF8.self).hasPrefix("HTTP/1.1 204"), String(decoding: received, as: UTF8.self))
        XCTAssertEqual(proxy.requestLines.first, "CONNECT 127.0.0.1:\(server.port) HTTP/1.1")
    }
}

/// An HTTP proxy that only tunnels (`CONNECT host:port` to 127.0.0.1:port), one connection at a
/// time, on a thread of its own; it records each request line it reads.
private final class ConnectProxy: Sendable {
    let port: Int
    private let listener: Int32
    private let lines = Box<String>()

    init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 4) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        guard listener >= 0, bound else { throw POSIXError(.EADDRINUSE) }
        self.listener = listener
        port = Int(UInt16(bigEndian: address.sin_port))
        let lines = lines
        Thread.detachNewThread {
            while true {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }
                Self.serve(client, lines)
            }
        }
    }

    var requestLines: [String] { lines.all }

    /// Ends the accept loop (a shut-down listener makes `accept` fail) and closes the listener.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private static func serve(_ client: Int32, _ lines: Box<String>) {
        defer { close(client) }
        var head: [UInt8] = []
        var byte: UInt8 = 0
        while !head.suffix(4).elementsEqual(Array("\r\n\r\n".utf8)), recv(client, &byte, 1, 0) == 1 { head.append(byte) }
        let line = String(decoding: head, as: UTF8.self).components(separatedBy: "\r\n").first ?? ""
        lines.append(line)
        let parts = line.split(separator: " ")
        guard parts.count == 3, parts[0] == "CONNECT", let port = parts[1].split(separator: ":").last.flatMap({ UInt16($0) }) else {
            _ = send(client, "HTTP/1.1 405 Only CONNECT\r\nContent-Length: 0\r\n\r\n", 45, Int32(MSG_NOSIGNAL))
            return
        }
        let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(upstream) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else { return }
        let established = Array("HTTP/1.1 200 Connection established\r\n\r\n".utf8)
        _ = send(client, established, established.count, Int32(MSG_NOSIGNAL))
        // Relay both ways until either side closes.
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        var descriptors = [pollfd(fd: client, events: Int16(POLLIN), revents: 0), pollfd(fd: upstream, events: Int16(POLLIN), revents: 0)]
        while poll(&descriptors, 2, 10_000) > 0 {
            for (index, descriptor) in descriptors.enumerated() where descriptor.revents != 0 {
                let count = recv(descriptor.fd, &buffer, buffer.count, 0)
                guard count > 0 else { return }
                let other = descriptors[1 - index].fd
                var sent = 0
                while sent < count {
                    let written = buffer[sent..<count].withUnsafeBytes { send(other, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    guard written > 0 else { return }
                    sent += written
                }
            }
        }
    }
}
