import CourierTestSupport
import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `body:` calls: an `Encodable` value sent as JSON to `/anything`, which echoes it back.
final class HTTPClientEncodableTests: CourierTestCase {
    private var client: HTTPClient!

    override func setUpWithError() throws {
        try super.setUpWithError()
        // The client's own encoding is URL-encoded: a `body:` is JSON all the same.
        client = HTTPClient(baseURL: server.url("/anything/"), manager: manager)
    }

    private struct Invoice: Codable, Sendable, Equatable {
        let number: Int
        let customerName: String
        let issuedAt: Date
        let paid: Bool
    }

    private let invoice = Invoice(
        number: 7, customerName: "Zoë & Co", issuedAt: Date(timeIntervalSince1970: 1_700_000_000), paid: false)

    /// What `/anything` echoes of a JSON request.
    private struct Echo: Decodable, Sendable {
        let method: String
        let json: Invoice?
        let data: String
        let headers: [String: String]
    }

    func testAsyncPostSendsTheValueAsJSONAndDecodesTheReply() async throws {
        // Given a client whose parameter encoding is URL-encoded
        let client = client!
        // When an Encodable value is posted
        let echo = try await client.post("invoices", body: invoice, as: Echo.self)
        // Then it arrived as JSON, written by a plain JSONEncoder, and the reply was decoded
        XCTAssertEqual(echo.method, "POST")
        XCTAssertEqual(echo.json, invoice)
        XCTAssertEqual(echo.headers["Content-Type"], "application/json")
        XCTAssertEqual(server.requests.last?.path, "/anything/invoices")
    }

    func testTheGivenEncoderWritesTheBody() async throws {
        let client = client!
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys]
        struct Raw: Decodable, Sendable { let method: String; let data: String }
        let echo = try await client.put("invoices/7", body: invoice, encoder: encoder, as: Raw.self)
        XCTAssertEqual(echo.method, "PUT")
        XCTAssertEqual(
            echo.data, #"{"customer_name":"Zoë & Co","issued_at":"2023-11-14T22:13:20Z","number":7,"paid":false}"#)
    }

    func testCompletionFormsSendEveryBodyVerb() {
        for (method, send) in [
            (
                "POST",
                { [client] (finish: @escaping @Sendable (DataResponse<JSONValue>) -> Void) in
                    client!.post("x", body: ["a": 1], serializer: .json, completion: finish)
                }
            ),
            ("PUT", { [client] finish in client!.put("x", body: ["a": 1], serializer: .json, completion: finish) }),
            ("PATCH", { [client] finish in client!.patch("x", body: ["a": 1], serializer: .json, completion: finish) }),
        ] as [(String, (@escaping @Sendable (DataResponse<JSONValue>) -> Void) -> DataTask)] {
            let response = wait { finish in _ = send(finish) }
            XCTAssertEqual(response?.value?["method"]?.string, method)
            XCTAssertEqual(response?.value?["json"]?["a"]?.int, 1, method)
        }
    }

    func testACallsContentTypeWinsAndUploadProgressIsReported() {
        let samples = Box<Int64>()
        let large = [String](repeating: String(repeating: "z", count: 1000), count: 200)
        let response = wait { finish in
            client.post(
                "big", body: large, headers: ["Content-Type": "application/vnd.courier+json"], serializer: .json,
                progress: { samples.append($0.completedUnitCount) }, completion: finish)
        }
        XCTAssertEqual(response?.value?["headers"]?["Content-Type"]?.string, "application/vnd.courier+json")
        XCTAssertEqual(response?.value?["bodyLength"]?.int, server.requests.last?.bodyLength)
        XCTAssertGreaterThan(samples.all.last ?? 0, 200_000)
    }

    func testTheGeneralFormsSendABodyWithAnyMethodThatMayCarryOne() async throws {
        let client = client!
        let (json, http) = try await client.send(.delete, "invoices/7", body: ["reason": "duplicate"], serializer: .json)
        XCTAssertEqual(http.statusCode, 200)
        XCTAssertEqual(json["method"]?.string, "DELETE")
        XCTAssertEqual(json["json"]?["reason"]?.string, "duplicate")
        XCTAssertEqual(json["args"]?.dictionary?.count, 0, "a body, not a query")
        let request = try client.request(.post, "r", body: invoice)
        XCTAssertEqual(request.httpMethod, "POST")
        XCTAssertEqual(try JSONDecoder().decode(Invoice.self, from: XCTUnwrap(request.httpBody)), invoice)
    }

    func testAGetWithABodyIsRefusedBeforeAnythingIsSent() async {
        let client = client!
        do {
            _ = try await client.send(.get, "x", body: invoice, serializer: .data)
            XCTFail("expected a refusal")
        } catch {
            XCTAssertEqual(error.code, .invalidRequest)
            XCTAssertTrue(error.message.contains("a GET request cannot carry a body"), error.message)
        }
        XCTAssertTrue(server.requests.isEmpty)
    }

    func testAValueTheEncoderRefusesFailsAtOnceWithoutSending() async {
        struct Reading: Encodable, Sendable { let value: Double }
        let completed = wait { finish in self.client.post("x", body: Reading(value: .nan), serializer: .data, completion: finish) }
        XCTAssertEqual(completed?.error?.code, .invalidRequest)
        XCTAssertTrue(completed?.error?.message.contains("Reading") ?? false, "\(String(describing: completed?.error))")
        let client = client!
        do {
            _ = try await client.patch("x", body: Reading(value: .infinity), as: Empty.self)
            XCTFail("expected a refusal")
        } catch {
            XCTAssertEqual(error.code, .invalidRequest)
        }
        XCTAssertTrue(server.requests.isEmpty)
    }
}
