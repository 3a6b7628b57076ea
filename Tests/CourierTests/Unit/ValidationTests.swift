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

    func testMediaTypeMatchingIgnoresParametersAndCase() {
        XCTAssertTrue(Validation.mediaType("Text/HTML; charset=UTF-8", matches: "text/html"))
        XCTAssertTrue(Validation.mediaType("text/html", matches: "TEXT/*"))
        XCTAssertFalse(Validation.mediaType("texthtml", matches: "*/*"))
    }
}
