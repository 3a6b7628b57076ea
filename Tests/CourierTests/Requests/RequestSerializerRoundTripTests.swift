import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Serialized requests sent over real sockets to `/anything`, which echoes what it decoded.
final class RequestSerializerRoundTripTests: CourierTestCase {
    /// Sends `request` and returns the echo.
    private func echo(_ request: URLRequest, file: StaticString = #filePath, line: UInt = #line) -> JSONValue? {
        XCTAssertNoThrow(try RequestValidation.validate(request), file: file, line: line)
        let response = wait(file: file, line: line) { finish in
            manager.dataTask(with: request, serializer: .json, completion: finish).resume()
        }
        XCTAssertNil(response?.error, file: file, line: line)
        return response?.value
    }

    private func strings(_ value: JSONValue?) -> [String: String]? {
        value?.dictionary as? [String: String]
    }

    private let awkward: Parameters = [
        "plus": "a+b c", "amp": "x&y=z", "percent": "100%", "brackets": "[x]", "unicode": "Grüße 東京 🚀",
        "empty": "", "slash?": "/p?q#f", "quote'\"": "it's",
    ]
    private let awkwardDecoded = [
        "plus": "a+b c", "amp": "x&y=z", "percent": "100%", "brackets": "[x]", "unicode": "Grüße 東京 🚀",
        "empty": "", "slash?": "/p?q#f", "quote'\"": "it's",
    ]

    func testQueryArgumentsComeBackDecodedAsSent() throws {
        for method in ["GET", "DELETE"] {
            let request = try URLEncodedFormSerializer.default.serialize(request("/anything", method: method), with: awkward)
            let echoed = echo(request)
            XCTAssertEqual(echoed?["method"]?.string, method)
            XCTAssertEqual(strings(echoed?["args"]), awkwardDecoded, method)
            XCTAssertEqual(echoed?["bodyLength"]?.int, 0, method)
        }
    }

    func testAnExistingQueryIsKeptOnTheWire() throws {
        let request = try URLEncodedFormSerializer.default.serialize(
            request("/anything?keep=yes&also=1"), with: ["added": "x y"])
        XCTAssertEqual(strings(echo(request)?["args"]), ["keep": "yes", "also": "1", "added": "x y"])
    }

    func testFormBodyComesBackAsTheParsedForm() throws {
        for method in ["POST", "PUT", "PATCH"] {
            let request = try URLEncodedFormSerializer.default.serialize(request("/anything?q=1", method: method), with: awkward)
            let echoed = echo(request)
            XCTAssertEqual(strings(echoed?["form"]), awkwardDecoded, method)
            XCTAssertEqual(strings(echoed?["args"]), ["q": "1"], method)
            XCTAssertEqual(
                echoed?["headers"]?["Content-Type"]?.string, "application/x-www-form-urlencoded; charset=utf-8", method)
        }
    }

    func testNestedAndArrayKeysArriveAsLiteralBracketedKeys() throws {
        let parameters: Parameters = [
            "a": ["b": "x", "c": ["d": true] as Parameters] as Parameters,
            "list": ["only"] as [any Sendable],
            "many": [1, 2, 3] as [any Sendable],
        ]
        let table: [(serializer: URLEncodedFormSerializer, expected: [String: String], many: String)] = [
            (
                .default, ["a[b]": "x", "a[c][d]": "1", "list[]": "only", "many[]": "3"],
                "many%5B%5D=1&many%5B%5D=2&many%5B%5D=3"
            ),
            (
                URLEncodedFormSerializer(arrayEncoding: .indexInBrackets, boolEncoding: .literal),
                ["a[b]": "x", "a[c][d]": "true", "list[0]": "only", "many[0]": "1", "many[1]": "2", "many[2]": "3"],
                "many%5B0%5D=1&many%5B1%5D=2&many%5B2%5D=3"
            ),
            (
                URLEncodedFormSerializer(arrayEncoding: .noBrackets),
                ["a[b]": "x", "a[c][d]": "1", "list": "only", "many": "3"], "many=1&many=2&many=3"
            ),
        ]
        for row in table {
            let get = echo(try row.serializer.serialize(request("/anything"), with: parameters))
            XCTAssertEqual(strings(get?["args"]), row.expected, "\(row.serializer.arrayEncoding), query")
            XCTAssertTrue(get?["url"]?.string?.contains(row.many) ?? false, "\(row.serializer.arrayEncoding): every element sent")
            let post = echo(try row.serializer.serialize(request("/anything", method: "POST"), with: parameters))
            XCTAssertEqual(strings(post?["form"]), row.expected, "\(row.serializer.arrayEncoding), body")
            XCTAssertTrue(post?["data"]?.string?.contains(row.many) ?? false, "\(row.serializer.arrayEncoding): every element sent")
        }
    }

