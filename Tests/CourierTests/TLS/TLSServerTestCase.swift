import CourierTestSupport
import XCTest
@testable import Courier
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A test case over real TLS: a throwaway CA made by `openssl` for each test, `openssl s_server`
/// on 127.0.0.1 (stopped after the test), and managers with TLS policies (Docs/TLS.md). Skipped
/// where `openssl` is missing.
class TLSServerTestCase: CourierTestCase {
    var pki: TLSTestPKI!
    private var servers: [OpenSSLServer] = []

    override func setUpWithError() throws {
        if let reason = TLSTestPKI.unavailableReason { throw XCTSkip(reason) }
        try super.setUpWithError()
        pki = try TLSTestPKI()
    }

    override func tearDownWithError() throws {
        servers.forEach { $0.stop() }
        servers = []
        pki = nil
        try super.tearDownWithError()
    }

    /// A server answering "ok" with the PKI's `certificate`, stopped after the test.
    func startServer(
        certificate: String = "good", requireClientCertificate: Bool = false, mode: OpenSSLServer.Mode = .files
    ) throws -> OpenSSLServer {
        let server = try OpenSSLServer(
            pki: pki, certificate: certificate, requireClientCertificate: requireClientCertificate, mode: mode)
        try server.serve("ok")
        servers.append(server)
        return server
    }

    /// A manager with `policies` (and `monitors`), invalidated after the test.
    func makeManager(_ policies: TLSPolicies, monitors: [any EventMonitor] = []) -> SessionManager {
        var configuration = makeConfiguration()
        configuration.tls = policies
        configuration.eventMonitors = monitors
        let manager = SessionManager(configuration: configuration)
        addTeardownBlock { manager.invalidate(cancelingTasks: true) }
        return manager
    }

    /// A GET of `url` through `manager`.
    func fetch(_ url: URL, with manager: SessionManager) -> DataResponse<Data>? {
        wait { finish in manager.dataTask(with: URLRequest(url: url), completion: finish).resume() }
    }
}
