import CourierTestServer
import Foundation
import XCTest

/// The JSON and echo routes.
final class RoutesTests: ServerTestCase {
    func testServerBindsAnEphemeralPortAndBuildsURLs() throws {
        XCTAssertNotEqual(server.port, 0)
        XCTAssertEqual(server.host, "127.0.0.1")
        XCTAssertEqual(server.baseURL.absoluteString, "http://127.0.0.1:\(server.port)")
        XCTAssertEqual(server.url("/get?x=1").absoluteString, "http://127.0.0.1:\(server.port)/get?x=1")
        XCTAssertEqual(server.url("/get", host: "localhost").absoluteString, "http://localhost:\(server.port)/get")
        XCTAssertEqual(server.url("anything/a b").absoluteString, "http://127.0.0.1:\(server.port)/anything/a%20b")
    }

    func testGetReturnsArgsHeadersURLAndMethod() throws {
        let response = try fetch("GET", "/get?a=1&b=x+y&a=2", headers: [("X-Test", "yes")])
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.header("Content-Type"), "application/json")
        XCTAssertEqual(response.header("Server"), "CourierTestServer")
        XCTAssertNotNil(response.header("Date"))
        XCTAssertEqual(response.header("Content-Length"), String(response.body.count))
        let json = try response.json()
        XCTAssertEqual(json["args"] as? [String: String], ["a": "2", "b": "x y"])
        XCTAssertEqual((json["headers"] as? [String: String])?["X-Test"], "yes")
        XCTAssertEqual(json["url"] as? String, "http://127.0.0.1:\(server.port)/get?a=1&b=x+y&a=2")
        XCTAssertEqual(json["method"] as? String, "GET")
    }

    func testGetRejectsOtherMethodsWith405() throws {
        let response = try fetch("POST", "/get", body: Data("x".utf8))
        XCTAssertEqual(response.status, 405)
        XCTAssertEqual(response.header("Allow"), "GET, HEAD")
    }

    func testAnythingEchoesMethodBodyHeadersAndForm() throws {
        let body = Data("name=Ann+Lee&city=K%C3%B6ln".utf8)
        let response = try fetch(
            "PATCH", "/anything/deep/path?q=1",
            headers: [
                ("Content-Type", "application/x-www-form-urlencoded"), ("X-Custom", "v"),
            ], body: body)
        XCTAssertEqual(response.status, 200)
        let json = try response.json()
        XCTAssertEqual(json["method"] as? String, "PATCH")
        XCTAssertEqual(json["url"] as? String, "http://127.0.0.1:\(server.port)/anything/deep/path?q=1")
        XCTAssertEqual(json["args"] as? [String: String], ["q": "1"])
        XCTAssertEqual((json["headers"] as? [String: String])?["X-Custom"], "v")
        XCTAssertEqual(json["data"] as? String, "name=Ann+Lee&city=K%C3%B6ln")
        XCTAssertEqual(json["bodyLength"] as? Int, body.count)
        XCTAssertEqual(json["bodyBase64"] as? String, body.base64EncodedString())
        XCTAssertEqual(json["form"] as? [String: String], ["name": "Ann Lee", "city": "Köln"])
        XCTAssertTrue(json["json"] is NSNull)
    }

    func testAnythingParsesAJSONBody() throws {
        let response = try fetch(
            "POST", "/anything", headers: [("Content-Type", "application/json")],
            body: Data(#"{"b":[1,2.5,true,null],"a":"x"}"#.utf8))
        let json = try XCTUnwrap(try response.json()["json"] as? [String: Any])
        XCTAssertEqual(json["a"] as? String, "x")
        let array = try XCTUnwrap(json["b"] as? [Any])
        XCTAssertEqual(array.count, 4)
        XCTAssertEqual(array[0] as? Int, 1)
        XCTAssertEqual(array[1] as? Double, 2.5)
        XCTAssertTrue(array[3] is NSNull)
        XCTAssertEqual(try response.json()["form"] as? [String: String], [:])
    }

    func testHeadersRouteEchoesHeaderNamesAsSent() throws {
        let response = try fetch("GET", "/headers", headers: [("x-lower", "1"), ("X-Twice", "a"), ("X-Twice", "b")])
        let headers = try XCTUnwrap(try response.json()["headers"] as? [String: String])
        XCTAssertEqual(headers["x-lower"], "1")
        XCTAssertEqual(headers["X-Twice"], "a, b")
        XCTAssertEqual(headers["Host"], "127.0.0.1:\(server.port)")
    }

    func testResponseHeadersSetsHeadersAndReplacesContentType() throws {
        let response = try fetch("GET", "/response-headers?X-One=1&Content-Type=text/x-test&X-Multi=a&X-Multi=b")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.header("X-One"), "1")
        XCTAssertEqual(response.headerValues("Content-Type"), ["text/x-test"])
        XCTAssertEqual(response.headerValues("X-Multi"), ["a", "b"])
        XCTAssertEqual(try response.json() as? [String: String], ["X-One": "1", "Content-Type": "text/x-test", "X-Multi": "b"])
    }

    func testJSONRouteServesTheDocumentedDocument() throws {
        let response = try fetch("GET", "/json")
        XCTAssertEqual(response.header("Content-Type"), "application/json")
        XCTAssertEqual(
            response.text,
            #"{"slideshow":{"title":"Sample","author":null,"slides":[{"title":"One","items":[1,2]},{"title":"Two","draft":true}]}}"#)
    }

    func testHTMLRouteServesUTF8HTML() throws {
        let response = try fetch("GET", "/html")
        XCTAssertEqual(response.header("Content-Type"), "text/html; charset=utf-8")
        XCTAssertTrue(response.text.hasPrefix("<!DOCTYPE html>"))
        XCTAssertTrue(response.text.contains("Grüße"))
    }

    func testBase64DecodesBase64URLWithContentType() throws {
        // "café" in Latin-1 is 63 61 66 E9.
        let latin1 = Data([0x63, 0x61, 0x66, 0xE9])
        let value = latin1.base64EncodedString().replacingOccurrences(of: "=", with: "")
        let response = try fetch("GET", "/base64/\(value)?content_type=text/plain;%20charset=iso-8859-1")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.body, latin1)
        XCTAssertEqual(response.header("Content-Type"), "text/plain; charset=iso-8859-1")
        let urlSafe = try fetch("GET", "/base64/-_8")
        XCTAssertEqual(urlSafe.body, Data([0xFB, 0xFF]))
        XCTAssertEqual(urlSafe.header("Content-Type"), "application/octet-stream")
        XCTAssertEqual(try fetch("GET", "/base64/%21%21%21").status, 400)
    }

    func testCookiesEchoesAndSetsCookies() throws {
        let echoed = try fetch("GET", "/cookies", headers: [("Cookie", "a=1; b=two")])
        XCTAssertEqual(try echoed.json()["cookies"] as? [String: String], ["a": "1", "b": "two"])
        let set = try fetch("GET", "/cookies/set?k=v&n=2", headers: [("Cookie", "a=1")])
        XCTAssertEqual(set.status, 200)
        XCTAssertEqual(set.headerValues("Set-Cookie"), ["k=v; Path=/", "n=2; Path=/"])
        XCTAssertEqual(try set.json()["cookies"] as? [String: String], ["a": "1", "k": "v", "n": "2"])
        let deleted = try fetch("GET", "/cookies/delete?a", headers: [("Cookie", "a=1; b=2")])
        XCTAssertEqual(deleted.header("Set-Cookie")?.hasPrefix("a=; Expires=Thu, 01 Jan 1970"), true)
        XCTAssertEqual(try deleted.json()["cookies"] as? [String: String], ["b": "2"])
    }

    func testBasicAuthAcceptsMatchingCredentials() throws {
        let credentials = Data("ann:s3cret".utf8).base64EncodedString()
        let response = try fetch("GET", "/basic-auth/ann/s3cret", headers: [("Authorization", "Basic \(credentials)")])
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(try response.json()["authenticated"] as? Bool, true)
        XCTAssertEqual(try response.json()["user"] as? String, "ann")
    }

    func testBasicAuthRejectsWrongOrMissingCredentialsWithChallenge() throws {
        let wrong = Data("ann:nope".utf8).base64EncodedString()
        for headers in [[("Authorization", "Basic \(wrong)")], []] {
            let response = try fetch("GET", "/basic-auth/ann/s3cret", headers: headers)
            XCTAssertEqual(response.status, 401)
            XCTAssertEqual(response.header("WWW-Authenticate"), "Basic realm=\"Fake Realm\"")
            XCTAssertEqual(response.text, #"{"authenticated":false}"#)
        }
    }

    func testBearerAcceptsOnlyItsTokenAndChallengesAnyOther() throws {
        let accepted = try fetch("GET", "/bearer/t1", headers: [("Authorization", "Bearer t1")])
        XCTAssertEqual(accepted.status, 200)
        XCTAssertEqual(try accepted.json()["authenticated"] as? Bool, true)
        for headers in [[("Authorization", "Bearer t0")], [("Authorization", "Basic dDE=")], []] {
            let refused = try fetch("GET", "/bearer/t1", headers: headers)
            XCTAssertEqual(refused.status, 401)
            XCTAssertEqual(refused.header("WWW-Authenticate"), "Bearer realm=\"Fake Realm\"")
        }
    }

    func testBearerWaitsDelayMillisecondsBeforeAnswering() throws {
        let started = Date()
        let response = try fetch("GET", "/bearer/t1?delay_ms=200")
        XCTAssertEqual(response.status, 401)
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 0.19)
    }

    func testUnknownPathIs404Text() throws {
        let response = try fetch("GET", "/no/such/route")
        XCTAssertEqual(response.status, 404)
        XCTAssertEqual(response.header("Content-Type"), "text/plain; charset=utf-8")
    }
}
