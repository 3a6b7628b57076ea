import CourierTestServer
import Foundation
import XCTest

/// `ScriptedServer`: the raw responder hostile-server tests are built on.
final class ScriptedServerTests: XCTestCase {
    func testRepliesAreTheScriptsBytesAndRequestsAreRecordedInOrder() throws {
        let server = try ScriptedServer { request, index in
            .response(
                status: 200, headers: [("Content-Length", "0x5"), ("X-Index", "\(index)")],
                body: Data("\(request.path)".utf8))
        }
        defer { server.stop() }
        for expected in 0..<2 {
            let client = try RawClient(port: server.port, timeout: 5)
            defer { client.close() }
            try client.sendRequest("GET", "/n\(expected)", headers: [("X-Probe", "p\(expected)")])
            let raw = try client.readToEnd()
            let text = String(decoding: raw, as: UTF8.self)
            XCTAssertTrue(
                text.hasPrefix("HTTP/1.1 200 OK\r\nContent-Length: 0x5\r\nX-Index: \(expected)\r\nConnection: close\r\n\r\n"), text)
            XCTAssertTrue(text.hasSuffix("\r\n\r\n/n\(expected)"), text)
        }
        XCTAssertEqual(server.requests.map(\.path), ["/n0", "/n1"])
        XCTAssertEqual(server.requests.map { $0.header("x-probe") }, ["p0", "p1"])
    }

    func testReadingBodiesRecordsALengthOrChunkedBodyBeforeTheScriptRuns() throws {
        let server = try ScriptedServer(readingBodies: true) { request, _ in
            .response(status: 200, headers: [("Content-Length", "\(request.body.count)")], body: request.body)
        }
        defer { server.stop() }
        for (framing, body) in [("Content-Length: 5\r\n", "hello"), ("Transfer-Encoding: chunked\r\n", "3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n")]
        {
            let client = try RawClient(port: server.port, timeout: 5)
            defer { client.close() }
            try client.send("PUT /config/1 HTTP/1.1\r\nHost: x\r\n\(framing)\r\n\(body)")
            let text = String(decoding: try client.readToEnd(), as: UTF8.self)
            XCTAssertTrue(text.hasSuffix("\r\n\r\n" + (framing.hasPrefix("Content") ? "hello" : "abcde")), text)
        }
        XCTAssertEqual(server.requests.map { String(decoding: $0.body, as: UTF8.self) }, ["hello", "abcde"])
    }

    func testASlicedBodyStopsWhereTheScriptSaysAndPausesAreKept() throws {
        let server = try ScriptedServer { _, _ in
            var reply = ScriptedServer.Reply.response(
                status: 200, headers: [("Content-Length", "10")], body: Data("0123456789".utf8), sendingOnly: 4)
            reply.steps.append(.pause(milliseconds: 200))
            reply.steps.append(.send(Data("45".utf8)))
            return reply
        }
        defer { server.stop() }
        let client = try RawClient(port: server.port, timeout: 5)
        defer { client.close() }
        let started = Date()
        try client.sendRequest("GET", "/")
        let raw = String(decoding: try client.readToEnd(), as: UTF8.self)
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 0.2)
        XCTAssertTrue(raw.hasSuffix("\r\n\r\n012345"), raw)
    }

    func testAHangingReplyKeepsTheConnectionOpenUntilStopped() throws {
        let server = try ScriptedServer { _, _ in ScriptedServer.Reply([], ending: .hang) }
        let client = try RawClient(port: server.port, timeout: 5)
        defer { client.close() }
        try client.sendRequest("GET", "/")
        XCTAssertFalse(client.serverClosed(within: 0.3), "a hanging reply does not close")
        server.stop()
        XCTAssertTrue(client.serverClosed(within: 5), "stop() ends hanging connections")
    }
}
