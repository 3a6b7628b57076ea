import CourierTestSupport
import XCTest
@testable import Courier
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

final class RequestValidationTests: XCTestCase {
    private func request(_ url: String = "http://127.0.0.1/p", headers: [String: String] = [:], method: String = "GET") -> URLRequest {
        var request = RequestFixtures.request(url, method: method)
        // The setter keeps what `setValue(_:forHTTPHeaderField:)` would silently drop.
        request.allHTTPHeaderFields = headers
        return request
    }

    func testAcceptsNormalRequests() {
        let table: [URLRequest] = [
            request(),
            request("https://example.com"),
            request("HTTPS://Example.COM:8443/a/b?c=d#e"),
            request("http://[::1]:8080/"),
            request("http://user:pass@host/"),
            request("http://h/", headers: ["Accept": "*/*", "X-Empty": "", "X-Tab": "a\tb", "X-UTF8": "Grüße", "x-lower": "v"]),
            request("http://h/", headers: ["!#$%&'*+-.^_`|~09AZaz": "every tchar"]),
            request("http://h/", method: "PROPFIND"),
            URLRequest(url: URL(string: "p?q=1", relativeTo: URL(string: "http://h/base/"))!),
        ]
        for request in table {
            XCTAssertNoThrow(try RequestValidation.validate(request), "\(request) \(request.allHTTPHeaderFields ?? [:])")
        }
    }

    func testRejectsRequestsWithoutAnAbsoluteHTTPURL() {
        var noURL = request()
        noURL.url = nil
        RequestFixtures.assertInvalidRequest(try RequestValidation.validate(noURL), mentioning: ["no URL"])
        let table = [
            "ftp://h/file", "file:///etc/passwd", "mailto:a@b.c", "data:,hello", "ws://h/socket", "/relative/path", "h/p",
            "http:///no-host", "https://", "http:no-slashes",
        ]
        for url in table {
            guard let parsed = URL(string: url) else {
                XCTFail("\(url) does not parse; the row tests nothing")
                continue
            }
            RequestFixtures.assertInvalidRequest(try RequestValidation.validate(URLRequest(url: parsed)), url)
        }
    }

    func testRejectsCRLFAndNULInHeaderNamesAndValues() {
        for bad in ["\r", "\n", "\r\n", "\0"] {
            for (position, text) in [("start", bad + "x"), ("middle", "x" + bad + "y"), ("end", "x" + bad)] {
                let context = "\(bad.debugDescription) at the \(position)"
                RequestFixtures.assertInvalidRequest(
                    try RequestValidation.validate(request(headers: ["X-Name" + text: "v"])), mentioning: ["header name"],
                    "name, \(context)")
                RequestFixtures.assertInvalidRequest(
                    try RequestValidation.validate(request(headers: ["X-Value": text])), mentioning: ["X-Value", "CR, LF or NUL"],
                    "value, \(context)")
            }
        }
        // Header injection: a value smuggling a second header.
        RequestFixtures.assertInvalidRequest(
            try RequestValidation.validate(request(headers: ["X-A": "1\r\nX-Injected: yes"])), mentioning: ["X-A"])
    }

    func testOfSeveralBadHeadersTheFirstInSortedOrderIsReportedEveryTime() {
        // Given a request with three bad headers (dictionary order differs from run to run)
        let bad = request(headers: ["Zeta": "a\rb", "Alpha Beta": "x", "Mid": "c\nd", "Fine": "ok"])
        // When it is validated many times
        var messages = Set<String>()
        for _ in 0..<20 {
            do { try RequestValidation.validate(bad) } catch { messages.insert(error.message) }
        }
        // Then it is always the header that sorts first that is named
        XCTAssertEqual(messages, ["the header name \"Alpha Beta\" is not an RFC 9110 token"])
    }

