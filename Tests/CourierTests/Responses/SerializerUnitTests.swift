import XCTest
@testable import Courier
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

final class SerializerUnitTests: XCTestCase {
    private let get = URLRequest(url: URL(string: "http://127.0.0.1/x")!)
    private var head: URLRequest {
        var request = get
        request.httpMethod = "HEAD"
        return request
    }

    // MARK: Data

    func testDataSerializerPassesBodyThrough() throws {
        let body = Data([0, 1, 2, 255])
        XCTAssertEqual(try DataResponseSerializer().serialize(request: get, response: makeResponse(200), data: body), body)
    }

    func testEmptyBodyIsValidOnlyFor204And205AndHead() throws {
        let serializer = DataResponseSerializer()
        XCTAssertEqual(try serializer.serialize(request: get, response: makeResponse(204), data: Data()), Data())
        XCTAssertEqual(try serializer.serialize(request: get, response: makeResponse(205), data: Data()), Data())
        XCTAssertEqual(try serializer.serialize(request: head, response: makeResponse(200), data: Data()), Data())
        XCTAssertThrowsError(try serializer.serialize(request: get, response: makeResponse(200), data: Data())) {
            XCTAssertEqual(($0 as! CourierError).code, .emptyResponse)
        }
    }

    // MARK: String

    func testStringUsesCharsetFromContentType() throws {
        let latin1 = Data([0x63, 0x61, 0x66, 0xE9])  // "café" in ISO-8859-1
        let response = makeResponse(200, headers: ["Content-Type": "text/plain; charset=ISO-8859-1"])
        XCTAssertEqual(try StringResponseSerializer().serialize(request: get, response: response, data: latin1), "café")
    }

    func testStringFallsBackToUTF8WithoutCharset() throws {
        let response = makeResponse(200, headers: ["Content-Type": "text/plain"])
        XCTAssertEqual(
            try StringResponseSerializer().serialize(request: get, response: response, data: Data("naïve ✓".utf8)),
            "naïve ✓")
    }

    func testStringFallbackEncodingIsConfigurable() throws {
        let serializer = StringResponseSerializer(fallbackEncoding: .isoLatin1)
        XCTAssertEqual(try serializer.serialize(request: get, response: makeResponse(200), data: Data([0xE9])), "é")
    }

    func testUndecodableBytesAreAnErrorNotReplacementCharacters() {
        let response = makeResponse(200, headers: ["Content-Type": "text/plain; charset=utf-8"])
        XCTAssertThrowsError(
            try StringResponseSerializer().serialize(request: get, response: response, data: Data([0xFF, 0xFE, 0xC3]))
        ) {
            let error = $0 as! CourierError
            XCTAssertEqual(error.code, .decodingFailed)
            XCTAssertEqual(error.body, Data([0xFF, 0xFE, 0xC3]))
        }
    }

    func testCharsetTable() {
        XCTAssertEqual(StringResponseSerializer.encoding(forCharset: "UTF-8"), .utf8)
        XCTAssertEqual(StringResponseSerializer.encoding(forCharset: "\"utf-8\""), .utf8)
        XCTAssertEqual(StringResponseSerializer.encoding(forCharset: "latin1"), .isoLatin1)
        XCTAssertEqual(StringResponseSerializer.encoding(forCharset: "Windows-1252"), .windowsCP1252)
        XCTAssertEqual(StringResponseSerializer.encoding(forCharset: "utf-16le"), .utf16LittleEndian)
        XCTAssertNil(StringResponseSerializer.encoding(forCharset: "klingon-8"))
    }

    // MARK: JSON

    func testJSONParsesDocument() throws {
        let json = try JSONResponseSerializer().serialize(
            request: get, response: makeResponse(200), data: Data(#"{"a":[1,{"b":"c"}],"n":null}"#.utf8))
        XCTAssertEqual(json["a"]?[0]?.int, 1)
        XCTAssertEqual(json["a"]?[1]?["b"]?.string, "c")
        XCTAssertEqual(json["n"]?.isNull, true)
    }

    func testJSONRemovesNullValuesAtEveryDepth() throws {
        let data = Data(#"{"keep":1,"drop":null,"nested":{"x":null,"y":[{"z":null,"w":2},null]}}"#.utf8)
        let json = try JSONResponseSerializer(removesKeysWithNullValues: true)
            .serialize(request: get, response: makeResponse(200), data: data)
        let top = try XCTUnwrap(json.dictionary)
        XCTAssertEqual(Set(top.keys), ["keep", "nested"])
        XCTAssertEqual(json["nested"]?.dictionary?.keys.sorted(), ["y"])
        XCTAssertEqual(json["nested"]?["y"]?[0]?.dictionary?.keys.sorted(), ["w"])
        XCTAssertEqual(json["nested"]?["y"]?.array?.count, 2, "nulls inside arrays are elements, not members: kept")
    }

    func testInvalidJSONIsDecodingFailedWithBody() {
        let body = Data("{oops".utf8)
        XCTAssertThrowsError(try JSONResponseSerializer().serialize(request: get, response: makeResponse(200), data: body)) {
            let error = $0 as! CourierError
            XCTAssertEqual(error.code, .decodingFailed)
            XCTAssertEqual(error.body, body)
            XCTAssertNotNil(error.underlyingError)
        }
    }

    func testJSONEmpty204IsNull() throws {
        XCTAssertTrue(try JSONResponseSerializer().serialize(request: get, response: makeResponse(204), data: Data()).isNull)
    }

    // MARK: Decodable

    private struct Point: Decodable, Equatable { let x: Int; let y: Int }

    func testDecodableDecodes() throws {
        let point = try DecodableResponseSerializer(Point.self)
            .serialize(request: get, response: makeResponse(200), data: Data(#"{"x":1,"y":2}"#.utf8))
        XCTAssertEqual(point, Point(x: 1, y: 2))
    }

    func testDecodableTypeMismatchIsDecodingFailed() {
        XCTAssertThrowsError(
            try DecodableResponseSerializer(Point.self)
                .serialize(request: get, response: makeResponse(200), data: Data(#"{"x":"one"}"#.utf8))
        ) {
            let error = $0 as! CourierError
            XCTAssertEqual(error.code, .decodingFailed)
            XCTAssertTrue(error.underlyingError is DecodingError)
        }
    }

    func testDecodableEmpty204NeedsAnEmptyValue() throws {
        XCTAssertEqual(
            try DecodableResponseSerializer(Empty.self).serialize(request: get, response: makeResponse(204), data: Data()),
            Empty())
        XCTAssertThrowsError(
            try DecodableResponseSerializer(Point.self).serialize(request: get, response: makeResponse(204), data: Data())
        ) { XCTAssertEqual(($0 as! CourierError).code, .emptyResponse) }
    }
}
