import CourierTestSupport
import XCTest
@testable import Courier
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// TLS policies over real TLS: a throwaway CA made by `openssl` for each test, and
/// `openssl s_server` on 127.0.0.1 (Docs/TLS.md). Every check is libcurl's, put on the transfer
/// by the platform kit.
final class TLSPolicyTests: TLSServerTestCase {
    // MARK: - Helpers

    private var trustingTestCA: TLSPolicy { TLSPolicy(trust: .system(adding: [.file(pki.caFile)])) }

    // MARK: - Trust

    func testTheSystemTrustAloneRefusesThePrivateCA() throws {
        // Given a server whose certificate the test CA signed, and a manager with no policy
        let server = try startServer()
        // When it is fetched
        let response = fetch(server.url(), with: makeManager(TLSPolicies()))
        // Then the certificate is untrusted, and the server read no request
        XCTAssertEqual(response?.error?.code, .tlsCertificateUntrusted, "\(String(describing: response?.error))")
        XCTAssertEqual(server.requestsServed, 0)
    }

    func testAddingTheCAAcceptsTheServer() throws {
        // Given the same server, and a policy that adds the test CA to the system's
        let server = try startServer()
        let manager = makeManager(TLSPolicies(default: trustingTestCA))
        // When it is fetched
        let response = fetch(server.url(), with: manager)
        // Then the body arrives, and the kit counted the transfer it put the policy on
        XCTAssertNil(response?.error)
        XCTAssertGreaterThan(PlatformFixes.status.tlsPoliciesApplied ?? 0, 0)
        XCTAssertEqual(response?.data.map { String(decoding: $0, as: UTF8.self) }, "hello\n")
        XCTAssertEqual(server.requestsServed, 1)
    }

    func testCAGivenAsPEMDataIsAcceptedToo() throws {
        // Given a policy trusting only the test CA, given as PEM data
        let server = try startServer()
        let pem = try Data(contentsOf: URL(fileURLWithPath: pki.caFile))
        let manager = makeManager(TLSPolicies(default: TLSPolicy(trust: .only([.pem(pem)]))))
        // When the server is fetched
        let response = fetch(server.url(), with: manager)
        // Then it is accepted
        XCTAssertNil(response?.error)
        XCTAssertEqual(response?.response?.statusCode, 200)
    }

    func testAnotherCAAloneDoesNotAcceptTheServer() throws {
        // Given a policy trusting only a CA that did not sign the server's certificate
        let server = try startServer()
        let manager = makeManager(TLSPolicies(default: TLSPolicy(trust: .only([.file(pki.otherCAFile)]))))
        // When it is fetched
        let response = fetch(server.url(), with: manager)
        // Then it is refused as untrusted
        XCTAssertEqual(response?.error?.code, .tlsCertificateUntrusted)
    }

    func testAnExpiredCertificateStaysRefusedWhateverCAIsAdded() throws {
        // Given a server whose certificate expired yesterday, signed by the test CA
        let server = try startServer(certificate: "expired")
        for trust in [TLSPolicy.Trust.system(adding: [.file(pki.caFile)]), .only([.file(pki.caFile), .file(pki.otherCAFile)])] {
            // When it is fetched with the CA added
            let response = fetch(server.url(), with: makeManager(TLSPolicies(default: TLSPolicy(trust: trust))))
            // Then it is refused as expired, naming the host
            XCTAssertEqual(response?.error?.code, .tlsCertificateExpired, "\(trust)")
            XCTAssertTrue(response?.error?.message.contains("host 127.0.0.1:\(server.port)") ?? false)
        }
        XCTAssertEqual(server.requestsServed, 0)
    }

    func testAWrongHostNameStaysRefusedWhateverCAIsAdded() throws {
        // Given a server whose valid certificate names wrong.example only
        let server = try startServer(certificate: "wrong")
        // When it is fetched with the CA added
        let response = fetch(server.url(), with: makeManager(TLSPolicies(default: trustingTestCA)))
        // Then it is refused for the host name
        XCTAssertEqual(response?.error?.code, .tlsHostNameMismatch)
        XCTAssertEqual(server.requestsServed, 0)
    }

