import CourierTestSupport
import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

final class HTTPClientTests: CourierTestCase {
    private var client: HTTPClient!

    override func setUpWithError() throws {
        try super.setUpWithError()
        client = HTTPClient(baseURL: server.url("/anything/"), manager: manager, headers: ["X-Client": "tests"])
    }

    /// RFC 3986 §5.4.1, and the examples in HTTPClient's documentation.
    func testPathsResolveByRFC3986() throws {
        let rfc = HTTPClient(baseURL: URL(string: "http://a/b/c/d;p?q"), manager: manager)
        let table = [
            "g": "http://a/b/c/g", "./g": "http://a/b/c/g", "g/": "http://a/b/c/g/", "/g": "http://a/g",
            "//g": "http://g", "?y": "http://a/b/c/d;p?y", "g?y": "http://a/b/c/g?y", "#s": "http://a/b/c/d;p?q#s",
            ";x": "http://a/b/c/;x", "..": "http://a/b/", "../g": "http://a/b/g", "../..": "http://a/",
            "../../g": "http://a/g",
        ]
        for (path, expected) in table {
            XCTAssertEqual(try rfc.url(for: path).absoluteString, expected, path)
        }
        let api = HTTPClient(baseURL: URL(string: "https://api.example.com/v2/"), manager: manager)
        XCTAssertEqual(try api.url(for: "users").absoluteString, "https://api.example.com/v2/users")
        XCTAssertEqual(try api.url(for: "/health").absoluteString, "https://api.example.com/health")
        XCTAssertEqual(try api.url(for: "../v1/users").absoluteString, "https://api.example.com/v1/users")
        XCTAssertEqual(try api.url(for: "https://other.example/x").absoluteString, "https://other.example/x")
        let noSlash = HTTPClient(baseURL: URL(string: "https://api.example.com/v2"), manager: manager)
        XCTAssertEqual(try noSlash.url(for: "users").absoluteString, "https://api.example.com/users")
        XCTAssertThrowsError(try HTTPClient(baseURL: nil, manager: manager).url(for: "relative"))
    }

    func testEachVerbSendsItsMethodWithParametersInTheRightPlace() {
        for (verb, method, inQuery) in [
            ("get", "GET", true), ("delete", "DELETE", true), ("post", "POST", false),
            ("put", "PUT", false), ("patch", "PATCH", false),
        ] {
            let response: DataResponse<JSONValue>? = wait { finish in
                let parameters: Parameters = ["a": 1, "b": ["x": true]]
                switch verb {
                case "get": client.get("echo", parameters: parameters, serializer: .json, completion: finish)
                case "delete": client.delete("echo", parameters: parameters, serializer: .json, completion: finish)
                case "post": client.post("echo", parameters: parameters, serializer: .json, completion: finish)
                case "put": client.put("echo", parameters: parameters, serializer: .json, completion: finish)
                default: client.patch("echo", parameters: parameters, serializer: .json, completion: finish)
                }
            }
            let json = response?.value
            XCTAssertEqual(json?["method"]?.string, method)
            XCTAssertEqual(json?[inQuery ? "args" : "form"]?["a"]?.string, "1", verb)
            XCTAssertEqual(json?[inQuery ? "args" : "form"]?["b[x]"]?.string, "1", verb)
            XCTAssertEqual(server.requests.last?.path, "/anything/echo")
            XCTAssertEqual(server.requests.last?.header("X-Client"), "tests")
        }
        let head: DataResponse<Data>? = wait { finish in client.head("echo", completion: finish) }
        XCTAssertEqual(head?.response?.statusCode, 200)
        XCTAssertEqual(server.requests.last?.method, "HEAD")
    }

    func testJSONParameterEncodingAndAuthorizationHelpers() {
        let json = HTTPClient(
            baseURL: server.url("/anything/"), manager: manager,
            headers: ["Authorization": HTTPAuthorization.bearer("t0k")], parameterEncoding: JSONRequestSerializer.default)
        let response: DataResponse<JSONValue>? = wait { finish in
            json.post("items", parameters: ["name": "pen", "tags": ["a", "b"]], serializer: .json, completion: finish)
        }
        XCTAssertEqual(response?.value?["json"]?["name"]?.string, "pen")
        XCTAssertEqual(server.requests.last?.header("Authorization"), "Bearer t0k")
        XCTAssertEqual(server.requests.last?.header("Content-Type"), "application/json")
        XCTAssertEqual(HTTPAuthorization.basic(user: "a", password: "b"), "Basic YTpi")
    }

