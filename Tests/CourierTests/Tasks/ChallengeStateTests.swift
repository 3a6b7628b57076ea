import Foundation
import XCTest

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@testable import Courier

/// The answer to a 401 as a pure value: no sockets.
final class ChallengeStateTests: XCTestCase {
    private let credential = Credential(user: "user", password: "secret")

    private func unauthorized(_ challenge: String?, url: String = "http://a.test/private") -> HTTPURLResponse {
        HTTPURLResponse(
            url: URL(string: url)!, statusCode: 401, httpVersion: "HTTP/1.1",
            headerFields: challenge.map { ["WWW-Authenticate": $0] } ?? [:])!
    }

    private let request = URLRequest(url: URL(string: "http://a.test/private")!)

    func testABasicChallengeIsAnsweredOnce() {
        // Given a task with a credential
        var state = ChallengeState()
        // When the server asks for Basic twice
        let first = state.decide(unauthorized("Basic realm=\"r\""), credential: credential, request: request, originalURL: request.url)
        let second = state.decide(unauthorized("Basic realm=\"r\""), credential: credential, request: request, originalURL: request.url)
        // Then the first is answered and the second refused
        XCTAssertEqual(first, .answer(authorization: credential.basicAuthorization, scheme: "Basic"))
        XCTAssertEqual(second, .refuse(reason: "the credential was already sent and refused", scheme: "Basic"))
    }

    func testDigestIsPreferredOverBasic() {
        var state = ChallengeState()
        let decision = state.decide(
            unauthorized("Basic realm=\"r\", Digest realm=\"r\", nonce=\"n\", qop=\"auth\""), credential: credential,
            request: request, originalURL: request.url)
        guard case .answer(let authorization, let scheme) = decision else { return XCTFail("\(decision)") }
        XCTAssertEqual(scheme, "Digest")
        XCTAssertTrue(authorization.hasPrefix("Digest "), authorization)
        XCTAssertTrue(authorization.contains("username=\"user\""), authorization)
    }

    func testWithoutACredentialThe401IsDelivered() {
        var state = ChallengeState()
        XCTAssertEqual(
            state.decide(unauthorized("Basic realm=\"r\""), credential: nil, request: request, originalURL: request.url),
            .refuse(reason: "no credential is configured", scheme: "Basic"))
        XCTAssertFalse(state.answered)
    }

    func testA401WithoutChallengeOrWithAnUnknownSchemeIsNotAnswered() {
        var state = ChallengeState()
        XCTAssertEqual(
            state.decide(unauthorized(nil), credential: credential, request: request, originalURL: request.url),
            .refuse(reason: "the 401 has no WWW-Authenticate challenge", scheme: nil))
        XCTAssertEqual(
            state.decide(unauthorized("Bearer realm=\"api\""), credential: credential, request: request, originalURL: request.url),
            .refuse(reason: "no supported challenge (Basic or Digest)", scheme: nil))
    }

    func testTheCredentialOnlyGoesToTheOriginTheTaskWasMadeFor() {
        // Given a task made for a.test that a redirect took to b.test
        var state = ChallengeState()
        let redirected = URLRequest(url: URL(string: "http://b.test/login")!)
        let decision = state.decide(
            unauthorized("Basic realm=\"r\"", url: "http://b.test/login"), credential: credential, request: redirected,
            originalURL: request.url)
        XCTAssertEqual(decision, .refuse(reason: "the credential is only sent to the origin the task was made for", scheme: "Basic"))
    }

    func testADigestChallengeThatCannotBeAnsweredIsRefused() {
        // auth-int only, and an unknown algorithm
        for header in ["Digest realm=\"r\", nonce=\"n\", qop=\"auth-int\"", "Digest realm=\"r\", nonce=\"n\", algorithm=SHA-512"] {
            var state = ChallengeState()
            XCTAssertEqual(
                state.decide(unauthorized(header), credential: credential, request: request, originalURL: request.url),
                .refuse(reason: "the challenge could not be answered with this credential", scheme: "Digest"), header)
        }
    }

    func testANewAttemptAnswersAgain() {
        // A retry starts a new ChallengeState: the credential may be sent once per attempt.
        var state = ChallengeState()
        _ = state.decide(unauthorized("Basic realm=\"r\""), credential: credential, request: request, originalURL: request.url)
        state = ChallengeState()
        XCTAssertEqual(
            state.decide(unauthorized("Basic realm=\"r\""), credential: credential, request: request, originalURL: request.url),
            .answer(authorization: credential.basicAuthorization, scheme: "Basic"))
    }
}
