import XCTest
@testable import Courier
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

final class AuthenticationUnitTests: XCTestCase {
    private func md5(_ text: String) -> String { SHA256.hexString(MD5.hash(Array(text.utf8))) }

    func testMD5MatchesTheRFC1321Suite() {
        XCTAssertEqual(md5(""), "d41d8cd98f00b204e9800998ecf8427e")
        XCTAssertEqual(md5("a"), "0cc175b9c0f1b6a831c399e269772661")
        XCTAssertEqual(md5("abc"), "900150983cd24fb0d6963f7d28e17f72")
        XCTAssertEqual(md5("message digest"), "f96b697d7cb7938d525a2f31aaf161d0")
        XCTAssertEqual(md5("abcdefghijklmnopqrstuvwxyz"), "c3fcd3d76192e4007dfb496cca67e13b")
        XCTAssertEqual(
            md5("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"), "d174ab98d277d9f5a5611c2c9f419d9f")
        XCTAssertEqual(md5(String(repeating: "1234567890", count: 8)), "57edf4a22be3c955ac49da2e2107b67a")
    }

    /// RFC 7616 §3.9.1, both algorithms.
    func testDigestResponseMatchesTheRFC7616Example() throws {
        var request = URLRequest(url: URL(string: "http://www.example.org/dir/index.html")!)
        request.httpMethod = "GET"
        let credential = Credential(user: "Mufasa", password: "Circle of Life")
        let nonce = "7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v"
        let cnonce = "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ"
        for (algorithm, expected) in [
            ("MD5", "8ca523f5e9506fed4657c9700eebdbec"),
            ("SHA-256", "753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1"),
        ] {
            let header = """
                Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=\(algorithm), \
                nonce="\(nonce)", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"
                """
            let challenge = try XCTUnwrap(AuthenticationChallenge(header: header))
            let authorization = try XCTUnwrap(challenge.authorization(for: request, credential: credential, clientNonce: cnonce))
            XCTAssertTrue(authorization.contains("response=\"\(expected)\""), "\(algorithm): \(authorization)")
            XCTAssertTrue(authorization.contains("nc=00000001"))
            XCTAssertTrue(authorization.contains("uri=\"/dir/index.html\""))
            XCTAssertTrue(authorization.contains("opaque=\"FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS\""))
        }
    }

    func testChallengeParsingPrefersDigestAndHandlesQuotedCommas() {
        XCTAssertEqual(AuthenticationChallenge(header: "Basic realm=\"a, b\""), .basic)
        let both = AuthenticationChallenge(header: "Basic realm=\"x\", Digest realm=\"y, z\", nonce=\"n\\\"q\"")
        XCTAssertEqual(both, .digest(parameters: ["realm": "y, z", "nonce": "n\"q"]))
        XCTAssertNil(AuthenticationChallenge(header: "Bearer realm=\"api\""))
        XCTAssertNil(AuthenticationChallenge(header: ""))
        XCTAssertNil(AuthenticationChallenge(header: "\"\"\"==,,"))
    }

    func testDigestWithOnlyAuthIntOrAnUnknownAlgorithmIsNotAnswered() {
        let request = URLRequest(url: URL(string: "http://h/x")!)
        let credential = Credential(user: "u", password: "p")
        XCTAssertNil(
            AuthenticationChallenge(header: "Digest realm=\"r\", nonce=\"n\", qop=\"auth-int\"")?
                .authorization(for: request, credential: credential))
        XCTAssertNil(
            AuthenticationChallenge(header: "Digest realm=\"r\", nonce=\"n\", algorithm=SHA-512-256")?
                .authorization(for: request, credential: credential))
    }

    func testBasicAuthorizationValue() {
        XCTAssertEqual(Credential(user: "Aladdin", password: "open sesame").basicAuthorization, "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==")
    }

    func testRetryPolicyDecisionTable() {
        let policy = RetryPolicy()
        func request(_ method: String) -> URLRequest {
            var request = URLRequest(url: URL(string: "http://h/x")!)
            request.httpMethod = method
            return request
        }
        let unavailable = CourierError(code: .unacceptableStatusCode, message: "", response: makeResponse(503))
        let notFound = CourierError(code: .unacceptableStatusCode, message: "", response: makeResponse(404))
        let reset = CourierError(
            code: .network, message: "", underlyingError: NSError(domain: NSURLErrorDomain, code: NSURLErrorNetworkConnectionLost))
        XCTAssertNotEqual(policy.decision(for: request("GET"), error: unavailable, attempt: 0), .doNotRetry)
        XCTAssertNotEqual(policy.decision(for: request("PUT"), error: reset, attempt: 1), .doNotRetry)
        XCTAssertEqual(policy.decision(for: request("GET"), error: unavailable, attempt: 2), .doNotRetry, "limit reached")
        XCTAssertEqual(policy.decision(for: request("POST"), error: unavailable, attempt: 0), .doNotRetry, "not idempotent")
        XCTAssertEqual(policy.decision(for: request("GET"), error: notFound, attempt: 0), .doNotRetry)
        XCTAssertEqual(policy.decision(for: request("GET"), error: .cancelled(url: nil), attempt: 0), .doNotRetry)
        let throttled = CourierError(code: .unacceptableStatusCode, message: "", response: makeResponse(429, headers: ["Retry-After": "7"]))
        XCTAssertEqual(policy.decision(for: request("GET"), error: throttled, attempt: 0), .retryAfter(.seconds(7)))
        let tooLong = CourierError(
            code: .unacceptableStatusCode, message: "", response: makeResponse(503, headers: ["Retry-After": "999999"]))
        XCTAssertEqual(
            policy.decision(for: request("GET"), error: tooLong, attempt: 0), .doNotRetry,
            "a Retry-After beyond the cap is not waited for, as downloads do")
    }

    func testRetryPolicyIsCodable() throws {
        var policy = RetryPolicy()
        policy.retryLimit = 5
        policy.initialDelay = .milliseconds(10)
        XCTAssertEqual(try JSONDecoder().decode(RetryPolicy.self, from: JSONEncoder().encode(policy)), policy)
    }
}
