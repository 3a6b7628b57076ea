import CourierTestSupport
import Foundation
import XCTest
@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// HTTPS through an HTTP proxy's `CONNECT` tunnel (`https_proxy`, as libcurl reads it): the
/// response a task sees is the server's, never the proxy's "200 Connection established"
/// (Docs/Platform.md §6.19). `ConnectProxy` adds a `Proxy-Agent` field to its answer so that a
/// mix-up shows.
final class ProxyTunnelTests: TLSServerTestCase {
    func testAnHTTPSResponseThroughAProxyTunnelIsTheServersNotTheProxys() throws {
        // Given a TLS server with a 200 and a 404, and https_proxy naming a CONNECT proxy
        let server = try startServer()
        try server.serve("missing", status: "404 Not Found", headers: ["X-Origin": "server"], body: "nope\n")
        let proxy = try ConnectProxy()
        defer { proxy.stop() }
        addTeardownBlock(proxy.useFromEnvironment(as: "https_proxy"))
        let manager = makeManager(TLSPolicies(default: TLSPolicy(trust: .only([.file(pki.caFile)]))))

        // When both are fetched through the tunnel
        let found = fetch(server.url("ok"), with: manager)
        let missing = fetch(server.url("missing"), with: manager)

        // Then each is the server's answer: its status, its fields and its body, not the proxy's
        XCTAssertEqual(proxy.requestLines.first, "CONNECT 127.0.0.1:\(server.port) HTTP/1.1")
        XCTAssertEqual(found?.response?.statusCode, 200)
        XCTAssertEqual(found?.value, Data("hello\n".utf8))
        XCTAssertEqual(found?.response?.value(forHTTPHeaderField: "Content-Length"), "6")
        XCTAssertNil(found?.response?.value(forHTTPHeaderField: "Proxy-Agent"))
        XCTAssertEqual(missing?.response?.statusCode, 404)
        XCTAssertEqual(missing?.response?.value(forHTTPHeaderField: "X-Origin"), "server")
        XCTAssertEqual(missing?.error?.code, .unacceptableStatusCode)
    }

    func testADownloadThroughAProxyTunnelIsProvedCompleteByTheServersLengthAndPublished() throws {
        // Given a TLS server and https_proxy naming a CONNECT proxy (whose answer has no length)
        let server = try startServer()
        let proxy = try ConnectProxy()
        defer { proxy.stop() }
        addTeardownBlock(proxy.useFromEnvironment(as: "https_proxy"))
        let manager = makeManager(TLSPolicies(default: TLSPolicy(trust: .only([.file(pki.caFile)]))))
        let destination = directory.appendingPathComponent("through-proxy.txt")

        // When the file is downloaded through the tunnel
        let response = wait { finish in
            manager.downloadTask(with: URLRequest(url: server.url("ok")), to: .file(destination), completion: finish).resume()
        }

        // Then the server's Content-Length proves it complete and the file is published whole
        XCTAssertNil(response?.error)
        XCTAssertEqual(response?.response?.statusCode, 200)
        XCTAssertEqual(try? Data(contentsOf: destination), Data("hello\n".utf8))
        XCTAssertEqual(proxy.requestLines.first, "CONNECT 127.0.0.1:\(server.port) HTTP/1.1")
    }
}
