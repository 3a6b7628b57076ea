import XCTest
@testable import Courier

final class WebSocketHandshakeTests: XCTestCase {
    /// "the sample nonce": RFC 6455 §1.3's example key is its base64.
    private let sampleNonce = Array("the sample nonce".utf8)

    private func handshake(
        _ url: String, protocols: [String] = [], headers: [(name: String, value: String)] = []
    ) throws -> WebSocketHandshake {
        try WebSocketHandshake(url: XCTUnwrap(URL(string: url)), nonce: sampleNonce, protocols: protocols, headers: headers)
    }

    private func refusal(
        _ url: String, nonce: [UInt8]? = nil, protocols: [String] = [], headers: [(name: String, value: String)] = []
    ) -> CourierError? {
        guard let parsed = URL(string: url) else {
            XCTFail("bad test URL")
            return nil
        }
        return courierError { () throws(CourierError) in
            try WebSocketHandshake(url: parsed, nonce: nonce ?? sampleNonce, protocols: protocols, headers: headers)
        }
    }

    private func goodResponse(for handshake: WebSocketHandshake) -> [(name: String, value: String)] {
        [
            ("Upgrade", "websocket"), ("Connection", "Upgrade"),
            ("Sec-WebSocket-Accept", WebSocketHandshake.acceptValue(forKey: handshake.key)),
        ]
    }