    func testSnakeCaseKeysArriveConvertedAtEveryLevelForParametersAndEncodableValues() throws {
        // Given Swift-cased keys, nested, and the snake-case key encoding with repeated keys
        let serializer = URLEncodedFormSerializer(arrayEncoding: .noBrackets, keyEncoding: .convertToSnakeCase)
        let parameters: Parameters = [
            "pageSize": 20, "filter": ["createdAfter": "2026"] as Parameters, "tagIds": [1, 2] as [any Sendable],
        ]
        // When sent in the query, then the server reads converted keys
        let get = echo(try serializer.serialize(request("/anything"), with: parameters))
        XCTAssertEqual(strings(get?["args"]), ["page_size": "20", "filter[created_after]": "2026", "tag_ids": "2"])
        XCTAssertTrue(get?["url"]?.string?.contains("tag_ids=1&tag_ids=2") ?? false, "\(get?["url"]?.string ?? "")")
        // And an Encodable value gets the same keys
        struct Query: Encodable { let pageSize: Int; let userID: String }
        let encoded = echo(try serializer.serialize(request("/anything"), encoding: Query(pageSize: 5, userID: "u")))
        XCTAssertEqual(strings(encoded?["args"]), ["page_size": "5", "user_id": "u"])
    }

    func testRepeatedKeysIsTheConventionThatFrameworksReadingPlainKeysSee() throws {
        let get = echo(
            try URLEncodedFormSerializer.repeatedKeys.serialize(request("/anything"), with: ["tag": ["a", "b"] as [any Sendable]]))
        XCTAssertTrue(get?["url"]?.string?.hasSuffix("?tag=a&tag=b") ?? false, "\(get?["url"]?.string ?? "")")
    }

    func testSnakeCaseSplitsWordsAtCaseChangesAndAcronymEnds() {
        let rows = [
            "pageSize": "page_size", "userID": "user_id", "myURLValue": "my_url_value", "already_snake": "already_snake",
            "X": "x", "_private": "_private", "version2Beta": "version2_beta", "HTTPStatus": "http_status", "tagIDs": "tag_i_ds",
        ]
        for (key, expected) in rows {
            XCTAssertEqual(URLEncodedFormSerializer.KeyEncoding.snakeCase(key), expected, key)
        }
        XCTAssertEqual(URLEncodedFormSerializer.KeyEncoding.custom { $0.uppercased() }.encode("a"), "A")
    }

