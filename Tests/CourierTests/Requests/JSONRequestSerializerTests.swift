import XCTest
@testable import Courier
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

final class JSONRequestSerializerTests: XCTestCase {
    func testValidParametersBecomeASortedJSONBody() throws {
        let table: [(Parameters, String)] = [
            ([:], "{}"),
            (["b": 1, "a": "x/y"], #"{"a":"x\/y","b":1}"#),
            (["flag": true, "off": false, "none": NSNull(), "pi": 3.5], #"{"flag":true,"none":null,"off":false,"pi":3.5}"#),
            (
                ["list": [1, "two", ["z": 1, "y": [] as [any Sendable]] as Parameters] as [any Sendable]],
                #"{"list":[1,"two",{"y":[],"z":1}]}"#
            ),
            (["text": "Grüße \"quoted\" \n"], #"{"text":"Grüße \"quoted\" \n"}"#),
        ]
        for (parameters, expected) in table {
            let serialized = try JSONRequestSerializer.default.serialize(RequestFixtures.request(method: "POST"), with: parameters)
            XCTAssertEqual(RequestFixtures.body(serialized), expected)
            XCTAssertEqual(serialized.value(forHTTPHeaderField: "Content-Type"), "application/json")
            XCTAssertEqual(serialized.url?.absoluteString, "http://127.0.0.1/path")
        }
    }

    func testAnExistingContentTypeIsKept() throws {
        for name in ["Content-Type", "content-type", "CONTENT-TYPE"] {
            var request = RequestFixtures.request(method: "POST")
            request.setValue("application/vnd.api+json", forHTTPHeaderField: name)
            let serialized = try JSONRequestSerializer.default.serialize(request, with: ["a": 1])
            XCTAssertEqual(serialized.value(forHTTPHeaderField: "Content-Type"), "application/vnd.api+json", name)
            XCTAssertEqual(serialized.allHTTPHeaderFields?.count, 1, name)
        }
    }

    func testWritingOptionsArePassedOn() throws {
        let serializer = JSONRequestSerializer(writingOptions: [.sortedKeys, .prettyPrinted])
        let serialized = try serializer.serialize(RequestFixtures.request(method: "POST"), with: ["b": 1, "a": 2])
        let body = try XCTUnwrap(RequestFixtures.body(serialized))
        XCTAssertTrue(body.contains("\n"), body)
        XCTAssertLessThan(try XCTUnwrap(body.range(of: "\"a\"")).lowerBound, try XCTUnwrap(body.range(of: "\"b\"")).lowerBound)
        XCTAssertEqual(JSONRequestSerializer.default.writingOptions, [.sortedKeys])
    }

    func testInvalidParametersAreErrorsNamingTheKeyNotTraps() {
        struct Custom: Sendable {}
        let table: [(Parameters, key: String)] = [
            (["when": Date()], "\"when\""),
            (["nan": Double.nan, "fine": 1], "\"nan\""),
            (["inf": Float.infinity], "\"inf\""),
            (["ok": 1, "deep": ["deeper": [Custom()] as [any Sendable]] as Parameters], "\"deep\""),
            (["url": URL(string: "http://x/")!], "\"url\""),
            (["intKeys": [1: "a"]], "\"intKeys\""),
        ]
        for (parameters, key) in table {
            RequestFixtures.assertInvalidRequest(
                try JSONRequestSerializer.default.serialize(RequestFixtures.request(method: "POST"), with: parameters),
                mentioning: [key], key)
        }
    }

    private struct Order: Encodable {
        let id: Int
        let paid: Bool
        let note: String?
    }

    func testEncodableValuesUseTheGivenEncoder() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        struct Item: Encodable { let itemCount: Int }
        let table: [(URLRequest, String)] = [
            (
                try JSONRequestSerializer.default.serialize(
                    RequestFixtures.request(method: "PUT"), encoding: Order(id: 7, paid: true, note: nil), encoder: encoder),
                #"{"id":7,"paid":true}"#
            ),
            (
                try JSONRequestSerializer.default.serialize(
                    RequestFixtures.request(method: "PUT"), encoding: Item(itemCount: 2), encoder: encoder),
                #"{"item_count":2}"#
            ),
            (try JSONRequestSerializer.default.serialize(RequestFixtures.request(method: "PUT"), encoding: [3, 1]), "[3,1]"),
        ]
        for (serialized, expected) in table {
            XCTAssertEqual(RequestFixtures.body(serialized), expected)
            XCTAssertEqual(serialized.value(forHTTPHeaderField: "Content-Type"), "application/json")
        }
    }

    func testEncodingFailureIsAnInvalidRequest() {
        struct Reading: Encodable { let value: Double }
        RequestFixtures.assertInvalidRequest(
            try JSONRequestSerializer.default.serialize(RequestFixtures.request(method: "POST"), encoding: Reading(value: .infinity)),
            mentioning: ["Reading"])
    }
    // MARK: - GET, HEAD and DELETE: the query

    func testParametersOfGetHeadAndDeleteGoIntoTheQueryWithNoBody() throws {
        // Given the methods AFJSONRequestSerializer encodes in the URI, in any case
        for method in ["GET", "HEAD", "DELETE", "get", "Delete"] {
            // When parameters are serialized
            let serialized = try JSONRequestSerializer.default.serialize(
                RequestFixtures.request("http://127.0.0.1/path?keep=1", method: method),
                with: ["q": "a b", "tags": ["x", "y"], "on": true])
            // Then they are in the query, the form serializer's way, and nothing else changed
            XCTAssertEqual(
                serialized.url?.absoluteString, "http://127.0.0.1/path?keep=1&on=1&q=a%20b&tags%5B%5D=x&tags%5B%5D=y", method)
            XCTAssertNil(serialized.httpBody, method)
            XCTAssertNil(serialized.value(forHTTPHeaderField: "Content-Type"), method)
        }
    }

    func testARequestWithoutAMethodCountsAsGet() throws {
        var request = RequestFixtures.request()
        request.httpMethod = nil
        let serialized = try JSONRequestSerializer.default.serialize(request, with: ["a": 1])
        XCTAssertEqual(serialized.url?.absoluteString, "http://127.0.0.1/path?a=1")
        XCTAssertNil(serialized.httpBody)
    }

    func testOtherMethodsStillGetAJSONBody() throws {
        for method in ["POST", "PUT", "PATCH", "OPTIONS", "PROPFIND"] {
            let serialized = try JSONRequestSerializer.default.serialize(RequestFixtures.request(method: method), with: ["a": 1])
            XCTAssertEqual(RequestFixtures.body(serialized), #"{"a":1}"#, method)
            XCTAssertEqual(serialized.url?.absoluteString, "http://127.0.0.1/path", method)
        }
    }

    func testTheQueryEncodingIsConfigurableAndItsDestinationIgnored() throws {
        let serializer = JSONRequestSerializer(
            queryEncoding: URLEncodedFormSerializer(destination: .httpBody, arrayEncoding: .noBrackets, boolEncoding: .literal))
        let serialized = try serializer.serialize(RequestFixtures.request(method: "GET"), with: ["a": [1, 2], "b": false])
        XCTAssertEqual(serialized.url?.absoluteString, "http://127.0.0.1/path?a=1&a=2&b=false")
        XCTAssertNil(serialized.httpBody)
    }

    func testQueryValuesFollowTheFormRulesSoDatesAreAccepted() throws {
        // A Date is refused in a JSON body but is a plain value in a query.
        let serialized = try JSONRequestSerializer.default.serialize(
            RequestFixtures.request(method: "GET"), with: ["since": Date(timeIntervalSince1970: 1_700_000_000)])
        XCTAssertEqual(serialized.url?.query, "since=2023-11-14T22%3A13%3A20Z")
        RequestFixtures.assertInvalidRequest(
            try JSONRequestSerializer.default.serialize(RequestFixtures.request(method: "GET"), with: ["u": URL(string: "http://x/")!]),
            mentioning: ["u"])
    }

    func testEncodableValuesOfGetGoIntoTheQueryThroughTheGivenEncoder() throws {
        struct Filter: Encodable { let pageSize: Int; let owner: String? }
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let serialized = try JSONRequestSerializer.default.serialize(
            RequestFixtures.request(method: "GET"), encoding: Filter(pageSize: 20, owner: nil), encoder: encoder)
        XCTAssertEqual(serialized.url?.absoluteString, "http://127.0.0.1/path?page_size=20")
        XCTAssertNil(serialized.httpBody)
        // A top level without keys has nothing to name the pairs by.
        RequestFixtures.assertInvalidRequest(
            try JSONRequestSerializer.default.serialize(RequestFixtures.request(method: "DELETE"), encoding: [1, 2]),
            mentioning: ["keyed"])
    }
}