    // MARK: - Pins

    func testARightPinPasses() throws {
        // Given the server's own key pinned, next to an unrelated pin (rotation)
        let server = try startServer()
        let pins = try XCTUnwrap(PublicKeyPin.list("sha256//YLh1dUR9y6Kja30RrAn7JKnbQG/uEtLMkBgFF2Fuihg=;" + pki.pin(of: "good")))
        let manager = makeManager(TLSPolicies(default: TLSPolicy(trust: .system(adding: [.file(pki.caFile)]), pins: pins)))
        // When it is fetched
        let response = fetch(server.url(), with: manager)
        // Then it passes
        XCTAssertNil(response?.error)
        XCTAssertEqual(server.requestsServed, 1)
    }

    func testAWrongPinFailsBeforeAnyRequestByteReachesTheServer() throws {
        // Given a trusted server and a pin of another key
        let server = try startServer()
        let wrong = try XCTUnwrap(PublicKeyPin(curl: pki.pin(of: "client")))
        let manager = makeManager(TLSPolicies(default: TLSPolicy(trust: .system(adding: [.file(pki.caFile)]), pins: [wrong])))
        // When it is fetched
        let response = fetch(server.url(), with: manager)
        // Then the pin does not match, the error names the host and the pin set
        let error = try XCTUnwrap(response?.error)
        XCTAssertEqual(error.code, .tlsPinMismatch)
        XCTAssertTrue(error.message.contains("host 127.0.0.1:\(server.port)"), error.message)
        XCTAssertTrue(error.message.contains(wrong.description), error.message)
        // And the server never read a request
        Thread.sleep(forTimeInterval: 0.2)
        XCTAssertEqual(server.requestsServed, 0, server.output)
    }

    // MARK: - Client certificates

    func testAnMTLSServerRefusesWithoutAClientCertificateAndAcceptsWithOne() throws {
        // Given a server that requires a client certificate from the test CA
        let server = try startServer(requireClientCertificate: true)
        // When it is fetched without one
        let without = fetch(server.url(), with: makeManager(TLSPolicies(default: trustingTestCA)))
        // Then it is refused: the server asked for a client certificate
        XCTAssertEqual(without?.error?.code, .tlsClientCertificateRequired, "\(String(describing: without?.error))")
        // When it is fetched with one
        var policy = trustingTestCA
        policy.clientIdentity = .init(certificateFile: pki.clientCertificate, keyFile: pki.clientKey)
        let with = fetch(server.url(), with: makeManager(TLSPolicies(default: policy)))
        // Then it is accepted
        XCTAssertNil(with?.error)
        XCTAssertEqual(with?.response?.statusCode, 200)
    }

    func testAnEncryptedClientKeyWorksWithItsPasswordWhichNeverAppears() throws {
        // Given an mTLS server, and a client key encrypted with a password
        let server = try startServer(requireClientCertificate: true)
        var policy = trustingTestCA
        policy.clientIdentity = .init(certificateFile: pki.clientCertificate, keyFile: pki.clientEncryptedKey, keyPassword: pki.keyPassword)
        let monitor = RecordingMonitor()
        // When it is fetched with the right password
        let response = fetch(server.url(), with: makeManager(TLSPolicies(default: policy), monitors: [monitor]))
        // Then it is accepted
        XCTAssertNil(response?.error)
        // When the password is wrong
        policy.clientIdentity?.keyPassword = "wrong-\(pki.keyPassword)"
        let refused = fetch(server.url(), with: makeManager(TLSPolicies(default: policy)))
        // Then it fails, and no message, description or timeline holds either password
        let error = try XCTUnwrap(refused?.error)
        let texts = [
            error.message, error.description, policy.description, "\(policy)", monitor.lines.joined(separator: "\n"),
            response?.metrics?.timeline() ?? "", refused?.metrics?.timeline() ?? "",
        ]
        for text in texts {
            XCTAssertFalse(text.contains(pki.keyPassword), text)
        }
    }

    // MARK: - Per host, and redirects

