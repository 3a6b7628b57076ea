import XCTest
@testable import Courier
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What every request serializer shares, and `HTTPMethod`.
final class RequestSerializerTests: XCTestCase {
    private let serializers: [(name: String, serializer: any RequestSerializer)] = [
        ("form, default", URLEncodedFormSerializer.default),
        ("form, query", URLEncodedFormSerializer(destination: .queryString)),
        ("form, body", URLEncodedFormSerializer(destination: .httpBody)),
        ("JSON", JSONRequestSerializer.default),
    ]

    func testNilParametersLeaveTheRequestUnchanged() throws {
        var request = RequestFixtures.request("http://127.0.0.1/p?x=1", method: "POST")
        request.httpBody = Data("kept".utf8)
        request.setValue("text/plain", forHTTPHeaderField: "Content-Type")
        var bare = RequestFixtures.request("http://127.0.0.1/p", method: "PATCH")
        bare.url = nil
        for original in [request, RequestFixtures.request(method: "GET"), bare] {
            for (name, serializer) in serializers {
                XCTAssertEqual(
                    RequestFixtures.Snapshot(try serializer.serialize(original, with: nil)), RequestFixtures.Snapshot(original), name)
            }
        }
    }

    func testParametersChangeTheRequest() throws {
        let original = RequestFixtures.Snapshot(RequestFixtures.request(method: "POST"))
        let table: [(name: String, serializer: any RequestSerializer, expected: RequestFixtures.Snapshot)] = [
            (
                "form, default", URLEncodedFormSerializer.default,
                .init(
                    url: "http://127.0.0.1/path", method: "POST",
                    headers: ["Content-Type": "application/x-www-form-urlencoded; charset=utf-8"], body: Data("a=1".utf8))
            ),
            (
                "form, query", URLEncodedFormSerializer(destination: .queryString),
                .init(
                    url: "http://127.0.0.1/path?a=1", method: "POST", headers: [:], body: nil)
            ),
            (
                "JSON", JSONRequestSerializer.default,
                .init(
                    url: "http://127.0.0.1/path", method: "POST", headers: ["Content-Type": "application/json"],
                    body: Data(#"{"a":1}"#.utf8))
            ),
        ]
        for row in table {
            let serialized = RequestFixtures.Snapshot(try row.serializer.serialize(RequestFixtures.request(method: "POST"), with: ["a": 1]))
            XCTAssertEqual(serialized, row.expected, row.name)
            XCTAssertNotEqual(serialized, original, row.name)
        }
    }

    func testHTTPMethodRawValues() {
        let table: [(HTTPMethod, String)] = [
            (.get, "GET"), (.head, "HEAD"), (.post, "POST"), (.put, "PUT"), (.patch, "PATCH"), (.delete, "DELETE"),
            (.options, "OPTIONS"), ("PROPFIND", "PROPFIND"), (HTTPMethod(rawValue: "get"), "get"),
        ]
        for (method, raw) in table {
            XCTAssertEqual(method.rawValue, raw)
            XCTAssertEqual(method.description, raw)
        }
        XCTAssertEqual("POST" as HTTPMethod, .post)
        XCTAssertNotEqual(HTTPMethod(rawValue: "get"), .get, "methods are case-sensitive")
        XCTAssertEqual(Set<HTTPMethod>([.get, "GET", .post]).count, 2)
    }
}
