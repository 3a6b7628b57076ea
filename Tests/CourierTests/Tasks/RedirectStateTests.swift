import Foundation
import XCTest

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@testable import Courier

/// The redirect decision as a pure value: no sockets, one assertion on what it decides.
final class RedirectStateTests: XCTestCase {
    private let secrets = RedirectState.secretHeaders(.follow(), taskSensitiveHeaders: ["x-api-key"])

    private func response(_ status: Int, from url: String, location: String?) -> HTTPURLResponse {
        HTTPURLResponse(
            url: URL(string: url)!, statusCode: status, httpVersion: "HTTP/1.1",
            headerFields: location.map { ["Location": $0] } ?? [:])!
    }

    private func request(_ url: String, method: String = "GET", body: Data? = nil, headers: [String: String] = [:]) -> URLRequest {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        request.httpBody = body
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        return request
    }

    /// Decides one redirect of `current` to `location`, URLSession proposing that URL.
    private func decide(
        _ state: inout RedirectState, _ status: Int, from current: URLRequest, to location: String?,
        policy: RedirectPolicy = .follow(), hasBody: Bool? = nil
    ) -> RedirectState.Decision {
        let proposed = URLRequest(url: URL(string: location ?? "http://proposed.invalid/", relativeTo: current.url)!.absoluteURL)
        return state.decide(
            response(status, from: current.url!.absoluteString, location: location), proposed: proposed, current: current,
            policy: policy, secretHeaders: secrets, hasBody: hasBody ?? (current.httpBody != nil))
    }

    private func followed(
        _ decision: RedirectState.Decision, file: StaticString = #filePath, line: UInt = #line
    )
        -> (request: URLRequest, resend: Bool, stripped: [String])?
    {
        guard case .follow(let request, let resend, let stripped) = decision else {
            XCTFail("expected a followed redirect, got \(decision)", file: file, line: line)
            return nil
        }
        return (request, resend, stripped)
    }

    func testASameOriginRedirectIsFollowedWithEveryHeader() {
        // Given a GET with credentials
        var state = RedirectState()
        let current = request("http://a.test/one", headers: ["Authorization": "Bearer t", "X-Api-Key": "k"])
        // When the server redirects to the same origin
        let decision = decide(&state, 302, from: current, to: "/two")
        // Then the request is followed to the resolved URL, keeping every header
        let next = followed(decision)
        XCTAssertEqual(next?.request.url?.absoluteString, "http://a.test/two")
        XCTAssertEqual(next?.stripped, [])
        XCTAssertEqual(next?.resend, false)
        XCTAssertEqual(state.count, 1)
    }

    func testACrossOriginRedirectStripsCredentialsAndSensitiveHeaders() {
        var state = RedirectState()
        let current = request(
            "http://a.test/", headers: ["Authorization": "Bearer t", "Cookie": "c=1", "X-Api-Key": "k", "Accept": "*/*"])
        var proposed = current
        proposed.url = URL(string: "http://b.test/")
        let decision = state.decide(
            response(302, from: "http://a.test/", location: "http://b.test/"), proposed: proposed, current: current,
            policy: .follow(), secretHeaders: secrets, hasBody: false)
        let next = followed(decision)
        XCTAssertEqual(next?.stripped, ["Authorization", "Cookie", "X-Api-Key"])
        XCTAssertNil(next?.request.value(forHTTPHeaderField: "Authorization"))
        XCTAssertEqual(next?.request.value(forHTTPHeaderField: "Accept"), "*/*")
    }

    func testAnotherPortIsAnotherOrigin() {
        var state = RedirectState()
        let current = request("http://a.test:8080/", headers: ["Authorization": "Bearer t"])
        var proposed = current
        proposed.url = URL(string: "http://a.test:9090/")
        let decision = state.decide(
            response(307, from: "http://a.test:8080/", location: "http://a.test:9090/"), proposed: proposed,
            current: current, policy: .follow(), secretHeaders: secrets, hasBody: false)
        XCTAssertEqual(followed(decision)?.stripped, ["Authorization"])
    }

    func testTheHopLimitRefusesTheRedirectPastIt() {
        var state = RedirectState()
        let policy = RedirectPolicy.follow(maximumHops: 2)
        XCTAssertNotNil(followed(decide(&state, 302, from: request("http://a.test/0"), to: "/1", policy: policy)))
        XCTAssertNotNil(followed(decide(&state, 302, from: request("http://a.test/1"), to: "/2", policy: policy)))
        XCTAssertEqual(
            decide(&state, 302, from: request("http://a.test/2"), to: "/3", policy: policy),
            .fail(what: "after 2 redirects", target: URL(string: "http://a.test/3")))
    }

    func testAURLMayComeBackOnceButAThirdVisitIsALoop() {
        var state = RedirectState()
        // A → B → A is a sign-in flow
        XCTAssertNotNil(followed(decide(&state, 302, from: request("http://a.test/a"), to: "/b")))
        XCTAssertNotNil(followed(decide(&state, 302, from: request("http://a.test/b"), to: "/a")))
        XCTAssertNotNil(followed(decide(&state, 302, from: request("http://a.test/a"), to: "/b")))
        // … but B a third time is a loop
        XCTAssertEqual(
            decide(&state, 302, from: request("http://a.test/b"), to: "/a"),
            .fail(what: "to http://a.test/a: a redirect loop", target: URL(string: "http://a.test/a")))
    }

