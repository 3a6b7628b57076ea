import CourierTestServer
import Foundation
import XCTest

/// A base class that starts a fresh server per test and stops it afterwards.
class ServerTestCase: XCTestCase {
    /// The server under test; created in `setUpWithError`.
    private(set) var server: TestServer!

    override func setUpWithError() throws {
        try super.setUpWithError()
        server = try TestServer()
    }

    override func tearDown() {
        server?.stop()
        server = nil
        super.tearDown()
    }

    /// A fresh connection to the server.
    func connect(timeout: TimeInterval = 10) throws -> RawClient {
        try RawClient(port: server.port, timeout: timeout)
    }

    /// Sends one request on a new connection and reads its response.
    func fetch(_ method: String = "GET", _ target: String, headers: [(String, String)] = [], body: Data? = nil) throws -> RawResponse {
        let client = try connect()
        defer { client.close() }
        return try client.request(method, target, headers: headers, body: body)
    }

    /// Polls `condition` every 10 ms until it holds or `timeout` passes.
    func waitUntil(timeout: TimeInterval = 5, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return condition()
    }
}