    func testTaskCanBeConfiguredBeforeItStarts() {
        let auth = HTTPClient(baseURL: server.url("/"), manager: manager)
        let response: DataResponse<JSONValue>? = wait { finish in
            auth.task(.get, "basic-auth/ann/pw", serializer: .json, startImmediately: false, completion: finish)
                .authenticate(with: Credential(user: "ann", password: "pw"))
                .resume()
        }
        XCTAssertEqual(response?.value?["authenticated"]?.bool, true)
    }

    func testCallHeadersOverrideClientHeaders() {
        _ = wait { finish in client.get("x", headers: ["X-Client": "call"], serializer: .data, completion: finish) }
        XCTAssertEqual(server.requests.last?.header("X-Client"), "call")
    }

    func testHeaderWithCRLFIsRefusedBeforeAnythingIsSent() {
        let response: DataResponse<Data>? = wait { finish in
            client.get("x", headers: ["X-Evil": "a\r\nInjected: yes"], serializer: .data, completion: finish)
        }
        XCTAssertEqual(response?.error?.code, .invalidRequest)
        Thread.sleep(forTimeInterval: 0.1)
        XCTAssertTrue(server.requests.isEmpty)
    }

    func testManagerRefusesAnInvalidHeaderEvenWithoutTheClient() {
        var request = request("/get")
        request.allHTTPHeaderFields = ["X-Evil": "a\nb"]
        XCTAssertEqual(data(request).error?.code, .invalidRequest)
        XCTAssertTrue(server.requests.isEmpty)
    }

    func testUnresolvablePathFailsAtOnce() {
        let noBase = HTTPClient(baseURL: nil, manager: manager)
        let response: DataResponse<Data>? = wait { finish in noBase.get("relative/path", serializer: .data, completion: finish) }
        XCTAssertEqual(response?.error?.code, .invalidRequest)
    }

    private struct Echo: Decodable, Sendable {
        let method: String
        let args: [String: String]
    }

    func testAsyncVerbsDecode() async throws {
        let client = client!
        let echo = try await client.get("q", parameters: ["page": 2], as: Echo.self)
        XCTAssertEqual(echo.method, "GET")
        XCTAssertEqual(echo.args["page"], "2")
        let posted = try await client.post("p", parameters: ["x": "y"], as: Echo.self)
        XCTAssertEqual(posted.method, "POST")
        let head = try await client.head("h")
        XCTAssertEqual(head.statusCode, 200)
        do {
            _ = try await client.get("x", headers: ["Bad Name": "v"], as: Echo.self)
            XCTFail("expected a refusal")
        } catch {
            XCTAssertEqual(error.code, .invalidRequest)
        }
    }

    private struct Refusal: Error {}

    private struct RefusingSerializer: RequestSerializer {
        func serialize(_ request: URLRequest, with parameters: Parameters?) throws -> URLRequest { throw Refusal() }
    }

    func testAnotherErrorFromASerializerOfYourOwnIsWrappedAsAnInvalidRequest() async {
        do {
            _ = try await client.send(.post, "x", parameters: ["a": 1], parameterEncoding: RefusingSerializer(), serializer: .data)
            XCTFail("expected a refusal")
        } catch {
            XCTAssertEqual(error.code, .invalidRequest)
            XCTAssertTrue(error.underlyingError is Refusal, "\(error)")
        }
        XCTAssertTrue(server.requests.isEmpty)
    }

    func testUploadProgressForAPOSTBody() {
        let samples = Box<Int64>()
        let big = String(repeating: "z", count: 200_000)
        _ = wait { finish in
            client.post(
                "big", parameters: ["blob": big], serializer: .data, progress: { samples.append($0.completedUnitCount) },
                completion: finish)
        }
        XCTAssertGreaterThan(samples.all.last ?? 0, 200_000)
    }
}
