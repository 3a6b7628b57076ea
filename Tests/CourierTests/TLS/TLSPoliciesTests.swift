import XCTest
@testable import Courier
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The rules without sockets: which policy a URL gets, curl's pin syntax, what a policy says.
final class TLSPoliciesTests: XCTestCase {
    private let pinA = PublicKeyPin(sha256: Data(repeating: 1, count: 32).base64EncodedString())!
    private let pinB = PublicKeyPin(sha256: Data(repeating: 2, count: 32).base64EncodedString())!

    func testAURLGetsItsHostAndPortPolicyThenItsHostsThenTheDefault() throws {
        // Given a default, a host policy and a host:port policy
        let byPort = TLSPolicy(pins: [pinA])
        let byHost = TLSPolicy(pins: [pinB])
        let fallback = TLSPolicy(trust: .system(adding: [.file("/ca.pem")]))
        let policies = TLSPolicies(default: fallback, hosts: ["API.example.com:8443": byPort, "api.example.com": byHost, "[::1]": byHost])
        let table: [(String, TLSPolicy?)] = [
            ("https://api.example.com:8443/x", byPort),
            ("https://API.EXAMPLE.COM:8443/", byPort),
            ("https://api.example.com/x", byHost),
            ("https://api.example.com:443/x", byHost),
            ("https://other.example.com/", fallback),
            ("https://[::1]:9/", byHost),
            // Plain http has no TLS to put a policy on.
            ("http://api.example.com:8443/x", nil),
        ]
        for (text, expected) in table {
            // When the URL is resolved / Then it gets the expected policy
            XCTAssertEqual(policies.policy(for: try XCTUnwrap(URL(string: text))), expected, text)
        }
    }

    func testWithoutPoliciesNothingApplies() throws {
        let url = try XCTUnwrap(URL(string: "https://example.com/"))
        XCTAssertTrue(TLSPolicies().isEmpty)
        XCTAssertNil(TLSPolicies().policy(for: url))
        XCTAssertNil(TLSPolicies(hosts: ["other.example.com": .system]).policy(for: url))
    }

    func testPinsTakeCurlsSyntax() {
        XCTAssertEqual(PublicKeyPin.list("sha256//\(pinA.sha256);sha256//\(pinB.sha256)"), [pinA, pinB])
        XCTAssertEqual(PublicKeyPin(curl: " sha256//\(pinA.sha256) "), pinA)
        // Not a pin: a key file (curl's other form), a short hash, an empty entry, another hash.
        for text in ["/etc/key.pem", "sha256//AAAA", "sha256//\(pinA.sha256);", "sha1//\(pinA.sha256)", ""] {
            XCTAssertNil(PublicKeyPin.list(text), text)
        }
    }

    func testADescriptionNamesTrustPinsAndIdentityButNeverThePassword() {
        let policy = TLSPolicy(
            trust: .only([.file("/ca.pem")]), pins: [pinA],
            clientIdentity: .init(certificateFile: "/c.pem", keyFile: "/k.pem", keyPassword: "hunter2"))
        XCTAssertEqual(
            policy.description,
            "only CA file /ca.pem, pins sha256//\(pinA.sha256), client certificate /c.pem, key /k.pem (key password set)")
        XCTAssertFalse("\(policy)".contains("hunter2"))
        XCTAssertFalse(String(reflecting: policy.clientIdentity!).contains("hunter2"))
        XCTAssertEqual(TLSPolicy.system.description, "system trust")
        XCTAssertTrue(TLSPolicy.insecureWithoutVerification.isInsecure)
        XCTAssertEqual(TLSPolicy.insecureWithoutVerification.description, "INSECURE: certificate verification disabled, system trust")
    }

    func testTheKitSupportsEveryOptionAPolicyNeedsHere() {
        // Given the kit installed by a manager on this toolchain (libcurl 7.88.1, OpenSSL 3)
        _ = SessionManager()
        // Then nothing a policy needs is missing
        XCTAssertNil(TLSEnforcer.unenforceableReason(needing: UInt32.max >> 24))
    }
}
