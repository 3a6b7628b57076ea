import Foundation

/// `openssl s_server` on 127.0.0.1, on a port the system picks, for the TLS tests.
///
/// In ``Mode/files`` (`-HTTP`) it answers `GET /name` with the file `name` of its own document
/// directory, which holds a complete HTTP response, and prints `FILE:name` for every request it
/// reads — so ``requestsServed`` says whether any request reached it. In ``Mode/raw`` it prints what
/// it receives (``output``), to see the bytes a client sent, and sends what is written to its
/// standard input (``send(_:)``); closing that input (``closeInput()``) stops it. The process
/// is stopped by its own PID (``stop()``, and at deinit).
public final class OpenSSLServer: Sendable {
    /// What the server does with a request.
    public enum Mode: Sendable {
        /// `-HTTP`: files holding whole HTTP responses, by name.
        case files
        /// No HTTP: what the client sends is printed; the TLS connection carries the standard input
        /// to the client.
        case raw
    }

    /// The port it listens on, on 127.0.0.1.
    public let port: Int
    private let process: Process
    private let documents: URL
    private let collected = Box<Data>()
    private let input = Pipe()

    /// Starts a server with certificate `certificate` of `pki` (`good`, `expired`, `wrong`), asking
    /// for a client certificate signed by the test CA when `requireClientCertificate`, with
    /// `extraArguments` for `s_server` (`-alpn h2,http/1.1`…).
    public init(
        pki: TLSTestPKI, certificate: String = "good", requireClientCertificate: Bool = false, mode: Mode = .files,
        extraArguments: [String] = []
    ) throws {
        guard let openssl = OpenSSL.path else { throw OpenSSL.Failure(description: "openssl is not installed") }
        documents = pki.directory.appendingPathComponent("www-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: documents, withIntermediateDirectories: true)
        process = Process()
        process.executableURL = URL(fileURLWithPath: openssl)
        var arguments = [
            "s_server", "-accept", "127.0.0.1:0", "-cert", pki.path("\(certificate).pem"), "-key", pki.path("\(certificate).key"),
        ]
        if mode == .files { arguments.append("-HTTP") }
        if requireClientCertificate { arguments += ["-Verify", "1", "-CAfile", pki.caFile] }
        process.arguments = arguments + extraArguments
        process.currentDirectoryURL = documents
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = input
        let collected = collected
        output.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if !data.isEmpty { collected.append(data) }
        }
        try process.run()
        let deadline = Date().addingTimeInterval(10)
        var found: Int?
        while found == nil, Date() < deadline, process.isRunning {
            found = Self.acceptedPort(in: Self.text(collected))
            if found == nil { Thread.sleep(forTimeInterval: 0.01) }
        }
        guard let found else {
            process.stopAndWait()
            throw OpenSSL.Failure(description: "openssl s_server did not start: \(Self.text(collected))")
        }
        port = found
    }

    private static func text(_ collected: Box<Data>) -> String {
        String(decoding: collected.all.reduce(Data(), +), as: UTF8.self)
    }

    deinit { stop() }

    /// `https://127.0.0.1:<port>/<path>`.
    public func url(_ path: String = "ok") -> URL { URL(string: "https://127.0.0.1:\(port)/\(path)")! }

    /// Writes the file `name`: a whole HTTP response with `status`, `headers` and `body`.
    public func serve(_ name: String, status: String = "200 OK", headers: [String: String] = [:], body: String = "hello\n") throws {
        var head = "HTTP/1.0 \(status)\r\nContent-Type: text/plain\r\nContent-Length: \(body.utf8.count)\r\n"
        for (field, value) in headers { head += "\(field): \(value)\r\n" }
        try Data((head + "\r\n" + body).utf8).write(to: documents.appendingPathComponent(name))
    }

    /// Everything the server printed so far.
    public var output: String { Self.text(collected) }

    /// How many requests the server read (its `FILE:` lines; ``Mode/files`` only).
    public var requestsServed: Int {
        output.components(separatedBy: "\n").filter { $0.hasPrefix("FILE:") }.count
    }

    /// Writes `data` to the server's standard input: in ``Mode/raw`` it goes to the client. Blocks
    /// while the pipe is full.
    public func send(_ data: Data) {
        input.fileHandleForWriting.write(data)
    }

    /// Closes the server's standard input: `s_server` then ends (the client's connection with it).
    public func closeInput() {
        try? input.fileHandleForWriting.close()
    }

    /// Whether the server process is still running.
    public var isRunning: Bool { process.isRunning }

    /// Stops the server (its own PID only) and waits for it (``Foundation/Process/stopAndWait(grace:)``).
    public func stop() {
        process.stopAndWait()
    }

    private static func acceptedPort(in output: String) -> Int? {
        guard let range = output.range(of: "ACCEPT 127.0.0.1:") else { return nil }
        let digits = output[range.upperBound...].prefix { $0.isNumber }
        return digits.isEmpty ? nil : Int(digits)
    }
}
