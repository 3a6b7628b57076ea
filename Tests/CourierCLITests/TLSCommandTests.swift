import CourierTestSupport
import XCTest
import Courier
@testable import courier

/// curl's TLS options on `courier get`, `events` and `doctor`, over real TLS: a throwaway CA made
/// by `openssl` and `openssl s_server` on 127.0.0.1 (Docs/TLS.md, Docs/CommandLine.md).
final class TLSCommandTests: CommandLineTestCase {
    private var pki: TLSTestPKI!
    private var tlsServers: [OpenSSLServer] = []

    override func setUpWithError() throws {
        if let reason = TLSTestPKI.unavailableReason { throw XCTSkip(reason) }
        try super.setUpWithError()
        pki = try TLSTestPKI()
    }

    override func tearDownWithError() throws {
        tlsServers.forEach { $0.stop() }
        tlsServers = []
        pki = nil
        try super.tearDownWithError()
    }

    private func startServer(requireClientCertificate: Bool = false) throws -> OpenSSLServer {
        let server = try OpenSSLServer(pki: pki, requireClientCertificate: requireClientCertificate)
        try server.serve("ok")
        tlsServers.append(server)
        return server
    }

    // MARK: - get

    func testGetRefusesThePrivateCAAloneAndAcceptsItWithCacert() throws {
        // Given a server signed by the test CA
        let server = try startServer()
        // When courier get fetches it without --cacert
        let refused = try run(["get", server.url().absoluteString, "-o", "-"])
        // Then it fails as a TLS error naming the host
        XCTAssertEqual(refused.status, ExitCode.network, refused.err)
        XCTAssertTrue(refused.err.contains("TLS error: the server's certificate is not signed by a trusted authority"), refused.err)
        // When it is given the CA with --cacert
        let accepted = try run(["get", "--cacert", pki.caFile, server.url().absoluteString, "-o", "-"])
        // Then the body is on stdout
        XCTAssertEqual(accepted.status, ExitCode.success, accepted.err)
        XCTAssertEqual(accepted.out, "hello\n")
    }

    func testGetWithAWrongPinFailsBeforeTheServerSeesARequestAndARightPinPasses() throws {
        let server = try startServer()
        let wrong = try pki.pin(of: "client")
        // When the pin is wrong
        let refused = try run(["get", "--cacert", pki.caFile, "--pinnedpubkey", wrong, server.url().absoluteString, "-o", "-"])
        // Then it fails naming the pin set, and the server read nothing
        XCTAssertEqual(refused.status, ExitCode.network, refused.err)
        XCTAssertTrue(refused.err.contains("matches none of the pinned keys"), refused.err)
        XCTAssertTrue(refused.err.contains(wrong), refused.err)
        XCTAssertEqual(server.requestsServed, 0)
        // When one of the pins (curl's ;-separated list) is right
        let right = try run([
            "get", "--cacert", pki.caFile, "--pinnedpubkey=\(wrong);\(pki.pin(of: "good"))", server.url().absoluteString, "-o", "-",
        ])
        // Then it passes
        XCTAssertEqual(right.status, ExitCode.success, right.err)
        XCTAssertEqual(server.requestsServed, 1)
    }

    func testGetShowsAClientCertificateToAnMTLSServerAndNeverPrintsItsPassword() throws {
        // Given a server that requires a client certificate
        let server = try startServer(requireClientCertificate: true)
        // When courier get has none
        let without = try run(["get", "--cacert", pki.caFile, server.url().absoluteString, "-o", "-"])
        // Then the server refused it for want of one
        XCTAssertEqual(without.status, ExitCode.network, without.err)
        XCTAssertTrue(without.err.contains("requires a client certificate"), without.err)
        // When it has one, with an encrypted key and curl's --cert FILE:PASSWORD
        let with = try run([
            "get", "--cacert", pki.caFile, "--cert", "\(pki.clientCertificate):\(pki.keyPassword)", "--key", pki.clientEncryptedKey,
            server.url().absoluteString, "-o", "-", "-v",
        ])
        // Then it is accepted, and nothing printed holds the password
        XCTAssertEqual(with.status, ExitCode.success, with.err)
        XCTAssertEqual(with.out, "hello\n")
        XCTAssertFalse(with.err.contains(pki.keyPassword), with.err)
        // When the password (--pass) is wrong
        let wrong = try run([
            "get", "--cacert", pki.caFile, "--cert", pki.clientCertificate, "--key", pki.clientEncryptedKey, "--pass",
            "not-it-\(pki.keyPassword)",
            server.url().absoluteString, "-o", "-",
        ])
        // Then it fails without printing it
        XCTAssertNotEqual(wrong.status, ExitCode.success)
        XCTAssertFalse(wrong.err.contains(pki.keyPassword), wrong.err)
    }

    func testWithThePlatformKitOffAPolicyFailsBeforeAnythingIsSent() throws {
        // Given the kit turned off in the child's environment
        let server = try startServer()
        // When courier get is asked for a policy
        let result = try run(
            ["get", "--cacert", pki.caFile, server.url().absoluteString, "-o", "-"], environment: [PlatformFixes.environmentVariable: "off"]
        )
        // Then it refuses to send the request at all, and says why
        XCTAssertEqual(result.status, ExitCode.network, result.err)
        XCTAssertTrue(result.err.contains("cannot be enforced: Courier's platform kit is turned off"), result.err)
        XCTAssertEqual(result.out, "")
        XCTAssertEqual(server.requestsServed, 0)
    }