    func testAcceptValueIsTheRFCExample() {
        XCTAssertEqual(WebSocketHandshake.acceptValue(forKey: "dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    func testRequestHeadForTheRFCExample() throws {
        let handshake = try handshake("ws://server.example.com/chat", protocols: ["chat", "superchat"])
        XCTAssertEqual(handshake.key, "dGhlIHNhbXBsZSBub25jZQ==")
        XCTAssertEqual(
            handshake.head,
            "GET /chat HTTP/1.1\r\nHost: server.example.com\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                + "Sec-WebSocket-Protocol: chat, superchat\r\n\r\n")
        XCTAssertEqual(handshake.host, "server.example.com")
        XCTAssertEqual(handshake.port, 80)
        XCTAssertFalse(handshake.isSecure)
    }

    func testHostCarriesThePortOnlyWhenItIsNotTheSchemesDefault() throws {
        let rows: [(url: String, host: String, port: Int)] = [
            ("ws://h:9001/", "h:9001", 9001), ("ws://h:80/", "h", 80), ("wss://h:443/", "h", 443), ("wss://h:80/", "h:80", 80),
            ("ws://h:443/", "h:443", 443), ("wss://h/", "h", 443), ("https://h:8443/", "h:8443", 8443), ("http://h/", "h", 80),
            ("ws://127.0.0.1:54321/x", "127.0.0.1:54321", 54321),
        ]
        for row in rows {
            let handshake = try handshake(row.url)
            XCTAssertTrue(handshake.head.contains("\r\nHost: \(row.host)\r\n"), "\(row.url): \(handshake.head)")
            XCTAssertEqual(handshake.port, row.port, row.url)
        }
    }

    func testAnIPv6HostIsBracketedInHostButNotForTheSocket() throws {
        let handshake = try handshake("ws://[::1]:8080/")
        XCTAssertTrue(handshake.head.contains("\r\nHost: [::1]:8080\r\n"), handshake.head)
        XCTAssertEqual(handshake.host, "::1")
    }

    func testTheTargetIsThePathAndQueryWithoutTheFragment() throws {
        XCTAssertTrue(try handshake("ws://h/a%20b/c?x=1&y=%2F#frag").head.hasPrefix("GET /a%20b/c?x=1&y=%2F HTTP/1.1\r\n"))
        XCTAssertTrue(try handshake("ws://h").head.hasPrefix("GET / HTTP/1.1\r\n"))
        XCTAssertTrue(try handshake("ws://h?q").head.hasPrefix("GET /?q HTTP/1.1\r\n"))
    }

    func testExtraHeadersFollowAndTheHandshakesOwnFieldsCannotBeOverridden() throws {
        let handshake = try handshake(
            "ws://h/",
            headers: [
                ("Authorization", "Bearer t"), ("Connection", "keep-alive"), ("host", "evil"), ("X-Trace", "1"),
                ("Sec-WebSocket-Extensions", "permessage-deflate"), ("Sec-WebSocket-Version", "8"),
            ])
        let lines = handshake.head.components(separatedBy: "\r\n")
        XCTAssertEqual(Array(lines.suffix(4)), ["Authorization: Bearer t", "X-Trace: 1", "", ""])
        XCTAssertEqual(lines.filter { $0.lowercased().hasPrefix("connection:") }, ["Connection: Upgrade"])
        XCTAssertEqual(lines.filter { $0.lowercased().hasPrefix("host:") }, ["Host: h"])
        XCTAssertFalse(handshake.head.contains("permessage-deflate"))
        XCTAssertEqual(lines.filter { $0.hasPrefix("Sec-WebSocket-Version") }, ["Sec-WebSocket-Version: 13"])
    }

    func testASubprotocolHeaderAmongTheHeadersIsTheOffer() throws {
        let handshake = try handshake("ws://h/", headers: [("Sec-WebSocket-Protocol", "v2.chat, v1.chat")])
        XCTAssertEqual(handshake.offeredProtocols, ["v2.chat", "v1.chat"])
        XCTAssertTrue(handshake.head.contains("\r\nSec-WebSocket-Protocol: v2.chat, v1.chat\r\n"))
    }

    func testBadRequestsAreRefusedWithInvalidRequest() {
        XCTAssertEqual(refusal("ftp://h/")?.code, .invalidRequest)
        XCTAssertEqual(refusal("ws:///path")?.code, .invalidRequest)
        XCTAssertEqual(refusal("ws://h/", nonce: Array(repeating: 1, count: 15))?.code, .invalidRequest)
        XCTAssertEqual(refusal("ws://h/", protocols: ["a b"])?.code, .invalidRequest)
        XCTAssertEqual(refusal("ws://h/", protocols: ["chat", "chat"])?.code, .invalidRequest)
        XCTAssertEqual(refusal("ws://h/", protocols: [""])?.code, .invalidRequest)
        // A header value that would smuggle a field, and a name that is not a token.
        XCTAssertEqual(refusal("ws://h/", headers: [("X-A", "1\r\nX-Injected: 2")])?.code, .invalidRequest)
        XCTAssertEqual(refusal("ws://h/", headers: [("X A", "1")])?.code, .invalidRequest)
    }

    func testAValidResponseIsAccepted() throws {
        let handshake = try handshake("ws://h/")
        XCTAssertEqual(try handshake.validate(status: 101, headers: goodResponse(for: handshake)), .init(subprotocol: nil))
    }

    func testUpgradeAndConnectionAreMatchedInAnyCaseAndInLists() throws {
        let handshake = try handshake("ws://h/")
        let headers: [(name: String, value: String)] = [
            ("upgrade", "WebSocket"), ("CONNECTION", "keep-alive"), ("connection", " UPGRADE "),
            ("sec-websocket-accept", " " + WebSocketHandshake.acceptValue(forKey: handshake.key) + " "),
        ]
        XCTAssertNoThrow(try handshake.validate(status: 101, headers: headers))
    }

    func testA200IsRefusedWithItsStatus() throws {
        let handshake = try handshake("ws://h/")
        let error = courierError { () throws(CourierError) in try handshake.validate(status: 200, headers: [("Content-Length", "0")]) }
        XCTAssertEqual(error?.code, .unacceptableStatusCode)
        XCTAssertEqual(error?.statusCode, 200)
    }

    func testARedirectIsRefusedNotFollowed() throws {
        let handshake = try handshake("ws://h/")
        let error = courierError { () throws(CourierError) in try handshake.validate(status: 302, headers: [("Location", "ws://other/")]) }
        XCTAssertEqual(error?.code, .redirectRefused)
    }

    func testAWrongMissingOrDoubledAcceptIsRefused() throws {
        let handshake = try handshake("ws://h/")
        let base: [(name: String, value: String)] = [("Upgrade", "websocket"), ("Connection", "Upgrade")]
        let rows: [[(name: String, value: String)]] = [
            base + [("Sec-WebSocket-Accept", "s3pPLMBiTxaQ9kYGzzhZRbK+xOo")],  // the right value, one character short
            base + [("Sec-WebSocket-Accept", WebSocketHandshake.acceptValue(forKey: handshake.key).lowercased())],
            base,
            base + goodResponse(for: handshake).suffix(1) + goodResponse(for: handshake).suffix(1),
        ]
        for headers in rows {
            let error = courierError { () throws(CourierError) in try handshake.validate(status: 101, headers: headers) }
            XCTAssertEqual(error?.code, .invalidResponse, "\(headers)")
            XCTAssertEqual(error?.statusCode, 101)
        }
    }

    func testA101WithoutTheUpgradeIsRefused() throws {
        let handshake = try handshake("ws://h/")
        let accept = ("Sec-WebSocket-Accept", WebSocketHandshake.acceptValue(forKey: handshake.key))
        let rows: [[(name: String, value: String)]] = [
            [("Connection", "Upgrade"), accept], [("Upgrade", "h2c"), ("Connection", "Upgrade"), accept],
            [("Upgrade", "websocket"), accept], [("Upgrade", "websocket"), ("Connection", "close"), accept],
        ]
        for headers in rows {
            let error = courierError { () throws(CourierError) in try handshake.validate(status: 101, headers: headers) }
            XCTAssertEqual(error?.code, .invalidResponse, "\(headers)")
        }
    }

    func testTheChosenSubprotocolMustBeOneOffered() throws {
        let offering = try handshake("ws://h/", protocols: ["chat", "superchat"])
        XCTAssertEqual(
            try offering.validate(status: 101, headers: goodResponse(for: offering) + [("Sec-WebSocket-Protocol", "superchat")]),
            .init(subprotocol: "superchat"))
        for chosen in ["other", "Chat", "chat, superchat"] {
            let error = courierError { () throws(CourierError) in
                try offering.validate(status: 101, headers: self.goodResponse(for: offering) + [("Sec-WebSocket-Protocol", chosen)])
            }
            XCTAssertEqual(error?.code, .invalidResponse, chosen)
        }
        let silent = try handshake("ws://h/")
        let error = courierError { () throws(CourierError) in
            try silent.validate(status: 101, headers: self.goodResponse(for: silent) + [("Sec-WebSocket-Protocol", "chat")])
        }
        XCTAssertEqual(error?.code, .invalidResponse)
    }

    func testAnExtensionTheClientDidNotOfferIsRefused() throws {
        let handshake = try handshake("ws://h/")
        let error = courierError { () throws(CourierError) in
            try handshake.validate(
                status: 101, headers: self.goodResponse(for: handshake) + [("Sec-WebSocket-Extensions", "permessage-deflate")])
        }
        XCTAssertEqual(error?.code, .invalidResponse)
    }
}
