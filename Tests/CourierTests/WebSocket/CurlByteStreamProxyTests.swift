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
    /// Names `proxy` in the environment as `variable` for this test only.
    private func useProxy(_ variable: String, _ proxy: ConnectProxy) {
        addTeardownBlock(proxy.useFromEnvironment(as: variable))
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
