import XCTest
@testable import Courier
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Shared helpers for the request-serialization tests.
enum RequestFixtures {
    /// A request for `url` with `method`.
    static func request(_ url: String = "http://127.0.0.1/path", method: String = "GET") -> URLRequest {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        return request
    }

    /// The body as UTF-8 text.
    static func body(_ request: URLRequest) -> String? {
        request.httpBody.map { String(decoding: $0, as: UTF8.self) }
    }

    /// What is sent of a request, comparable: `URLRequest`'s own `==` on Linux ignores the body.
    struct Snapshot: Equatable {
        let url: String?
        let method: String?
        let headers: [String: String]
        let body: Data?

        init(_ request: URLRequest) {
            url = request.url?.absoluteString
            method = request.httpMethod
            headers = request.allHTTPHeaderFields ?? [:]
            body = request.httpBody
        }

        init(url: String?, method: String?, headers: [String: String], body: Data?) {
            self.url = url
            self.method = method
            self.headers = headers
            self.body = body
        }
    }

    /// Asserts that `expression` throws a CourierError with code `.invalidRequest` whose message
    /// contains every string in `mentioning`.
    static func assertInvalidRequest<T>(
        _ expression: @autoclosure () throws -> T, mentioning: [String] = [], _ context: String = "",
        file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertThrowsError(try expression(), context, file: file, line: line) { error in
            guard let error = error as? CourierError else {
                return XCTFail("\(context): not a CourierError: \(error)", file: file, line: line)
            }
            XCTAssertEqual(error.code, .invalidRequest, context, file: file, line: line)
            for text in mentioning {
                XCTAssertTrue(error.message.contains(text), "\(context): \"\(error.message)\" lacks \(text)", file: file, line: line)
            }
        }
    }
}
