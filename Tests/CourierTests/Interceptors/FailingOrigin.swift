import CourierTestServer
import Foundation
import XCTest

/// An origin that fails one way, over real sockets: what the retry tests (RetryMatrixTests,
/// RetryOwnerTableTests) send their requests to.
struct FailingOrigin {
    /// How it fails.
    enum Way {
        /// A port that was bound, then closed: nothing listens there.
        case refused
        /// An RST as soon as the request head is read, before any response byte.
        case reset
        /// A `.invalid` host.
        case dns
        /// A plain HTTP server on an https URL: the handshake fails, as it does for an untrusted
        /// CA (both are `tlsFailed` codes, none transient; TLSPolicyTests covers the CA itself).
        case tls
        /// `503` with this `Retry-After`, every time.
        case unavailable(retryAfter: String)
        /// The head is read and never answered.
        case silent
    }

    let url: URL
    private let scripted: ScriptedServer?
    private let greeting: GreetingServer?

    /// Starts the origin; `name` tells test URLs apart (`/name`, `name.invalid`).
    init(_ way: Way, name: String) throws {
        var scripted: ScriptedServer?
        var greeting: GreetingServer?
        switch way {
        case .refused:
            let closed = try ScriptedServer { _, _ in .bytes("") }
            url = closed.url("/\(name)")
            closed.stop()
        case .reset:
            scripted = try ScriptedServer { _, _ in ScriptedServer.Reply([], ending: .reset) }
            url = scripted!.url("/\(name)")
        case .dns:
            url = try XCTUnwrap(URL(string: "http://\(name).invalid/dns"))
        case .tls:
            let server = try GreetingServer(greeting: "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            greeting = server
            url = try XCTUnwrap(URL(string: "https://127.0.0.1:\(server.port)/\(name)"))
        case .unavailable(let retryAfter):
            scripted = try ScriptedServer { _, _ in
                .response(status: 503, reason: "Service Unavailable", headers: [("Retry-After", retryAfter), ("Content-Length", "0")])
            }
            url = scripted!.url("/\(name)")
        case .silent:
            scripted = try ScriptedServer { _, _ in ScriptedServer.Reply([], ending: .hang) }
            url = scripted!.url("/\(name)")
        }
        self.scripted = scripted
        self.greeting = greeting
    }

    /// The requests (or, for `.tls`, the connections) that reached it; `nil` when nothing listens.
    var attempts: Int? { scripted.map { $0.requests.count } ?? greeting.map { $0.connectionCount } }

    func stop() {
        scripted?.stop()
        greeting?.stop()
    }
}
