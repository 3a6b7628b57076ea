import CourierTestServer
import Foundation
import XCTest

/// `/status`, `/redirect`, `/redirect-to`.
final class StatusAndRedirectTests: ServerTestCase {
    func testStatusAnswersTheCodeForAnyMethodWithOptionalBody() throws {
        let teapot = try fetch("DELETE", "/status/418?body=short+and+stout&retry_after=7")
        XCTAssertEqual(teapot.status, 418)
        XCTAssertEqual(teapot.text, "short and stout")
        XCTAssertEqual(teapot.header("Retry-After"), "7")
        let plain = try fetch("GET", "/status/500")
        XCTAssertEqual(plain.status, 500)
        XCTAssertEqual(plain.header("Content-Length"), "0")
        XCTAssertTrue(plain.body.isEmpty)
    }

    func testRetryAfterWithALineBreakIsRefusedAndInjectsNoHeader() throws {
        let response = try fetch("GET", "/status/200?retry_after=%0d%0aX-Injected:%20yes")
        XCTAssertEqual(response.status, 400)
        XCTAssertNil(response.header("X-Injected"))
        XCTAssertNil(response.header("Retry-After"))
    }

    func testStatus401AddsBasicChallenge() throws {
        let response = try fetch("GET", "/status/401")
        XCTAssertEqual(response.status, 401)
        XCTAssertEqual(response.header("WWW-Authenticate"), "Basic realm=\"Fake Realm\"")
    }

    func testStatusRedirectCodesPointToGet() throws {
        for code in [301, 302, 303, 307, 308] {
            let response = try fetch("GET", "/status/\(code)")
            XCTAssertEqual(response.status, code)
            XCTAssertEqual(response.header("Location"), "/get", "code \(code)")
        }
        XCTAssertNil(try fetch("GET", "/status/300").header("Location"))
    }

    func testStatus204And304HaveNoBodyAndKeepTheConnectionUsable() throws {
        let client = try connect()
        for code in [204, 304] {
            let response = try client.request("GET", "/status/\(code)?body=ignored")
            XCTAssertEqual(response.status, code)
            XCTAssertNil(response.header("Content-Length"))
        }
        // Had a body been sent, it would show up here instead of the next status line.
        XCTAssertEqual(try client.request("GET", "/status/202").status, 202)
        XCTAssertEqual(server.connectionCount, 1)
    }

    func testStatusRejectsInvalidCodes() throws {
        for code in ["99", "600", "abc", "-1", "99999999999999999999999"] {
            XCTAssertEqual(try fetch("GET", "/status/\(code)").status, 400, code)
        }
    }

    func testRedirectChainCountsDownToGet() throws {
        let client = try connect()
        var target = "/redirect/3"
        var hops: [String] = []
        while true {
            let response = try client.request("GET", target)
            guard response.status == 302, let location = response.header("Location") else {
                XCTAssertEqual(response.status, 200)
                break
            }
            hops.append(location)
            target = location
        }
        XCTAssertEqual(hops, ["/redirect/2", "/redirect/1", "/get"])
    }

    func testAbsoluteRedirectsUseTheRequestAuthority() throws {
        let response = try fetch("GET", "/redirect/2?absolute=1")
        XCTAssertEqual(response.header("Location"), "http://127.0.0.1:\(server.port)/redirect/1?absolute=1")
        let last = try fetch("GET", "/redirect/1?absolute=1", headers: [])
        XCTAssertEqual(last.header("Location"), "http://127.0.0.1:\(server.port)/get")
    }

    func testRedirectToUsesTheURLVerbatimAndTheGivenStatus() throws {
        let response = try fetch("GET", "/redirect-to?url=file%3A%2F%2F%2Fetc%2Fpasswd&status_code=307")
        XCTAssertEqual(response.status, 307)
        XCTAssertEqual(response.header("Location"), "file:///etc/passwd")
        let other = try fetch("GET", "/redirect-to?url=http%3A%2F%2Flocalhost%3A1%2Fx")
        XCTAssertEqual(other.status, 302)
        XCTAssertEqual(other.header("Location"), "http://localhost:1/x")
        XCTAssertEqual(try fetch("GET", "/redirect-to").status, 400)
        XCTAssertEqual(try fetch("GET", "/redirect-to?url=/get&status_code=200").status, 400)
    }
}
