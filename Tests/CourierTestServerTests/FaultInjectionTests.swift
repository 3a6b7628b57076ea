#if canImport(Glibc)
import Glibc
#endif
import CourierTestServer
import Foundation
import XCTest

/// Fault injection and misbehaving routes.
final class FaultInjectionTests: ServerTestCase {
    func testCloseAfterSendsTheTrueLengthThenAShortBodyAndFIN() throws {
        let client = try connect()
        let response = try client.request("GET", "/bytes/1000?seed=4&close_after=100")
        XCTAssertEqual(response.header("Content-Length"), "1000")
        XCTAssertTrue(response.truncated)
        XCTAssertEqual(response.body, TestServer.deterministicBytes(count: 100, seed: 4))
        XCTAssertFalse(client.sawReset)
    }

    func testCloseAfterAppliesToTheRangeBeingServed() throws {
        let response = try fetch("GET", "/bytes/1000?close_after=10", headers: [("Range", "bytes=500-")])
        XCTAssertEqual(response.status, 206)
        XCTAssertEqual(response.header("Content-Length"), "500")
        XCTAssertEqual(response.body, TestServer.deterministicBytes(count: 1000)[500..<510])
    }

    func testResetAfterAbortsTheConnectionWithRST() throws {
        let client = try connect()
        let response = try client.request("GET", "/bytes/100000?reset_after=100")
        XCTAssertTrue(response.truncated)
        XCTAssertLessThanOrEqual(response.body.count, 100)
        XCTAssertTrue(client.sawReset)
    }

    func testLieLengthDeclaresTheFalseLengthAndThenCloses() throws {
        let longer = try connect()
        let short = try longer.request("GET", "/bytes/100?lie_length=150")
        XCTAssertEqual(short.header("Content-Length"), "150")
        XCTAssertTrue(short.truncated)
        XCTAssertEqual(short.body, TestServer.deterministicBytes(count: 100))

        let shorter = try connect()
        let cut = try shorter.request("GET", "/bytes/100?lie_length=40")
        XCTAssertEqual(cut.body, TestServer.deterministicBytes(count: 40))
        XCTAssertEqual(try shorter.readToEnd(), TestServer.deterministicBytes(count: 100)[40...])
    }

    func testStreamBytesCloseAfterCutsTheChunkedBody() throws {
        let response = try fetch("GET", "/stream-bytes/5000?chunk_size=1000&close_after=1500")
        XCTAssertTrue(response.wasChunked)
        XCTAssertTrue(response.truncated)
        XCTAssertEqual(response.body, TestServer.deterministicBytes(count: 1500))
    }

    func testSlowBodyIsWrittenInPacedPieces() throws {
        let started = Date()
        let response = try fetch("GET", "/bytes/4000?chunk=1000&chunk_delay_ms=100")
        XCTAssertEqual(response.body, TestServer.deterministicBytes(count: 4000))
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 0.29)
    }

    func testNeverAnswerRecordsTheRequestButNeverResponds() throws {
        let client = try connect()
        try client.sendRequest("POST", "/never-answer", body: Data("x".utf8))
        XCTAssertTrue(waitUntil { self.server.requests.count == 1 })
        XCTAssertEqual(server.requests.first?.path, "/never-answer")
        XCTAssertFalse(client.serverClosed(within: 0.3), "neither an answer nor a close")
    }

    func testCloseImmediatelyClosesWithoutAResponse() throws {
        let client = try connect()
        try client.sendRequest("GET", "/close-immediately")
        XCTAssertThrowsError(try client.readResponse())
        XCTAssertEqual(server.requests.count, 1)
    }

    func testDripSendsBytesOverTheDurationAfterTheDelay() throws {
        let started = Date()
        let response = try fetch("GET", "/drip?numbytes=5&duration_ms=400&delay_ms=100&code=201")
        XCTAssertEqual(response.status, 201)
        XCTAssertEqual(response.header("Content-Length"), "5")
        XCTAssertEqual(response.text, "*****")
        // Delay 100 ms, then pieces at 0, 80, …, 320 ms.
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 0.4)
    }

    func testDelayWaitsThenAnswersLikeGet() throws {
        let started = Date()
        let response = try fetch("GET", "/delay/200?x=1")
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 0.2)
        XCTAssertEqual(try response.json()["args"] as? [String: String], ["x": "1"])
        XCTAssertEqual(try fetch("GET", "/delay/soon").status, 400)
    }
}

/// `stop()` must end everything promptly.
final class StopTests: ServerTestCase {
    func testStopUnblocksNeverAnswerAndASlowDrip() throws {
        let silent = try connect()
        try silent.sendRequest("GET", "/never-answer")
        let dripping = try connect()
        try dripping.sendRequest("GET", "/drip?numbytes=100&duration_ms=60000")
        let delayed = try connect()
        try delayed.sendRequest("GET", "/delay/10000")
        let slow = try connect()
        try slow.sendRequest("GET", "/bytes/100000?chunk=10&chunk_delay_ms=1000")
        let idle = try connect()
        XCTAssertTrue(waitUntil { self.server.requests.count == 4 })

        let started = Date()
        server.stop()
        XCTAssertLessThan(Date().timeIntervalSince(started), 3)
        XCTAssertTrue(silent.serverClosed(within: 2))
        let drip = try dripping.readResponse()
        XCTAssertTrue(drip.truncated)
        XCTAssertLessThan(drip.body.count, 100)
        XCTAssertThrowsError(try delayed.readResponse())
        XCTAssertTrue(try slow.readResponse().truncated)
        XCTAssertTrue(idle.serverClosed(within: 2))
        XCTAssertThrowsError(try RawClient(port: server.port), "the listener is closed")
        server.stop()  // idempotent
    }

    func testInitThrowsWhenThePortIsTaken() throws {
        XCTAssertThrowsError(try TestServer(port: server.port)) { error in
            XCTAssertEqual((error as? TestServerError)?.code, EADDRINUSE)
        }
    }

    func testInitRejectsAHostThatIsNotAnAddressLiteral() {
        XCTAssertThrowsError(try TestServer(host: "example.invalid")) { error in
            XCTAssertTrue(error is TestServerError)
        }
    }

    func testReleasingTheServerStopsIt() throws {
        var local: TestServer? = try TestServer()
        let port = try XCTUnwrap(local?.port)
        let client = try RawClient(port: port)
        XCTAssertEqual(try client.request("GET", "/get").status, 200)
        local = nil
        XCTAssertTrue(client.serverClosed(within: 2))
        XCTAssertThrowsError(try RawClient(port: port))
    }
}
