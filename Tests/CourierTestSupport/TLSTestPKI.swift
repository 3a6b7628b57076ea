import Foundation

/// A throwaway certificate authority and the certificates the TLS tests need, made with the
/// system's `openssl` in a private temporary directory (Docs/TLS.md, "Tests").
///
/// - `good`: valid for `127.0.0.1` and `localhost`;
/// - `expired`: valid for the same names, but its validity ended yesterday;
/// - `wrongName`: valid, for `wrong.example` only;
/// - `client`: a client certificate; its key also exists encrypted with ``keyPassword``.
public final class TLSTestPKI: Sendable {
    /// Why the tests cannot run here, or `nil` when `openssl` is available.
    public static var unavailableReason: String? {
        OpenSSL.path == nil ? "openssl is not installed (the TLS tests make their CA with it)" : nil
    }

    /// The private temporary directory holding the keys and certificates (removed at deinit).
    public let directory: URL
    /// The password of ``clientEncryptedKey``.
    public let keyPassword = "s3cret-Key-Passw0rd"

    /// Makes the CA and the certificates; throws when `openssl` fails.
    public init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try openssl([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "ca.key", "-out", "ca.pem",
            "-days", "2",
            "-subj", "/CN=Courier Test CA", "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        ])
        try issue("good", names: "IP:127.0.0.1,DNS:localhost", days: "2")
        try issue("expired", names: "IP:127.0.0.1,DNS:localhost", days: "-1")
        try issue("wrong", names: "DNS:wrong.example", days: "2")
        try issue("client", names: "DNS:courier-client", days: "2")
        try openssl(["pkey", "-in", "client.key", "-aes256", "-passout", "pass:\(keyPassword)", "-out", "client-encrypted.key"])
        // A second CA nobody trusts, for "whatever CA is added".
        try openssl([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "other-ca.key", "-out",
            "other-ca.pem", "-days", "2",
            "-subj", "/CN=Another CA",
        ])
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    /// The path of file `name` in ``directory``.
    public func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
    /// The test CA's certificate (`ca.pem`).
    public var caFile: String { path("ca.pem") }
    /// The certificate of a second CA that nothing trusts (`other-ca.pem`).
    public var otherCAFile: String { path("other-ca.pem") }
    /// The client certificate (`client.pem`).
    public var clientCertificate: String { path("client.pem") }
    /// The client certificate's key, unencrypted (`client.key`).
    public var clientKey: String { path("client.key") }
    /// The client key encrypted with ``keyPassword`` (`client-encrypted.key`).
    public var clientEncryptedKey: String { path("client-encrypted.key") }

    /// The `sha256//…` pin of certificate `name`'s public key.
    public func pin(of name: String) throws -> String {
        let key = try openssl(["x509", "-in", "\(name).pem", "-pubkey", "-noout"])
        let der = try openssl(["pkey", "-pubin", "-outform", "der"], input: key)
        let digest = try openssl(["dgst", "-sha256", "-binary"], input: der)
        return "sha256//" + digest.base64EncodedString()
    }

    private func issue(_ name: String, names: String, days: String) throws {
        try openssl([
            "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "\(name).key", "-out", "\(name).csr",
            "-subj", "/CN=\(name)",
        ])
        try Data("subjectAltName=\(names)\nbasicConstraints=CA:FALSE\n".utf8).write(to: directory.appendingPathComponent("\(name).ext"))
        try openssl([
            "x509", "-req", "-in", "\(name).csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", "\(name).pem", "-days", days, "-extfile", "\(name).ext",
        ])
    }

    @discardableResult
    private func openssl(_ arguments: [String], input: Data? = nil) throws -> Data {
        try OpenSSL.run(arguments, in: directory, input: input)
    }
}

/// The `openssl` command.
enum OpenSSL {
    static let path: String? = {
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        return directories.map { "\($0)/openssl" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Runs `openssl arguments` in `directory` and returns its standard output.
    static func run(_ arguments: [String], in directory: URL, input: Data?) throws -> Data {
        guard let path else { throw Failure(description: "openssl is not installed") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.currentDirectoryURL = directory
        let output = Pipe()
        let errors = Pipe()
        let standardInput = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = standardInput
        try process.run()
        if let input { standardInput.fileHandleForWriting.write(input) }
        try standardInput.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "openssl \(arguments.joined(separator: " ")) failed: \(String(decoding: message, as: UTF8.self))")
        }
        return data
    }
}
