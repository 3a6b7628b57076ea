import CourierTestSupport
import XCTest
@testable import Courier
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a new TLS connection costs in CA certificates (Docs/TLS.md, "What a connection costs"):
/// a policy's CAs reach libcurl as a sealed in-memory file, so libcurl can keep the parsed store;
/// libcurl's built-in CA directory is left out only where the CA file has every certificate in it.
/// Speed itself is measured in `courier-bench` (Docs/Performance.md), never here.
final class CAStoreTests: TLSServerTestCase {
    /// This process's open in-memory files made for policies: what each holds.
    private func policyMemoryFiles() -> [Data] {
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return descriptors.compactMap { name -> Data? in
            let path = "/proc/self/fd/\(name)"
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: path),
                target.hasPrefix("/memfd:courier-tls-ca")
            else { return nil }
            return FileManager.default.contents(atPath: path)
        }
    }

    // MARK: - A policy's CAs as a file

    func testAPolicysCAsGoToLibcurlAsASealedInMemoryFileAndAreStillEnforced() throws {
        // Given a server signed by the test CA, and a policy trusting only that CA as PEM data
        let server = try startServer()
        let pem = try Data(contentsOf: URL(fileURLWithPath: pki.caFile))
        let before = PlatformFixes.status.caStore?.policyFilesInMemory ?? 0
        let manager = makeManager(TLSPolicies(default: TLSPolicy(trust: .only([.pem(pem)]))))
        // When it is fetched twice (s_server closes each connection: two handshakes)
        let first = fetch(server.url(), with: manager)
        let second = fetch(server.url(), with: manager)
        // Then both arrive, and the CA went into one in-memory file holding exactly the PEM,
        // sealed against writes (F_GET_SEALS, F_SEAL_WRITE: Linux's values)
        XCTAssertNil(first?.error)
        XCTAssertNil(second?.error)
        XCTAssertEqual(PlatformFixes.status.caStore?.policyFilesInMemory, before + 1)
        let files = policyMemoryFiles().filter { $0.range(of: pem) != nil }
        XCTAssertEqual(files.count, 1)
        let descriptor = open(try XCTUnwrap(memoryFilePath(holding: pem)), O_RDONLY)
        defer { close(descriptor) }
        let getSeals: Int32 = 1024 + 10, sealWrite: Int32 = 0x0008
        XCTAssertEqual(fcntl(descriptor, getSeals) & sealWrite, sealWrite)

        // And when a policy trusting only another CA meets the same server, it is refused
        let other = fetch(server.url(), with: makeManager(TLSPolicies(default: TLSPolicy(trust: .only([.file(pki.otherCAFile)])))))
        XCTAssertEqual(other?.error?.code, .tlsCertificateUntrusted, "\(String(describing: other?.error))")
        XCTAssertEqual(server.requestsServed, 2)
    }

    private func memoryFilePath(holding pem: Data) -> String? {
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return descriptors.map { "/proc/self/fd/\($0)" }.first { path in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: path),
                target.hasPrefix("/memfd:courier-tls-ca"), let data = FileManager.default.contents(atPath: path)
            else { return false }
            return data == pem + Data([0x0A])
        }
    }

    func testSystemTrustPlusACAIsOneFileThatHoldsTheSystemsFileWhole() throws {
        // Given libcurl's built-in CA file, and a policy adding the test CA to the system's
        let status = PlatformFixes.install()
        let systemFile = try XCTUnwrap(status.caStore?.file, "libcurl names no built-in CA file here")
        let system = try XCTUnwrap(FileManager.default.contents(atPath: systemFile))
        let server = try startServer()
        let ca = try Data(contentsOf: URL(fileURLWithPath: pki.caFile))
        // When the server is fetched
        let response = fetch(server.url(), with: makeManager(TLSPolicies(default: TLSPolicy(trust: .system(adding: [.file(pki.caFile)])))))
        // Then it is accepted, and the policy's in-memory file has the system's file and the CA
        XCTAssertNil(response?.error)
        XCTAssertEqual(policyMemoryFiles().filter { $0.range(of: ca) != nil && $0.range(of: system) != nil }.count, 1)
    }

    // MARK: - libcurl's built-in CA directory

    func testATransferWithoutAPolicyLeavesOutABuiltInDirectoryTheFileCovers() throws {
        let store = try XCTUnwrap(PlatformFixes.install().caStore)
        guard store.cache == .directoryLeftOut else {
            throw XCTSkip("the kit keeps this system's CA directory (\(store.cache.rawValue)): nothing is left out")
        }
        // Given a server and a manager with no policy
        let server = try startServer()
        let before = PlatformFixes.status.caStore?.directoriesLeftOut ?? 0
        // When it is fetched (the system does not trust the test CA: refused, as before)
        let response = fetch(server.url(), with: makeManager(TLSPolicies(default: nil)))
        // Then the transfer started without the directory, and the trust decision is unchanged
        XCTAssertEqual(response?.error?.code, .tlsCertificateUntrusted, "\(String(describing: response?.error))")
        XCTAssertGreaterThan(PlatformFixes.status.caStore?.directoriesLeftOut ?? 0, before)
    }

    func testADirectoryIsCoveredOnlyWhenTheFileHasEveryCertificateInItAndNothingElse() throws {
        // Given the test CA and another CA, and a hash directory laid out as OpenSSL reads it
        let ca = try String(contentsOfFile: pki.caFile, encoding: .utf8)
        let other = try String(contentsOfFile: pki.otherCAFile, encoding: .utf8)
        let directory = pki.directory.appendingPathComponent("hash-dir")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        func put(_ name: String, _ text: String) throws {
            try Data(text.utf8).write(to: directory.appendingPathComponent(name))
        }
        func remove(_ name: String) throws { try FileManager.default.removeItem(at: directory.appendingPathComponent(name)) }
        try put("0a1b2c3d.0", ca)
        try put("README", "not read by OpenSSL")
        // Re-wrapped lines are the same certificate
        let rewrapped = Data(ca.replacingOccurrences(of: "\n", with: "\r\n").utf8)
        let both = Data((other + ca).utf8)

        // Then a file holding the CA covers it, one without it does not
        XCTAssertTrue(PlatformFixes.pem(rewrapped, coversDirectory: directory.path))
        XCTAssertFalse(PlatformFixes.pem(Data(other.utf8), coversDirectory: directory.path))
        // And a certificate the file lacks, a CRL, or a TRUSTED CERTIFICATE in the directory uncovers it
        try put("ffffffff.0", other)
        XCTAssertTrue(PlatformFixes.pem(both, coversDirectory: directory.path))
        try put("0a1b2c3d.1", ca.replacingOccurrences(of: "CERTIFICATE-----", with: "TRUSTED CERTIFICATE-----"))
        XCTAssertFalse(PlatformFixes.pem(both, coversDirectory: directory.path))
        try remove("0a1b2c3d.1")
        try put("0a1b2c3d.r0", "-----BEGIN X509 CRL-----\n-----END X509 CRL-----\n")
        XCTAssertFalse(PlatformFixes.pem(both, coversDirectory: directory.path))
        try remove("0a1b2c3d.r0")
        XCTAssertTrue(PlatformFixes.pem(both, coversDirectory: directory.path))
        // And a directory that cannot be read is never covered
        XCTAssertFalse(PlatformFixes.pem(both, coversDirectory: directory.appendingPathComponent("missing").path))
    }
}