    func testJSONBodyComesBackAsJSON() throws {
        let parameters: Parameters = [
            "text": "Grüße \"q\" \n", "int": 42, "double": 2.5, "yes": true, "no": false, "none": NSNull(),
            "list": [1, "two", ["k": "v"] as Parameters] as [any Sendable], "nested": ["deep": ["x": -1] as Parameters] as Parameters,
        ]
        let request = try JSONRequestSerializer.default.serialize(request("/anything", method: "POST"), with: parameters)
        let echoed = echo(request)
        let json = try XCTUnwrap(echoed?["json"])
        XCTAssertEqual(json["text"]?.string, "Grüße \"q\" \n")
        XCTAssertEqual(json["int"]?.int, 42)
        XCTAssertEqual((json["double"]?.value as? NSNumber)?.doubleValue, 2.5)
        XCTAssertEqual(json["yes"]?.bool, true)
        XCTAssertEqual(json["no"]?.bool, false)
        XCTAssertEqual(json["none"]?.isNull, true)
        XCTAssertEqual(json["list"]?[1]?.string, "two")
        XCTAssertEqual(json["list"]?[2]?["k"]?.string, "v")
        XCTAssertEqual(json["nested"]?["deep"]?["x"]?.int, -1)
        XCTAssertEqual(echoed?["headers"]?["Content-Type"]?.string, "application/json")
        XCTAssertEqual(echoed?["data"]?.string, RequestFixtures.body(request), "sent byte for byte")
        XCTAssertEqual(strings(echoed?["form"]), [:])
    }

    private struct Signup: Encodable {
        let email: String
        let newsletter: Bool
        let interests: [String]
    }

    func testEncodableValuesRoundTripAsFormAndJSON() throws {
        let signup = Signup(email: "zoë+test@example.com", newsletter: true, interests: ["a b", "c&d"])
        let form = echo(try URLEncodedFormSerializer.default.serialize(request("/anything", method: "POST"), encoding: signup))
        XCTAssertEqual(
            strings(form?["form"]), ["email": "zoë+test@example.com", "newsletter": "1", "interests[]": "c&d"])
        let json = echo(try JSONRequestSerializer.default.serialize(request("/anything", method: "POST"), encoding: signup))
        XCTAssertEqual(json?["json"]?["email"]?.string, "zoë+test@example.com")
        XCTAssertEqual(json?["json"]?["newsletter"]?.bool, true)
        XCTAssertEqual(json?["json"]?["interests"]?.array as? [String], ["a b", "c&d"])
    }
    // MARK: - JSON parameters of GET, HEAD and DELETE travel in the query

    func testJSONParametersOfAGetArriveAsQueryArguments() throws {
        // Given a GET serialized by the JSON serializer
        let request = try JSONRequestSerializer.default.serialize(request("/get?keep=1"), with: awkward)
        // When it is sent over a real socket
        let echoed = echo(request)
        // Then `/get` saw every parameter as a query argument, and no body
        XCTAssertEqual(strings(echoed?["args"]), awkwardDecoded.merging(["keep": "1"]) { $1 })
        XCTAssertEqual(server.requests.last?.method, "GET")
        XCTAssertEqual(server.requests.last?.bodyLength, 0)
        XCTAssertNil(server.requests.last?.header("Content-Type"))
    }

    func testJSONParametersOfHeadAndDeleteArriveAsQueryArguments() throws {
        for method in ["HEAD", "DELETE"] {
            let request = try JSONRequestSerializer.default.serialize(request("/anything", method: method), with: ["a": "1 2"])
            let response = data(request)
            XCTAssertNil(response.error, method)
            XCTAssertEqual(server.requests.last?.query, ["a": "1 2"], method)
            XCTAssertEqual(server.requests.last?.bodyLength, 0, method)
        }
    }

    func testAGetWithABodyIsRefusedBeforeAnythingIsSent() {
        // Given GET requests carrying a body, in a data task and in an upload task
        var withBody = request("/get")
        withBody.httpBody = Data(#"{"a":1}"#.utf8)
        let dataTask = data(withBody)
        let upload = wait { finish in
            manager.uploadTask(with: request("/get"), from: .data(Data("x".utf8)), completion: finish).resume()
        }
        // Then both fail with the reason, and the server saw nothing
        for (name, error) in [("data task", dataTask.error), ("upload task", upload?.error)] {
            XCTAssertEqual(error?.code, .invalidRequest, name)
            XCTAssertTrue(
                error?.message.contains("a GET request cannot carry a body on Linux") ?? false, "\(name): \(String(describing: error))")
        }
        XCTAssertTrue(server.requests.isEmpty)
    }
}