    func testARedirectToAHostWithAnotherPolicyGetsThatPolicy() throws {
        // Given server B requiring a client certificate, whose policy (by host:port) has one, and
        // server A, whose policy has none, redirecting to B
        let target = try startServer(requireClientCertificate: true)
        let origin = try startServer()
        try origin.serve("go", status: "302 Found", headers: ["Location": target.url().absoluteString], body: "")
        var withIdentity = trustingTestCA
        withIdentity.clientIdentity = .init(certificateFile: pki.clientCertificate, keyFile: pki.clientKey)
        let manager = makeManager(
            TLSPolicies(hosts: [
                "127.0.0.1:\(origin.port)": trustingTestCA, "127.0.0.1:\(target.port)": withIdentity,
            ]))
        // When A is fetched
        let response = fetch(origin.url("go"), with: manager)
        // Then B answered: its policy's client certificate was shown
        XCTAssertNil(response?.error, "\(String(describing: response?.error))")
        XCTAssertEqual(response?.response?.url?.port, target.port)
        XCTAssertEqual(target.requestsServed, 1)
    }

    func testARedirectToAHostWithAWrongPinIsRefusedBeforeItsRequest() throws {
        // Given A (trusted) redirecting to B, whose policy pins another key
        let target = try startServer()
        let origin = try startServer()
        try origin.serve("go", status: "302 Found", headers: ["Location": target.url().absoluteString], body: "")
        let wrongPin = try XCTUnwrap(PublicKeyPin(curl: pki.pin(of: "client")))
        let manager = makeManager(
            TLSPolicies(hosts: [
                "127.0.0.1:\(origin.port)": trustingTestCA,
                "127.0.0.1:\(target.port)": TLSPolicy(trust: .system(adding: [.file(pki.caFile)]), pins: [wrongPin]),
            ]))
        // When A is fetched
        let response = fetch(origin.url("go"), with: manager)
        // Then B's pin failed, the error names B, and B read no request
        XCTAssertEqual(response?.error?.code, .tlsPinMismatch)
        XCTAssertTrue(response?.error?.message.contains("host 127.0.0.1:\(target.port)") ?? false, "\(String(describing: response?.error))")
        XCTAssertEqual(origin.requestsServed, 1)
        XCTAssertEqual(target.requestsServed, 0)
    }

    func testTheTokenHeaderNeverGoesOnTheWire() throws {
        // Given a raw server that prints what it receives and never answers
        let server = try startServer(mode: .raw)
        var configuration = makeConfiguration()
        configuration.urlSessionConfiguration.timeoutIntervalForRequest = 1
        configuration.tls = TLSPolicies(default: trustingTestCA)
        let manager = SessionManager(configuration: configuration)
        addTeardownBlock { manager.invalidate(cancelingTasks: true) }
        // When a request goes to it (and times out)
        _ = fetch(server.url("seen"), with: manager)
        // Then the request line arrived, without Courier's private header
        let output = server.output
        XCTAssertTrue(output.contains("GET /seen HTTP/1.1"), output)
        XCTAssertFalse(output.lowercased().contains(TLSEnforcer.headerName.lowercased()), output)
    }

    // MARK: - How the policy reaches the transfer

    func testAManagerWithOnePolicyBindsItToItsSessionAndSendsNoHeader() throws {
        // Given a manager whose every request gets one policy (trusting only the test CA)
        let server = try startServer()
        let boundBefore = PlatformFixes.status.tlsSessionsBound ?? 0
        let monitor = RecordingMonitor()
        let policy = TLSPolicy(trust: .only([.file(pki.caFile)]))
        let manager = makeManager(TLSPolicies(default: policy), monitors: [monitor])
        // When a request is stamped for its session, and fetched
        let stamped = try manager.core.tls.stamped(URLRequest(url: server.url()))
        let response = fetch(server.url(), with: manager)
        // Then its URLSession was bound to the policy as it was made, the request names no token,
        // and the policy was still put on the transfer (only it trusts the test CA)
        XCTAssertTrue(manager.core.tls.isBound)
        XCTAssertGreaterThan(PlatformFixes.status.tlsSessionsBound ?? 0, boundBefore)
        XCTAssertNil(stamped.value(forHTTPHeaderField: TLSEnforcer.headerName))
        XCTAssertNil(response?.error, "\(String(describing: response?.error))")
        XCTAssertEqual(response?.response?.statusCode, 200)
        // And the attempt event still names the policy put on it
        XCTAssertEqual(monitor.attemptPolicies, [policy])
    }

