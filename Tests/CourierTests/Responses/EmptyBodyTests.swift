import CourierTestServer
import XCTest

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Answers that are the status alone: `.data` refuses an empty body where RFC 9110 expects
/// content, `.dataOrEmpty` (Alamofire's `response { … }`) takes it.
final class EmptyBodyTests: CourierTestCase {
    private func emptyAnswers(_ status: Int) throws -> ScriptedServer {
        try ScriptedServer { _, _ in .response(status: status, reason: "R", headers: [("Content-Length", "0")]) }
    }

    func testAnEmpty200IsAnEmptyResponseErrorForDataButNotForDataOrEmpty() throws {
        let server = try emptyAnswers(200)
        defer { server.stop() }
        let strict = wait { finish in
            manager.dataTask(with: URLRequest(url: server.url("/ping")), serializer: .data, completion: finish).resume()
        }
        XCTAssertEqual(strict?.error?.code, .emptyResponse)
        let lenient = wait { finish in
            manager.dataTask(with: URLRequest(url: server.url("/ping")), serializer: .dataOrEmpty, completion: finish).resume()
        }
        XCTAssertNil(lenient?.error)
        XCTAssertEqual(lenient?.value, Data())
        XCTAssertEqual(lenient?.response?.statusCode, 200)
    }

    /// (A 302 without `Location` is not here: FoundationNetworking hands back no response for it.)
    func testWithValidationNoneAnEmpty401Or202IsAnAnswerNotAFailure() throws {
        for status in [401, 202] {
            let server = try emptyAnswers(status)
            defer { server.stop() }
            var request = URLRequest(url: server.url("/session"))
            request.httpMethod = "POST"
            let response = wait { finish in
                manager.dataTask(with: request, serializer: .dataOrEmpty, validation: .none, completion: finish).resume()
            }
            XCTAssertNil(response?.error, "\(status)")
            XCTAssertEqual(response?.response?.statusCode, status, "\(String(describing: response))")
            XCTAssertEqual(response?.value, Data(), "\(status)")
        }
    }
}