    func testOnlyHTTPAndHTTPSTargetsAreFollowed() {
        for location in ["file:///etc/passwd", "ftp://a.test/x", "gopher://a.test/"] {
            var state = RedirectState()
            let decision = decide(&state, 302, from: request("http://a.test/"), to: location)
            XCTAssertEqual(
                decision, .fail(what: "to \(location): only http and https redirects are followed", target: URL(string: location)),
                location)
            XCTAssertEqual(state.count, 0, "a refused scheme does not count as a hop")
        }
    }

    func testARedirectWithoutLocationFails() {
        var state = RedirectState()
        XCTAssertEqual(
            decide(&state, 302, from: request("http://a.test/"), to: nil),
            .fail(what: "to no Location: only http and https redirects are followed", target: nil))
    }

    func testARefusingPolicyStopsAtThe3xxWithoutFailing() {
        var state = RedirectState()
        XCTAssertEqual(
            decide(&state, 301, from: request("http://a.test/"), to: "/x", policy: .refuse),
            .stop(reason: "the redirect policy refuses redirects", target: nil))
    }

    func testA303BecomesAGETWithoutBody() {
        var state = RedirectState()
        let current = request("http://a.test/", method: "PUT", body: Data("x".utf8), headers: ["Content-Type": "text/plain"])
        let next = followed(decide(&state, 303, from: current, to: "/done"))
        XCTAssertEqual(next?.request.httpMethod, "GET")
        XCTAssertNil(next?.request.httpBody)
        XCTAssertNil(next?.request.value(forHTTPHeaderField: "Content-Type"))
        XCTAssertEqual(next?.resend, false)
    }

    func testA303AfterHEADStaysHEAD() {
        var state = RedirectState()
        var current = request("http://a.test/", method: "HEAD")
        current.httpMethod = "HEAD"
        var proposed = current
        proposed.url = URL(string: "http://a.test/done")
        let decision = state.decide(
            response(303, from: "http://a.test/", location: "/done"), proposed: proposed, current: current, policy: .follow(),
            secretHeaders: secrets, hasBody: false)
        XCTAssertEqual(followed(decision)?.request.httpMethod, "HEAD")
    }

    func testA301Or302AfterPOSTBecomesAGET() {
        for status in [301, 302] {
            var state = RedirectState()
            let current = request("http://a.test/", method: "POST", body: Data("form".utf8))
            let next = followed(decide(&state, status, from: current, to: "/next"))
            XCTAssertEqual(next?.request.httpMethod, "GET", "\(status)")
            XCTAssertNil(next?.request.httpBody, "\(status)")
        }
    }

    func testA307Or308KeepsTheMethodAndCourierResendsTheBody() {
        for status in [307, 308] {
            var state = RedirectState()
            let body = Data("payload".utf8)
            let current = request("http://a.test/", method: "post", body: body)
            let next = followed(decide(&state, status, from: current, to: "/again"))
            XCTAssertEqual(next?.request.httpMethod, "POST", "\(status)")
            XCTAssertEqual(next?.request.httpBody, body, "\(status)")
            XCTAssertEqual(next?.resend, true, "\(status): URLSession would drop the body")
        }
    }

    func testA307WithoutBodyIsLeftToURLSession() {
        var state = RedirectState()
        let next = followed(decide(&state, 307, from: request("http://a.test/", method: "DELETE"), to: "/again"))
        XCTAssertEqual(next?.request.httpMethod, "DELETE")
        XCTAssertEqual(next?.resend, false)
    }

    func testAnUploadsBodyIsResentEvenWhenItIsNotInHTTPBody() {
        var state = RedirectState()
        let next = followed(decide(&state, 308, from: request("http://a.test/", method: "PUT"), to: "/x", hasBody: true))
        XCTAssertEqual(next?.resend, true)
    }

    func testAClosureThatReturnsNilStopsAtThe3xx() {
        let offered = request("http://a.test/next")
        XCTAssertEqual(
            RedirectState.vet(
                nil, offered: offered, leaving: request("http://a.test/"), secretHeaders: secrets, resend: false, stripped: []),
            .stop(reason: "the redirect policy's closure refused it", target: offered.url))
    }

    func testAClosureCannotLeadToANonHTTPScheme() {
        let decided = request("file:///etc/passwd")
        XCTAssertEqual(
            RedirectState.vet(
                decided, offered: request("http://a.test/next"), leaving: request("http://a.test/"), secretHeaders: secrets,
                resend: false, stripped: []),
            .fail(what: "to file:///etc/passwd: only http and https are followed", target: decided.url))
    }

    func testAClosureThatChangesTheOriginLosesTheSecretsToo() {
        // Given a same-origin redirect whose closure sends it elsewhere, with the credential
        let decided = request("http://evil.test/", headers: ["Authorization": "Bearer t", "X-Api-Key": "k"])
        let decision = RedirectState.vet(
            decided, offered: request("http://a.test/next"), leaving: request("http://a.test/"), secretHeaders: secrets,
            resend: true, stripped: ["Cookie"])
        let next = followed(decision)
        XCTAssertEqual(next?.stripped, ["Cookie", "Authorization", "X-Api-Key"])
        XCTAssertNil(next?.request.value(forHTTPHeaderField: "Authorization"))
        XCTAssertEqual(next?.resend, true)
    }

    func testTheSecretSetIsTheCredentialHeadersThePolicysAndTheTasks() {
        let set = RedirectState.secretHeaders(.follow(sensitiveHeaders: ["X-Tenant"]), taskSensitiveHeaders: ["x-api-key"])
        XCTAssertEqual(set, ["authorization", "proxy-authorization", "cookie", "x-tenant", "x-api-key"])
    }
}
