import XCTest
import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The README's examples, run against the test server (only the URLs differ), so the README
/// stays true.
final class ReadmeExampleTests: CourierTestCase {
    struct Release: Decodable, Sendable { let tag: String }

    func testFirstExample() async throws {
        server.addFile("latest.json", data: Data(#"{"tag":"v1.2.3"}"#.utf8), contentType: "application/json")
        let destination = directory.appendingPathComponent("latest.json")

        let manager = SessionManager()
        let request = URLRequest(url: server.url("/files/latest.json"))
        let release = try await manager.decodable(Release.self, for: request)
        XCTAssertEqual(release.tag, "v1.2.3")

        let done = expectation(description: "download")
        let task = manager.downloadTask(with: request, to: .file(destination)) { response in
            XCTAssertNotNil(response.fileURL)
            done.fulfill()
        }
        task.resume()
        await fulfillment(of: [done], timeout: 10)
        XCTAssertEqual(try Data(contentsOf: destination), Data(#"{"tag":"v1.2.3"}"#.utf8))
    }

    struct Invoice: Decodable, Sendable {
        let method: String
        let json: Body
        struct Body: Decodable, Sendable { let customer: Int }
    }

    func testHTTPClientExample() async throws {
        let token = "t0k"
        let api = HTTPClient(
            baseURL: server.url("/anything/v2/"),
            headers: ["Authorization": HTTPAuthorization.bearer(token)],
            parameterEncoding: JSONRequestSerializer.default)
        let invoice = try await api.post("invoices", parameters: ["customer": 42, "currency": "EUR"], as: Invoice.self)
        XCTAssertEqual(invoice.method, "POST")
        XCTAssertEqual(invoice.json.customer, 42)
        XCTAssertEqual(server.requests.last?.path, "/anything/v2/invoices")
        XCTAssertEqual(server.requests.last?.header("Authorization"), "Bearer t0k")
    }
}