    func testRejectsHeaderNamesThatAreNotTokens() {
        let table = [
            "", " ", "Bad Name", "Name:", "a:b", "(x)", "a/b", "a,b", "a;b", "a=b", "\"q\"", "{}", "[x]", "a@b", "é", "\t", "\u{7F}",
            "\u{1}",
        ]
        for name in table {
            RequestFixtures.assertInvalidRequest(try RequestValidation.validate(request(headers: [name: "v"])), name.debugDescription)
        }
    }

    func testRejectsMethodsThatAreNotTokens() {
        for method in ["GE T", "GET\r\nX-Injected: 1", "PO(ST"] {
            var request = request()
            request.httpMethod = method
            RequestFixtures.assertInvalidRequest(try RequestValidation.validate(request), mentioning: ["method"], method.debugDescription)
        }
    }

    func testRejectsGetAndHeadWithABodyOrABodyStream() {
        for method in ["GET", "HEAD", "get", "Head"] {
            var withBody = request(method: method)
            withBody.httpBody = Data("{}".utf8)
            var withStream = request(method: method)
            withStream.httpBodyStream = InputStream(data: Data())
            for (what, request) in [("body", withBody), ("stream", withStream)] {
                RequestFixtures.assertInvalidRequest(
                    try RequestValidation.validate(request),
                    mentioning: ["\(method.uppercased()) request cannot carry a body", "query", "POST"], "\(method), \(what)")
            }
        }
        var noMethod = request()
        noMethod.httpMethod = nil
        noMethod.httpBody = Data("x".utf8)
        RequestFixtures.assertInvalidRequest(try RequestValidation.validate(noMethod), mentioning: ["GET"], "no method")
    }

    func testTheGetBodyMessageSaysWhyAndWhatToDo() throws {
        var get = request()
        get.httpBody = Data("x".utf8)
        XCTAssertThrowsError(try RequestValidation.validate(get)) { error in
            XCTAssertEqual(
                (error as? CourierError)?.message,
                "a GET request cannot carry a body on Linux (FoundationNetworking refuses it); send the parameters in the query or use POST"
            )
        }
    }

    func testAcceptsAnEmptyGetBodyAndBodiesOfOtherMethods() {
        var empty = request()
        empty.httpBody = Data()
        XCTAssertNoThrow(try RequestValidation.validate(empty))
        for method in ["POST", "PUT", "PATCH", "DELETE", "OPTIONS"] {
            var request = request(method: method)
            request.httpBody = Data("x".utf8)
            XCTAssertNoThrow(try RequestValidation.validate(request), method)
        }
    }

    func testArbitraryInputNeverTrapsAndIsJudgedByTheRules() {
        var generator = SplitMix64(seed: 9110)
        let alphabet: [UInt8] = Array(0...127) + [0xC3, 0xA9]
        let tchars = Set("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)
        for _ in 0..<2_000 {
            let name = generator.text(from: alphabet, maxLength: 6)
            let value = generator.text(from: alphabet, maxLength: 8)
            let expectedValid =
                !name.isEmpty && name.utf8.allSatisfy(tchars.contains)
                && !value.utf8.contains(where: { $0 == 0 || $0 == 10 || $0 == 13 })
            do {
                try RequestValidation.validate(request(headers: [name: value]))
                XCTAssertTrue(expectedValid, "accepted \(name.debugDescription): \(value.debugDescription)")
            } catch {
                // `validate` throws CourierError only, so `error` is one: no cast.
                XCTAssertFalse(expectedValid, "rejected \(name.debugDescription): \(value.debugDescription): \(error)")
                XCTAssertEqual(error.code, .invalidRequest)
            }
        }
    }
}

extension SplitMix64 {
    /// Up to `maxLength` bytes drawn from `alphabet`, as text (reproducible fuzz inputs).
    mutating func text(from alphabet: [UInt8], maxLength: Int) -> String {
        let length = Int(next() % UInt64(maxLength + 1))
        return String(decoding: (0..<length).map { _ in alphabet[Int(next() % UInt64(alphabet.count))] }, as: UTF8.self)
    }
}