    func testABoundSessionStillRefusesAServerItsPolicyRefuses() throws {
        // Given a manager whose one policy trusts only a CA that did not sign the server's certificate
        let server = try startServer()
        let manager = makeManager(TLSPolicies(default: TLSPolicy(trust: .only([.file(pki.otherCAFile)]))))
        XCTAssertTrue(manager.core.tls.isBound)
        // When it is fetched, with no header naming the policy
        let response = fetch(server.url(), with: manager)
        // Then the bound policy refused the server before any request reached it
        XCTAssertEqual(response?.error?.code, .tlsCertificateUntrusted)
        XCTAssertEqual(server.requestsServed, 0)
    }

    func testHostPoliciesAndAnUnconfirmedBindingGoByTheHeader() throws {
        // Given a manager with a policy for one host (its sessions cannot carry one policy for all)
        let server = try startServer()
        let manager = makeManager(TLSPolicies(hosts: ["127.0.0.1": trustingTestCA]))
        let stamped = try manager.core.tls.stamped(URLRequest(url: server.url()))
        // Then its session is not bound, its request names the token, and the policy is applied
        XCTAssertFalse(manager.core.tls.isBound)
        XCTAssertNotNil(stamped.value(forHTTPHeaderField: TLSEnforcer.headerName))
        XCTAssertNil(fetch(server.url(), with: manager)?.error)
        // And a one-policy manager's session whose binding was not confirmed stamps the header too
        let unconfirmed = SessionTLS(TLSEnforcer(TLSPolicies(default: trustingTestCA)), isBound: false)
        XCTAssertNotNil(try unconfirmed.stamped(URLRequest(url: server.url())).value(forHTTPHeaderField: TLSEnforcer.headerName))
        // And a binding window in which no URLSession was made confirms nothing
        let enforcer = TLSEnforcer(TLSPolicies(default: trustingTestCA))
        let (session, bound) = enforcer.makeSession { URLSession(configuration: .ephemeral) }
        session.invalidateAndCancel()
        XCTAssertTrue(bound)
        let madeBefore = URLSession(configuration: .ephemeral)
        defer { madeBefore.invalidateAndCancel() }
        XCTAssertFalse(enforcer.makeSession { madeBefore }.bound)
    }

    // MARK: - The opt-out

    func testTheInsecureOptOutAcceptsAnExpiredCertificateAndSaysSo() throws {
        // Given an expired certificate and the loudly named opt-out
        let server = try startServer(certificate: "expired")
        let monitor = RecordingMonitor()
        let manager = makeManager(TLSPolicies(default: .insecureWithoutVerification), monitors: [monitor])
        // When it is fetched
        let response = fetch(server.url(), with: manager)
        // Then it is accepted, and the attempt event reports the insecure policy
        XCTAssertNil(response?.error)
        XCTAssertEqual(monitor.attemptPolicies.first??.isInsecure, true)
        XCTAssertTrue(TLSPolicy.insecureWithoutVerification.description.hasPrefix("INSECURE"))
    }
}

/// Records attempt events' TLS policies and everything ``LoggingMonitor`` would write.
private final class RecordingMonitor: EventMonitor, @unchecked Sendable {  // `box` and `log` are thread-safe
    private let policies = Box<TLSPolicy?>()
    private let log = Box<String>()

    var attemptPolicies: [TLSPolicy?] { policies.all }
    var lines: [String] { log.all }

    func taskDidStartAttempt(_ task: any SessionTask, event: TaskAttemptEvent) {
        policies.append(event.tlsPolicy)
        log.append("\(event.request.allHTTPHeaderFields ?? [:]) \(String(describing: event.tlsPolicy))")
    }

    func taskDidComplete(_ task: any SessionTask, event: TaskCompletionEvent) {
        log.append(String(describing: event))
    }
}
