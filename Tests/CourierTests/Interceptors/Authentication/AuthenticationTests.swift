import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

final class AuthenticationTests: CourierTestCase {
    func testBasicChallengeIsAnsweredWithTheManagersCredential() {
        var configuration = makeConfiguration()
        configuration.credential = Credential(user: "ann", password: "pw")
        let authenticated = SessionManager(configuration: configuration)
        let response = wait { finish in
            authenticated.dataTask(with: request("/basic-auth/ann/pw"), serializer: .json, completion: finish).resume()
        }
        XCTAssertEqual(response?.value?["authenticated"]?.bool, true)
        XCTAssertEqual(server.requests.count, 2)
        XCTAssertEqual(server.requests.last?.header("Authorization"), Credential(user: "ann", password: "pw").basicAuthorization)
    }

    func testPerTaskCredential() {
        let response = wait { finish in
            manager.dataTask(with: request("/basic-auth/bob/secret"), serializer: .json, completion: finish)
                .authenticate(with: Credential(user: "bob", password: "secret")).resume()
        }
        XCTAssertEqual(response?.value?["user"]?.string, "bob")
    }

    func testWrongCredentialIsTriedOnceThenReportedAs401() {
        let response = wait { finish in
            manager.dataTask(with: request("/basic-auth/bob/secret"), completion: finish)
                .authenticate(with: Credential(user: "bob", password: "wrong")).resume()
        }
        XCTAssertEqual(response?.error?.statusCode, 401)
        XCTAssertEqual(server.requests.count, 2)
    }

    func testDigestChallengeIsAnswered() {
        for qop in ["auth", "none"] {
            server.clearRequests()
            let response = wait { finish in
                manager.dataTask(with: request("/digest-auth/\(qop)/carol/p%40ss"), serializer: .json, completion: finish)
                    .authenticate(with: Credential(user: "carol", password: "p%40ss")).resume()
            }
            XCTAssertEqual(response?.value?["authenticated"]?.bool, true, qop)
            XCTAssertTrue(server.requests.last?.header("Authorization")?.hasPrefix("Digest ") ?? false)
        }
    }

    func testDigestWithoutCredentialCompletesPromptlyAs401() {
        let started = Date()
        let response = data(request("/digest-auth/auth/u/p"))
        XCTAssertEqual(response.error?.statusCode, 401)
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
    }

    func testUploadBodyIsResentWhenAnsweringAChallenge() {
        let response = wait { finish in
            manager.uploadTask(with: request("/basic-auth/ann/pw", method: "PUT"), from: .data(Data("doc".utf8)), completion: finish)
                .authenticate(with: Credential(user: "ann", password: "pw")).resume()
        }
        XCTAssertNil(response?.error)
        XCTAssertEqual(server.requests.map(\.body), [Data("doc".utf8), Data("doc".utf8)])
    }

    func testCredentialIsNeverOfferedToAnotherOriginAfterARedirect() throws {
        let other = try TestServer()
        defer { other.stop() }
        let target = other.url("/basic-auth/ann/pw").absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let response = wait { finish in
            manager.dataTask(with: request("/redirect-to?url=\(target)"), completion: finish)
                .authenticate(with: Credential(user: "ann", password: "pw")).resume()
        }
        XCTAssertEqual(response?.error?.statusCode, 401)
        XCTAssertTrue(other.requests.allSatisfy { $0.header("Authorization") == nil })
    }
}
