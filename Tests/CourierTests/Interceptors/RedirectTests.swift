import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

final class RedirectTests: CourierTestCase {
    private var other: TestServer!

    override func makeConfiguration() -> SessionManager.Configuration {
        var configuration = super.makeConfiguration()
        configuration.sensitiveHeaders = ["X-Secret"]
        return configuration
    }

    override func setUpWithError() throws {
        try super.setUpWithError()
        other = try TestServer()
    }

    override func tearDownWithError() throws {
        other?.stop()
        try super.tearDownWithError()
    }

    private func escaped(_ url: URL) -> String {
        url.absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
    }

    private func secretRequest(_ path: String) -> URLRequest {
        var request = request(path)
        request.setValue("Bearer secret", forHTTPHeaderField: "Authorization")
        request.setValue("session=1", forHTTPHeaderField: "Cookie")
        request.setValue("Basic cHJveHk=", forHTTPHeaderField: "Proxy-Authorization")
        request.setValue("s3cr3t", forHTTPHeaderField: "X-Secret")
        request.setValue("visible", forHTTPHeaderField: "X-Plain")
        return request
    }

    func testCrossOriginRedirectStripsCredentialsAndMarkedHeaders() {
        let response = data(secretRequest("/redirect-to?url=\(escaped(other.url("/headers")))"))
        XCTAssertNil(response.error)
        let seen = other.requests.last
        for name in ["Authorization", "Cookie", "Proxy-Authorization", "X-Secret"] {
            XCTAssertNil(seen?.header(name), "\(name) reached the other origin")
        }
        XCTAssertEqual(seen?.header("X-Plain"), "visible")
    }

    func testSameOriginRedirectKeepsAuthorization() {
        _ = data(secretRequest("/redirect-to?url=%2Fheaders"))
        XCTAssertEqual(server.requests.last?.header("Authorization"), "Bearer secret")
    }

    func testPlatformURLSessionForwardsAuthorizationAcrossOrigins() {
        // The measurement behind the stripping (Docs/Platform.md §2.3): raw URLSession sends the header on.
        let done = expectation(description: "raw URLSession")
        URLSession(configuration: .ephemeral).dataTask(with: secretRequest("/redirect-to?url=\(escaped(other.url("/headers")))")) {
            _, _, _ in done.fulfill()
        }.resume()
        wait(for: [done], timeout: 10)
        XCTAssertEqual(other.requests.last?.header("Authorization"), "Bearer secret")
    }

    func testRedirectToAFileURLIsRefusedByReadingTheRawLocation() {
        let response = data(request("/redirect-to?url=file%3A%2F%2F%2Fetc%2Fpasswd"))
        XCTAssertEqual(response.error?.code, .redirectRefused)
        XCTAssertTrue(response.error?.message.contains("file:///etc/passwd") ?? false)
        XCTAssertEqual(server.requests.count, 1, "URLSession's same-origin rewrite was never requested")
    }

    func testRedirectToFTPIsRefused() {
        XCTAssertEqual(data(request("/redirect-to?url=ftp%3A%2F%2F127.0.0.1%2Fx")).error?.code, .redirectRefused)
    }

    func testRedirectLoopIsDetected() {
        let response = data(request("/redirect-loop"))
        XCTAssertEqual(response.error?.code, .redirectRefused)
        XCTAssertTrue(response.error?.message.contains("loop") ?? false)
        XCTAssertEqual(server.requests.count, 2, "one return visit is allowed (sign-in flows), the next is a loop")
    }

    func testTooManyRedirectsIsATypedError() {
        var configuration = makeConfiguration()
        configuration.redirectPolicy = .follow(maximumHops: 3)
        let strict = SessionManager(configuration: configuration)
        let response = wait { finish in strict.dataTask(with: request("/redirect/5"), completion: finish).resume() }
        XCTAssertEqual(response?.error?.code, .redirectRefused)
        XCTAssertTrue(response?.error?.message.contains("after 3 redirects") ?? false)
    }

    func testRefusePolicyMakesThe3xxTheResponse() {
        let response = wait { finish in
            manager.dataTask(with: request("/redirect/2"), validation: .none, completion: finish).redirect(using: .refuse).resume()
        }
        XCTAssertEqual(response?.response?.statusCode, 302)
        XCTAssertEqual(server.requests.count, 1)
    }

    func testModifiedRedirectIsCheckedLikeAnyOther() {
        let refused = wait { finish in
            manager.dataTask(with: request("/redirect/1"), completion: finish)
                .redirect(
                    using: .modify { next, _ in
                        var next = next
                        next.url = URL(string: "file:///etc/passwd")
                        return next
                    }
                ).resume()
        }
        XCTAssertEqual(refused?.error?.code, .redirectRefused)
        let rewritten = data(URLRequest(url: server.url("/get")))
        XCTAssertNil(rewritten.error)
        let other = other!
        let moved = wait { finish in
            manager.dataTask(with: secretRequest("/redirect/1"), completion: finish)
                .redirect(
                    using: .modify { next, _ in
                        var next = next
                        next.url = other.url("/headers")
                        return next
                    }
                ).resume()
        }
        XCTAssertNil(moved?.error)
        XCTAssertNil(other.requests.last?.header("Authorization"), "stripped after the closure moved it to another origin")
    }

    func testModifyPolicyCanRewriteTheNextRequest() {
        let response = wait { finish in
            manager.dataTask(with: request("/redirect/1"), serializer: .json, completion: finish)
                .redirect(
                    using: .modify { next, _ in
                        var next = next
                        next.setValue("rewritten", forHTTPHeaderField: "X-Hop")
                        return next
                    }
                )
                .resume()
        }
        XCTAssertNil(response?.error)
        XCTAssertEqual(server.requests.last?.header("X-Hop"), "rewritten")
    }

    func test303BecomesAGetWithoutBody() {
        var post = request("/redirect-to?url=%2Fanything&status_code=303", method: "POST")
        post.httpBody = Data("payload".utf8)
        post.setValue("text/plain", forHTTPHeaderField: "Content-Type")
        _ = data(post)
        let last = server.requests.last
        XCTAssertEqual(last?.method, "GET")
        XCTAssertEqual(last?.body, Data())
        XCTAssertNil(last?.header("Content-Type"))
    }

    func test307And308KeepTheMethodAndResendTheBody() {
        for status in [307, 308] {
            server.clearRequests()
            var post = request("/redirect-to?url=%2Fanything&status_code=\(status)", method: "POST")
            post.httpBody = Data("payload-\(status)".utf8)
            XCTAssertNil(data(post).error)
            XCTAssertEqual(server.requests.last?.method, "POST")
            XCTAssertEqual(server.requests.last?.body, Data("payload-\(status)".utf8), "URLSession alone drops it")
        }
    }

    func testUpload307ResendsTheWholeBody() {
        let body = TestServer.deterministicBytes(count: 100_000, seed: 8)
        let response = wait { finish in
            manager.uploadTask(
                with: request("/redirect-to?url=%2Fsink&status_code=307", method: "PUT"), from: .data(body), completion: finish
            )
            .resume()
        }
        XCTAssertNil(response?.error)
        XCTAssertEqual(server.requests.last?.path, "/sink")
        XCTAssertEqual(server.requests.last?.bodyLength, 100_000)
    }

    func testPerTaskPolicyOverridesTheManagers() {
        let response = wait { finish in
            manager.dataTask(with: request("/redirect/3"), validation: .none, completion: finish)
                .redirect(using: .follow(maximumHops: 1)).resume()
        }
        XCTAssertEqual(response?.error?.code, .redirectRefused)
    }
}
