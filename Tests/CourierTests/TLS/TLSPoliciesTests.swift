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

    func testAnOptionLibcurlLacksIsNamedAsTheReasonNotToSend() throws {
        // Given a policy with pins and a client certificate, and a libcurl without pinning
        let options = try TLSRegistry.makeOptions(
            TLSPolicy(
                pins: [pinA], clientIdentity: .init(certificateFile: #filePath, keyFile: #filePath, keyPassword: "x")))
        let all = UInt32.max >> 24
        let withoutPins = all & ~(UInt32(1) << 3)
        // Then the reason names the missing option, and only it
        XCTAssertEqual(
            TLSEnforcer.missingOptions(needing: options.needed, supported: withoutPins),
            "this libcurl does not support CURLOPT_PINNEDPUBLICKEY (public-key pins)")
        XCTAssertNil(TLSEnforcer.missingOptions(needing: options.needed, supported: all))
        // And a policy without pins does not need pinning
        let plain = try TLSRegistry.makeOptions(TLSPolicy())
        XCTAssertNil(TLSEnforcer.missingOptions(needing: plain.needed, supported: withoutPins))
    }

    func testTheKitSupportsEveryOptionAPolicyNeedsHere() {
        // Given the kit installed by a manager on this toolchain (libcurl 7.88.1, OpenSSL 3)
        _ = SessionManager()
        // Then nothing a policy needs is missing
        XCTAssertNil(TLSEnforcer.unenforceableReason(needing: UInt32.max >> 24))
    }
}

/// What a policy becomes for the kit, without sockets.
final class TLSRegistryTests: XCTestCase {
    private let pem = Data("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n".utf8)

    func testAddingACAKeepsTheSystemsCAFileInTheBlob() throws {
        // Given the system's CA file (libcurl loads a CA blob instead of its CA file)
        let system = try XCTUnwrap(PlatformReport.CertificateAuthorities.resolve(libcurl: .loaded()).file?.path)
        let contents = try XCTUnwrap(FileManager.default.contents(atPath: system))
        // When a policy adds a CA to the system's
        let options = try TLSRegistry.makeOptions(TLSPolicy(trust: .system(adding: [.pem(pem)])))
        // Then the blob holds the system's file, then the CA
        let blob = try XCTUnwrap(options.caBlob)
        XCTAssertEqual(blob.prefix(contents.count), contents)
        XCTAssertNotNil(blob.range(of: pem))
    }

    func testOnlyYourCAsLeaveTheSystemsOut() throws {
        let options = try TLSRegistry.makeOptions(TLSPolicy(trust: .only([.pem(pem)])))
        XCTAssertEqual(options.caBlob, pem + Data([0x0A]))
    }

    func testUnreadableFilesAndNonPEMAreRefusedBeforeAnythingIsSent() {
        for policy in [
            TLSPolicy(trust: .system(adding: [.file("/nonexistent/ca.pem")])),
            TLSPolicy(trust: .only([.pem(Data("not a certificate".utf8))])),
            TLSPolicy(clientIdentity: .init(certificateFile: "/nonexistent/client.pem")),
        ] {
            XCTAssertThrowsError(try TLSRegistry.makeOptions(policy), "\(policy)") { error in
                XCTAssertEqual((error as? CourierError)?.code, .tlsPolicyUnenforceable)
            }
        }
    }
}

/// The opt-out is never quiet: what monitors and logs see of a stamped request.
final class TLSReportingTests: XCTestCase {
    func testAnAttemptUnderTheInsecurePolicyIsAWarningThatNamesIt() throws {
        // Given a manager whose policy turns verification off, and a request stamped by it
        var configuration = SessionManager.Configuration()
        configuration.tls = TLSPolicies(default: .insecureWithoutVerification)
        let manager = SessionManager(configuration: configuration)
        defer { manager.invalidate() }
        let secure = URLRequest(url: try XCTUnwrap(URL(string: "https://example.com/")))
        let stamped = try manager.core.tls.stamped(secure)
        // When its attempt event is looked at
        let event = TaskAttemptEvent(number: 0, kind: .initial, request: stamped, tlsPolicy: manager.core.tls.policy(for: stamped))
        // Then it names the insecure policy, and LoggingMonitor logs it as a warning
        XCTAssertEqual(event.tlsPolicy?.isInsecure, true)
        XCTAssertEqual(LoggingMonitor.level(of: .attemptStarted(event)), .warning)
        // And a plain http request carries no policy at all
        let plain = try manager.core.tls.stamped(URLRequest(url: try XCTUnwrap(URL(string: "http://example.com/"))))
        XCTAssertNil(plain.value(forHTTPHeaderField: TLSEnforcer.headerName))
        XCTAssertNil(manager.core.tls.policy(for: plain))
        XCTAssertEqual(LoggingMonitor.level(of: .attemptStarted(TaskAttemptEvent(number: 0, kind: .initial, request: plain))), .debug)
    }

    func testADoctorReportSaysWhichPolicyAppliesAndThatItIsEnforced() throws {
        // Given the kit installed (as every manager and `courier doctor` do first)
        PlatformFixes.install()
        let url = try XCTUnwrap(URL(string: "https://api.example.com/x?token=secret"))
        let pin = try XCTUnwrap(PublicKeyPin(sha256: Data(repeating: 7, count: 32).base64EncodedString()))
        let report = PlatformReport.current(for: url, tls: TLSPolicies(hosts: ["api.example.com": TLSPolicy(pins: [pin])]))
        let tls = try XCTUnwrap(report.tlsPolicy)
        XCTAssertEqual(tls.policy, "system trust, pins \(pin)")
        XCTAssertFalse(tls.url.contains("secret"))
        XCTAssertNil(tls.unenforceableReason)
        XCTAssertFalse(tls.isInsecure)
        XCTAssertNil(PlatformReport.current(for: url).tlsPolicy?.policy)
    }
}
