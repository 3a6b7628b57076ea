#if canImport(Glibc)
import Glibc
#endif
import CourierTestServer
import Foundation
import XCTest

/// Connection handling, request framing, limits and recording.
final class ConnectionTests: ServerTestCase {
    func testKeepAliveServesTwoRequestsOnOneConnection() throws {
        let client = try connect()
        XCTAssertEqual(try client.request("GET", "/get?n=1").status, 200)
        let second = try client.request("GET", "/get?n=2")
        XCTAssertEqual(second.status, 200)
        XCTAssertNil(second.header("Connection"))
        let requests = server.requests
        XCTAssertEqual(requests.map(\.target), ["/get?n=1", "/get?n=2"])
        XCTAssertEqual(requests.map(\.connectionID), [1, 1])
        XCTAssertEqual(server.connectionCount, 1)
    }

    func testConnectionCloseIsAnsweredAndThenClosed() throws {
        let client = try connect()
        let response = try client.request("GET", "/get", headers: [("Connection", "close")])
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.header("Connection"), "close")
        XCTAssertTrue(client.serverClosed(within: 2))
    }

    func testHTTP10RequestsAreAnsweredAndClosed() throws {
        let client = try connect()
        try client.send("GET /get HTTP/1.0\r\n\r\n")
        let response = try client.readResponse()
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.header("Connection"), "close")
        XCTAssertTrue(client.serverClosed(within: 2))
        XCTAssertEqual(server.requests.first?.httpVersion, "HTTP/1.0")
    }

    func testPipelinedRequestsAreAnsweredInOrder() throws {
        let client = try connect()
        try client.send(
            "GET /get?n=1 HTTP/1.1\r\nHost: x\r\n\r\nPOST /anything HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabcGET /status/201 HTTP/1.1\r\nHost: x\r\n\r\n"
        )
        XCTAssertEqual(try client.readResponse().status, 200)
        XCTAssertEqual(try client.readResponse().json()["data"] as? String, "abc")
        XCTAssertEqual(try client.readResponse().status, 201)
    }

    func testChunkedRequestBodyIsDechunked() throws {
        let client = try connect()
        try client.send(
            "POST /anything HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "5\r\nhello\r\n6;name=value\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n")
        let response = try client.readResponse()
        XCTAssertEqual(try response.json()["data"] as? String, "hello world")
        XCTAssertEqual(try response.json()["bodyLength"] as? Int, 11)
        XCTAssertEqual(server.requests.first?.body, Data("hello world".utf8))
        XCTAssertEqual(server.requests.first?.header("transfer-encoding"), "chunked")
    }

    func testExpectContinueGets100BeforeTheBodyIsSent() throws {
        let client = try connect()
        try client.send("PUT /anything HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
        let interim = try client.readResponse()
        XCTAssertEqual(interim.statusLine, "HTTP/1.1 100 Continue")
        XCTAssertTrue(server.requests.isEmpty, "recorded only after the body arrives")
        try client.send("12345")
        let final = try client.readResponse()
        XCTAssertEqual(final.status, 200)
        XCTAssertEqual(try final.json()["data"] as? String, "12345")
    }

    func testMalformedRequestsGet400AndAreClosed() throws {
        let hostile = [
            "GARBAGE\r\n\r\n",
            "GET /get HTTP/1.1\r\nNo colon here\r\n\r\n",
            "GET /get HTTP/1.1\r\nBad Name: x\r\n\r\n",
            "GET /get HTTP/1.1\r\nX-Fold: a\r\n b\r\n\r\n",
            "GET /get HTTP/1.1\nHost: x\r\n\r\n",
            "GET  /get HTTP/1.1\r\n\r\n",
            "GET get HTTP/1.1\r\n\r\n",
            "GET /get HTTX/1.1\r\n\r\n",
            "POST /anything HTTP/1.1\r\nContent-Length: -5\r\n\r\n",
            "POST /anything HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n",
            "POST /anything HTTP/1.1\r\nContent-Length: +5\r\n\r\nhello",
            "POST /anything HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
            "POST /anything HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            "POST /anything HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            "POST /anything HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFFFFF\r\n",
            "POST /anything HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcXY0\r\n\r\n",
            "GET /get HTTP/1.1\r\nX: a\u{1}b\r\n\r\n",
        ]
        for input in hostile {
            let client = try connect()
            try client.send(input)
            let response = try client.readResponse()
            XCTAssertEqual(response.status, 400, input.debugDescription)
            XCTAssertEqual(response.header("Connection"), "close", input.debugDescription)
            XCTAssertTrue(client.serverClosed(within: 2), input.debugDescription)
        }
        XCTAssertTrue(server.requests.isEmpty)
    }

    func testUnsupportedVersionAndTransferCodingAreRefused() throws {
        XCTAssertEqual(try exchange("GET /get HTTP/2.0\r\n\r\n").status, 505)
        XCTAssertEqual(try exchange("POST /anything HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n").status, 501)
    }

    func testOversizedHeadGets431() throws {
        let client = try connect()
        try client.send("GET /get HTTP/1.1\r\nX-Big: \(String(repeating: "a", count: 70 * 1024))\r\n\r\n")
        let response = try client.readResponse()
        XCTAssertEqual(response.status, 431)
        XCTAssertTrue(client.serverClosed(within: 2))
    }

    func testSinkStreamsALargeBodyAndRecordsItEmpty() throws {
        let client = try connect(timeout: 60)
        let size = 64 * 1024 * 1024
        try client.send("PUT /sink HTTP/1.1\r\nHost: x\r\nContent-Length: \(size)\r\n\r\n")
        let block = Data(repeating: 0x5A, count: 1024 * 1024)
        for _ in 0..<(size / block.count) { try client.send(block) }
        let response = try client.readResponse()
        XCTAssertEqual(try response.json()["bodyLength"] as? Int, size)
        let recorded = try XCTUnwrap(server.requests.last)
        XCTAssertEqual(recorded.path, "/sink")
        XCTAssertTrue(recorded.body.isEmpty)
        XCTAssertEqual(recorded.bodyLength, size)
    }

    func testSinkAcceptsAChunkedBody() throws {
        let client = try connect()
        try client.send("POST /sink HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
        let chunk = Data(repeating: 0x41, count: 100_000)
        for _ in 0..<10 {
            try client.send("186a0\r\n")
            try client.send(chunk)
            try client.send("\r\n")
        }
        try client.send("0\r\n\r\n")
        XCTAssertEqual(try client.readResponse().json()["bodyLength"] as? Int, 1_000_000)
    }

    func testTwoHundredConcurrentConnectionsEachGetAnAnswer() throws {
        try assertConcurrentConnections(200)
    }

    func testFiveHundredSimultaneousConnectionsAreAccepted() throws {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        try XCTSkipIf(limit.rlim_cur < 1_400, "needs ~1,100 descriptors, the limit is \(limit.rlim_cur)")
        try assertConcurrentConnections(500)
    }

    /// Opens `count` connections before sending anything, so they are all open at once.
    private func assertConcurrentConnections(_ count: Int) throws {
        let clients = try (0..<count).map { _ in try connect(timeout: 30) }
        for (index, client) in clients.enumerated() {
            try client.sendRequest("GET", "/get?i=\(index)")
        }
        for (index, client) in clients.enumerated() {
            let response = try client.readResponse()
            XCTAssertEqual(response.status, 200)
            XCTAssertEqual(try response.json()["args"] as? [String: String], ["i": "\(index)"])
        }
        XCTAssertEqual(server.connectionCount, count)
        XCTAssertEqual(Set(server.requests.map(\.connectionID)).count, count)
    }

    func testRequestsAreRecordedWithHeadersInOrder() throws {
        _ = try fetch("POST", "/anything?k=a%20b&k=c", headers: [("X-B", "2"), ("X-A", "1"), ("x-b", "3")], body: Data("hi".utf8))
        let request = try XCTUnwrap(server.requests.first)
        XCTAssertEqual(request.method, "POST")
        XCTAssertEqual(request.target, "/anything?k=a%20b&k=c")
        XCTAssertEqual(request.path, "/anything")
        XCTAssertEqual(request.query, ["k": "c"])
        XCTAssertEqual(request.headers.map(\.name), ["Host", "X-B", "X-A", "x-b", "Content-Length"])
        XCTAssertEqual(request.headers.map(\.value), ["127.0.0.1:\(server.port)", "2", "1", "3", "2"])
        XCTAssertEqual(request.header("x-a"), "1")
        XCTAssertEqual(request.header("X-B"), "2")
        XCTAssertEqual(request.body, Data("hi".utf8))
        XCTAssertEqual(request.connectionID, 1)
        server.clearRequests()
        XCTAssertTrue(server.requests.isEmpty)
    }

    /// Sends raw bytes on a new connection and reads one response.
    private func exchange(_ raw: String) throws -> RawResponse {
        let client = try connect()
        try client.send(raw)
        return try client.readResponse()
    }
}
