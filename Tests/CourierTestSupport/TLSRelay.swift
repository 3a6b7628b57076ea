import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A TLS front for a plain TCP server, for testing `wss://` without a TLS library in the tests:
/// `openssl s_server -quiet` on 127.0.0.1 whose standard input and output are one TCP connection to
/// the plain server at `targetPort`. `s_server` without `-HTTP` carries its standard input to the
/// TLS client and prints what the client sends; `-quiet` keeps its own messages out of that stream
/// and stops it from reading single letters of the input as commands, so the bytes pass unchanged
/// both ways with no pump of ours.
///
/// It serves **one** TLS connection (`-naccept 1`), and the plain server sees its connection
/// open at once. The ends follow each other: the plain server closing makes `s_server` read end of
/// file and exit (ending the TLS connection); the TLS client going makes `s_server` exit, which
/// closes the plain connection. Stopped by its own PID (``stop()``, and at deinit).
public final class TLSRelay: Sendable {
    /// The port the TLS side listens on, on 127.0.0.1.
    public let port: Int
    private let process: Process
    private let errors: Box<Data>

    /// Starts `s_server` with certificate `certificate` of `pki` (`good`, `expired`, `wrong`) in front
    /// of the plain TCP server at `127.0.0.1:targetPort`.
    public init(pki: TLSTestPKI, certificate: String = "good", targetPort: Int) throws {
        guard let openssl = OpenSSL.path else { throw OpenSSL.Failure(description: "openssl is not installed") }
        // `-quiet` also silences the "ACCEPT host:port" line that says which port the system gave,
        // so the port is picked here; another process may take it first, hence the retries.
        var lastFailure = ""
        for _ in 0..<8 {
            let candidate = try Loopback.freePort()
            let connection = try Loopback.connect(to: targetPort)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: openssl)
            process.arguments = [
                "s_server", "-quiet", "-naccept", "1", "-accept", "127.0.0.1:\(candidate)",
                "-cert", pki.path("\(certificate).pem"), "-key", pki.path("\(certificate).key"),
            ]
            let handle = FileHandle(fileDescriptor: connection, closeOnDealloc: false)
            process.standardInput = handle
            process.standardOutput = handle
            let errorPipe = Pipe()
            process.standardError = errorPipe
            let errors = Box<Data>()
            errorPipe.fileHandleForReading.readabilityHandler = { handle in
                let data = handle.availableData
                if !data.isEmpty { errors.append(data) }
            }
            do {
                try process.run()
            } catch {
                close(connection)
                throw error
            }
            // The child holds its own copies: ours would keep the plain connection open after it exits.
            close(connection)
            if Self.waitUntilListening(candidate, process: process) {
                self.port = candidate
                self.process = process
                self.errors = errors
                return
            }
            // Where it waited, for the failure's message.
            let state = Self.processState(process.processIdentifier)
            process.stopAndWait()
            lastFailure = String(decoding: errors.all.reduce(Data(), +), as: UTF8.self) + " [" + state + "]"
        }
        throw OpenSSL.Failure(description: "openssl s_server did not listen: \(lastFailure)")
    }

    deinit { stop() }

    /// `wss://127.0.0.1:<port><pathAndQuery>`.
    public func url(_ pathAndQuery: String = "/") -> URL {
        URL(string: "wss://127.0.0.1:\(port)\(pathAndQuery)")!
    }

    /// What `s_server` wrote to its standard error (its TLS failures, with `-quiet` too).
    public var errorOutput: String { String(decoding: errors.all.reduce(Data(), +), as: UTF8.self) }

    /// Whether `s_server` still runs (it exits when either connection ends).
    public var isRunning: Bool { process.isRunning }

    /// Stops `s_server` (its own PID only) and waits for it.
    public func stop() {
        process.stopAndWait()
    }

    /// The kernel's word on a process (`/proc`: its state and where it sleeps), for a failure's message.
    private static func processState(_ pid: Int32) -> String {
        let read = { (name: String) in
            (try? String(contentsOfFile: "/proc/\(pid)/\(name)", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
        }
        let state = read("status").split(separator: "\n").first { $0.hasPrefix("State:") }.map(String.init) ?? "State: ?"
        return "\(state), wchan \(read("wchan"))"
    }

    /// Waits (up to 15 s) until `/proc/net/tcp` shows 127.0.0.1:`port` listening. A probe
    /// connection cannot tell: it would be the one connection `-naccept 1` serves. The line is
    /// searched for in the raw bytes: late in the full suite the table holds thousands of
    /// TIME_WAIT lines.
    private static func waitUntilListening(_ port: Int, process: Process) -> Bool {
        // local address, remote 0.0.0.0:0, state 0A (LISTEN)
        let listening = Data(String(format: "0100007F:%04X 00000000:0000 0A", port).utf8)
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline, process.isRunning {
            if readToEnd("/proc/net/tcp").range(of: listening) != nil { return true }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return false
    }

    /// All of a file, read to its end. `FileManager.contents(atPath:)` returns only the first `read` of a file
    /// whose size the kernel reports as 0 (one page, 27 lines of `/proc/net/tcp`, measured), so once
    /// enough sockets came before the new listener it was never seen: that was CI's "did not listen".
    public static func readToEnd(_ path: String) -> Data {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return Data() }
        defer { close(descriptor) }
        var contents = Data()
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                contents.append(contentsOf: chunk[0..<count])
            } else if count < 0, errno == EINTR {
                continue
            } else {
                return contents
            }
        }
    }
}
