import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A redirect status with nowhere to go (no `Location`): FoundationNetworking ends the task with
/// no error and no announced head, which read as a success with no response. Like curl, the 3xx
/// is the final response (issue 31, item 8).
final class RedirectWithoutLocationTests: CourierTestCase {
    private var scripted: ScriptedServer!

    override func setUpWithError() throws {
        try super.setUpWithError()
        // Alternately without a length, and with a body FoundationNetworking drops.
        scripted = try ScriptedServer { _, index in
            index % 2 == 0
                ? .response(status: 302, reason: "Found", headers: [])
                : .response(status: 302, reason: "Found", headers: [("Content-Length", "5")], body: Data("moved".utf8))
        }
    }

    override func tearDownWithError() throws {
        scripted?.stop()
        try super.tearDownWithError()
    }

    func testUnderNoValidationThe302IsTheResponse() throws {
        for _ in 0..<2 {
            // Given a server answering 302 with no Location, When a data task with no validation
            // and a serializer that allows an empty body asks
            let request = URLRequest(url: scripted.url("/moved"))
            let response = try XCTUnwrap(
                wait { finish in
                    manager.dataTask(with: request, serializer: .dataOrEmpty, validation: .none, completion: finish).resume()
                })

            // Then it succeeds with the 302 itself: a response, never a success without one
            XCTAssertEqual(response.response?.statusCode, 302, "\(response.result)")
            XCTAssertNil(response.error, "\(response.result)")
            XCTAssertEqual(response.metrics?.attempts.last?.statusCode, 302)
        }
        XCTAssertEqual(scripted.requests.count, 2, "nothing to follow, nothing retried")
    }

    func testTheDefaultSerializerSaysTheEmpty302IsEmpty() throws {
        // Given the same server, When a data task with no validation and the default serializer asks
        let response = data(URLRequest(url: scripted.url("/moved")), validation: .none)

        // Then the error names the 302, whose response it carries
        let error = try XCTUnwrap(response.error)
        XCTAssertEqual(error.code, .emptyResponse, error.message)
        XCTAssertEqual(response.response?.statusCode, 302)
        XCTAssertTrue(error.message.contains("302"), error.message)
    }

    func testUnderTheDefaultValidationThe302IsAnUnacceptableStatus() throws {
        // Given the same server, When a data task with the default validation asks
        let response = data(URLRequest(url: scripted.url("/moved")))

        // Then it fails naming the status, with the response attached (not "no HTTP response")
        let error = try XCTUnwrap(response.error)
        XCTAssertEqual(error.code, .unacceptableStatusCode, error.message)
        XCTAssertEqual(error.response?.statusCode, 302)
        XCTAssertTrue(error.message.contains("302"), error.message)
    }

    func testAnAsyncStreamGetsThe302AsAnUnacceptableStatus() async throws {
        // Given the same server, When a byte stream asks with the default validation
        do {
            _ = try await manager.bytes(for: URLRequest(url: scripted.url("/moved")))
            XCTFail("a 302 with no Location was accepted as a stream")
        } catch {
            // Then the stream is refused for its status
            XCTAssertEqual(error.code, .unacceptableStatusCode, error.message)
            XCTAssertEqual(error.response?.statusCode, 302)
        }
    }
}
