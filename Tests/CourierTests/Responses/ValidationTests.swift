import XCTest
@testable import Courier
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

func makeResponse(_ status: Int, headers: [String: String] = [:], url: String = "http://127.0.0.1/x") -> HTTPURLResponse {
    HTTPURLResponse(url: URL(string: url)!, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)!
}

final class ValidationTests: XCTestCase {
    func testDefaultAcceptsOnly2xx() {
        for status in [200, 201, 204, 299] {
            XCTAssertNoThrow(try Validation.default.validate(request: nil, response: makeResponse(status), data: nil))
        }
        for status in [199, 300, 304, 401, 404, 500, 503] {
            XCTAssertThrowsError(try Validation.default.validate(request: nil, response: makeResponse(status), data: nil)) {
                let error = $0 as! CourierError
                XCTAssertEqual(error.code, .unacceptableStatusCode)
                XCTAssertEqual(error.statusCode, status)
                XCTAssertTrue(error.description.contains("HTTP \(status)"), error.description)
            }
        }
    }

    func testStatusErrorCarriesTheBody() {
        let body = Data("not here".utf8)
        XCTAssertThrowsError(try Validation.default.validate(request: nil, response: makeResponse(404), data: body)) {
            XCTAssertEqual(($0 as! CourierError).body, body)
        }
    }

    func testNoneAcceptsAnyStatus() {
        XCTAssertNoThrow(try Validation.none.validate(request: nil, response: makeResponse(500), data: nil))
    }

    func testContentTypeWildcards() {
        let json = makeResponse(200, headers: ["Content-Type": "application/json; charset=utf-8"])
        let accepted: [[String]] = [["application/json"], ["application/*"], ["*/*"], ["text/plain", "application/json"]]
        for types in accepted {
            XCTAssertNoThrow(
                try Validation(contentTypes: types).validate(request: nil, response: json, data: Data("{}".utf8)), "\(types)")
        }
        for types in [["text/*"], ["application/xml"], ["text/json"]] {
            XCTAssertThrowsError(
                try Validation(contentTypes: types).validate(request: nil, response: json, data: Data("{}".utf8))
            ) { XCTAssertEqual(($0 as! CourierError).code, .unacceptableContentType, "\(types)") }
        }
    }

    func testMissingContentTypeFailsOnlyWithABody() {
        let validation = Validation(contentTypes: ["application/json"])
        XCTAssertNoThrow(try validation.validate(request: nil, response: makeResponse(204), data: Data()))
        XCTAssertThrowsError(try validation.validate(request: nil, response: makeResponse(200), data: Data("x".utf8)))
    }

    /// What "has no body" means for content-type validation, row by row: (method, status, body
    /// read into memory or nil when not read, has no body).
    func testAResponseWithNoBodyIsOneReadEmptyOrOneThatCannotHaveABody() {
        let rows: [(String, Int, Data?, Bool)] = [
            ("GET", 200, Data(), true),
            ("GET", 200, Data("x".utf8), false),
            ("GET", 200, nil, false),  // a download on disk or a stream's head: not known to be empty
            ("DELETE", 204, nil, true),
            ("PUT", 205, nil, true),
            ("GET", 304, nil, true),
            ("GET", 101, nil, true),
            ("HEAD", 200, nil, true),
            ("head", 200, nil, true),
            ("HEAD", 200, Data(), true),
            ("POST", 201, Data("{}".utf8), false),
        ]
        for (method, status, data, expected) in rows {
            var request = URLRequest(url: URL(string: "http://127.0.0.1/x")!)
            request.httpMethod = method
            XCTAssertEqual(
                Validation.hasNoBody(request: request, response: makeResponse(status), data: data), expected,
                "\(method) \(status) \(data.map { "\($0.count) bytes" } ?? "not read")")
        }
    }

    func testContentTypeIsCheckedOnlyWhenThereIsABody() {
        let validation = Validation(contentTypes: ["application/json"])
        let html = ["Content-Type": "text/html; charset=utf-8"]
        var delete = URLRequest(url: URL(string: "http://127.0.0.1/x")!)
        delete.httpMethod = "DELETE"
        // A 204 with a type it does not need, an empty 200, a HEAD answer: accepted.
        XCTAssertNoThrow(try validation.validate(request: delete, response: makeResponse(204, headers: html), data: Data()))
        XCTAssertNoThrow(try validation.validate(request: delete, response: makeResponse(204, headers: html), data: nil))
        XCTAssertNoThrow(try validation.validate(request: nil, response: makeResponse(200, headers: html), data: Data()))
        // A body of the wrong type is still refused.
        XCTAssertThrowsError(
            try validation.validate(request: nil, response: makeResponse(200, headers: html), data: Data("<p>".utf8)))
    }

    func testMediaTypeMatchingIgnoresParametersAndCase() {
        XCTAssertTrue(Validation.mediaType("Text/HTML; charset=UTF-8", matches: "text/html"))
        XCTAssertTrue(Validation.mediaType("text/html", matches: "TEXT/*"))
        XCTAssertFalse(Validation.mediaType("texthtml", matches: "*/*"))
    }
}
