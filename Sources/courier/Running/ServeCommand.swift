import Foundation
import Courier
import CourierTestServer

/// `courier serve`: runs the test server until SIGINT or SIGTERM.
struct ServeCommand {
    let port: UInt16
    let root: URL?

    /// `--port <n>` (default 0: a free one) and `--root <dir>`, the last of each counting.
    init(_ scanned: ArgumentScanner.Scanned) throws(UsageError) {
        if let extra = scanned.positionals.first { throw UsageError(message: "serve takes no arguments, not '\(extra)'") }
        let values = Dictionary(scanned.values, uniquingKeysWith: { _, last in last })
        let text = values["--port"] ?? "0"
        guard let port = UInt16(text) else { throw UsageError(message: "--port takes a port number 0-65535, not '\(text)'") }
        self.port = port
        if let path = values["--root"] {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw UsageError(message: "--root \(path) is not a directory")
            }
            root = URL(fileURLWithPath: path)
        } else {
            root = nil
        }
    }

    func run() throws -> Int32 {
        // Blocked before the server starts its threads, which inherit the mask: a SIGINT that
        // comes at any moment from here on waits for `sigwaitinfo` below. (Ignoring the signals
        // and then arming dispatch sources lost one that came in between, and the command ran on.)
        var stopSignals = sigset_t()
        sigemptyset(&stopSignals)
        sigaddset(&stopSignals, SIGINT)
        sigaddset(&stopSignals, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &stopSignals, nil)
        let server = try TestServer(port: port, root: root)
        // Written unbuffered so a script reading our stdout sees the address at once.
        FileHandle.standardOutput.write(
            Data("CourierTestServer listening on \(server.baseURL.absoluteString) (Ctrl-C to stop)\n".utf8))
        Self.waitForTermination(&stopSignals)
        server.stop()
        ProgressPrinter.writeToStandardError("courier: stopped after \(server.requests.count) requests\n")
        return ExitCode.success
    }

    /// Blocks until one of `signals` (blocked in every thread of this process) arrives.
    private static func waitForTermination(_ signals: inout sigset_t) {
        var info = siginfo_t()
        while sigwaitinfo(&signals, &info) == -1 && errno == EINTR {}
    }
}