    func testInsecureSaysSoOnStderrEvenWhenQuiet() throws {
        let server = try startServer()
        let result = try run(["get", "-sk", server.url().absoluteString, "-o", "-"])
        XCTAssertEqual(result.status, ExitCode.success, result.err)
        XCTAssertTrue(result.err.contains("warning: --insecure"), result.err)
    }

    func testGetWithAListUsesTheTLSOptionsForEveryItem() throws {
        // Given a list of two files on the test CA's server
        let server = try startServer()
        try server.serve("second", body: "two\n")
        let list = logs.appendingPathComponent("tls-list.txt")
        try Data("\(server.url())\n\(server.url("second"))\n".utf8).write(to: list)
        // When courier get -i fetches it with --cacert
        let result = try run(["get", "-i", list.path, "--cacert", pki.caFile])
        // Then both are saved
        XCTAssertEqual(result.status, ExitCode.success, result.err)
        XCTAssertEqual(try String(contentsOf: directory.appendingPathComponent("second"), encoding: .utf8), "two\n")
        XCTAssertEqual(server.requestsServed, 2)
    }

    // MARK: - events and doctor

    func testEventsTakesTheSameTLSOptions() throws {
        let options = try XCTUnwrap(
            EventsCommand.Options.parse([
                "https://127.0.0.1:1/e", "--cacert", "/ca.pem", "--capath", "/certs", "--pinnedpubkey",
                "sha256//\(Data(count: 32).base64EncodedString())", "--cert", "/c.pem", "--key", "/k.pem", "--pass", "pw", "-k",
            ]))
        let policy = try XCTUnwrap(options.tls.policy)
        XCTAssertEqual(policy.trust, TLSPolicy.Trust(includesSystemAuthorities: true, authorities: [.file("/ca.pem")], directory: "/certs"))
        XCTAssertEqual(policy.pins.count, 1)
        XCTAssertEqual(policy.clientIdentity, .init(certificateFile: "/c.pem", keyFile: "/k.pem", keyPassword: "pw"))
        XCTAssertTrue(policy.isInsecure)
    }

    func testEventsRefusesAnUntrustedServerAndNamesIt() throws {
        let server = try startServer()
        let result = try run(["events", server.url("events").absoluteString, "--max-reconnects", "0"])
        XCTAssertEqual(result.status, ExitCode.network, result.err)
        XCTAssertTrue(result.err.contains("not signed by a trusted authority"), result.err)
    }

    func testTLSOptionMistakesAreUsageErrors() {
        for arguments in [
            ["--pinnedpubkey", "/key.pem"], ["--pinnedpubkey", "sha256//short"], ["--key", "/k.pem"], ["--pass", "pw"],
        ] {
            XCTAssertThrowsError(try GetCommand.Options.parse(["https://example.com/"] + arguments), "\(arguments)")
        }
        XCTAssertEqual(TLSOptions.splitCertificate("/a/c.pem:pw:with:colons").password, "pw:with:colons")
        XCTAssertEqual(TLSOptions.splitCertificate("C\\:\\cert.pem").file, "C:\\cert.pem")
        XCTAssertNil(TLSOptions.splitCertificate("/c.pem").password)
    }

    func testDoctorSaysWhichPolicyAppliesToAURL() throws {
        // When doctor is asked about a URL with get's TLS options
        let result = try run(
            [
                "doctor", "https://127.0.0.1:8443/x", "--cacert", pki.caFile, "--cert", "\(pki.clientCertificate):\(pki.keyPassword)",
                "--key", pki.clientEncryptedKey, "-k",
            ], environment: ["COLUMNS": "400"])
        // Then the TLS section names the policy, loudly insecure, enforced, and never the password
        XCTAssertEqual(result.status, ExitCode.success, result.out + result.err)
        XCTAssertTrue(result.out.contains("TLS policy (Docs/TLS.md)"), result.out)
        XCTAssertTrue(result.out.contains("INSECURE"), result.out)
        XCTAssertTrue(result.out.contains("certificate verification is DISABLED"), result.out)
        XCTAssertTrue(result.out.contains("yes, by Courier's platform kit"), result.out)
        XCTAssertFalse(result.out.contains(pki.keyPassword), result.out)
        // And without options it says the system's trust applies
        let plain = try run(["doctor", "https://example.com/"], environment: ["COLUMNS": "400"])
        XCTAssertTrue(plain.out.contains("none: the system's certificate authorities, full verification"), plain.out)
    }

    func testDoctorReportsAPolicyThatCannotBeEnforcedAsAProblem() throws {
        let result = try run(
            ["doctor", "https://127.0.0.1:8443/x", "--cacert", pki.caFile],
            environment: [PlatformFixes.environmentVariable: "off", "COLUMNS": "400"])
        XCTAssertEqual(result.status, ExitCode.failure, result.out)
        XCTAssertTrue(result.out.contains("enforced"), result.out)
        XCTAssertTrue(result.out.contains("problem:"), result.out)
        XCTAssertTrue(result.out.contains("platform kit is turned off"), result.out)
    }
}
