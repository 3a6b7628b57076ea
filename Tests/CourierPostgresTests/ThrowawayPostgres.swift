import CourierTestSupport
import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// A PostgreSQL server of its own for a test class: `initdb` in a temporary directory, then
/// `postgres` listening only on a Unix socket in that directory (`-k dir -h ''`), password
/// authentication (scram-sha-256) for its one user. Stopped and removed by ``stop()``.
///
/// The binaries are looked for in `PATH`, then in `/usr/lib/postgresql/<version>/bin` (Debian's
/// `postgresql` package puts them there, off `PATH`). `initdb` refuses to run as root: as root,
/// the directory is given to the `postgres` user (or `nobody`) and both programs run as that user
/// through `setpriv`.
// @unchecked: immutable after init except `process`, which only the test class's setUp and tearDown touch.
final class ThrowawayPostgres: @unchecked Sendable {
    /// Why no server could be started: the tests skip with it.
    struct Unavailable: Error, CustomStringConvertible {
        let description: String
    }

    let directory: URL
    let password = "courier-test-Pa55word-\(UInt32.random(in: 100_000...999_999))"
    let user = "courier"
    private var process: Process?
    private let bin: URL

    /// A keyword/value connection string for `database`, password included.
    func connectionString(database: String = "postgres", password: String? = nil) -> String {
        "host=\(directory.path) port=5432 user=\(user) dbname=\(database) password=\(password ?? self.password) connect_timeout=10"
    }

    /// The directory holding `initdb` and `postgres`, if any.
    static func binaries() -> URL? {
        var candidates = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { URL(fileURLWithPath: String($0)) }
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        for version in versions.sorted(by: { (Int($0) ?? 0) > (Int($1) ?? 0) }) {
            candidates.append(URL(fileURLWithPath: "/usr/lib/postgresql/\(version)/bin"))
        }
        return candidates.first { directory in
            ["initdb", "postgres"].allSatisfy { FileManager.default.isExecutableFile(atPath: directory.appendingPathComponent($0).path) }
        }
    }

    init() throws {
        guard let bin = Self.binaries() else {
            throw Unavailable(
                description:
                    "PostgreSQL's initdb and postgres are not installed (looked in PATH and /usr/lib/postgresql/*/bin): apt-get install postgresql"
            )
        }
        self.bin = bin
        var template = Array("/tmp/courier-pg-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw Unavailable(description: "cannot make a temporary directory") }
        directory = URL(fileURLWithPath: String(cString: made))
        do {
            try start()
        } catch {
            stop()
            throw error
        }
    }

    /// The user the server runs as when the tests run as root.
    private var runAs: (uid: uid_t, gid: gid_t)? {
        guard geteuid() == 0 else { return nil }
        for name in ["postgres", "nobody"] {
            if let entry = getpwnam(name) { return (entry.pointee.pw_uid, entry.pointee.pw_gid) }
        }
        return nil
    }

    /// A process running `program` with `arguments`, as ``runAs`` when root.
    private func command(_ program: String, _ arguments: [String]) -> Process {
        let process = Process()
        let binary = bin.appendingPathComponent(program).path
        if let runAs {
            // setpriv execs the program itself: the process we hold is the server, and our signals reach it.
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=\(runAs.uid)", "--regid=\(runAs.gid)", "--clear-groups", "--", binary] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = arguments
        }
        process.currentDirectoryURL = directory
        return process
    }

    private func start() throws {
        let passwordFile = directory.appendingPathComponent("pwfile")
        try Data((password + "\n").utf8).write(to: passwordFile)
        let log = directory.appendingPathComponent("server.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        if let runAs {
            for path in [directory.path, passwordFile.path, log.path] { chown(path, runAs.uid, runAs.gid) }
        }
        let initdb = command(
            "initdb",
            [
                "-D", directory.appendingPathComponent("data").path, "-U", user, "--pwfile=\(passwordFile.path)", "-A", "scram-sha-256",
                "-E", "UTF8", "--no-locale", "--no-sync",
            ])
        let initLog = try FileHandle(forWritingTo: log)
        initdb.standardOutput = initLog
        initdb.standardError = initLog
        try initdb.run()
        initdb.waitUntilExit()
        guard initdb.terminationStatus == 0 else {
            throw Unavailable(description: "initdb failed (\(initdb.terminationStatus)): \(logText())")
        }
        try startServer()
    }

    private func startServer() throws {
        let log = directory.appendingPathComponent("server.log")
        let serverLog = try FileHandle(forWritingTo: log)
        _ = serverLog.seekToEndOfFile()
        let logged = logText().count
        let server = command(
            "postgres",
            [
                "-D", directory.appendingPathComponent("data").path, "-k", directory.path, "-h", "", "-c", "fsync=off",
                "-c", "max_connections=60", "-c", "shared_buffers=16MB",
            ])
        server.standardOutput = serverLog
        server.standardError = serverLog
        try server.run()
        process = server
        let socket = directory.appendingPathComponent(".s.PGSQL.5432").path
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if FileManager.default.fileExists(atPath: socket), logText().dropFirst(logged).contains("ready to accept connections") {
                return
            }
            guard server.isRunning else { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw Unavailable(description: "postgres did not start: \(logText())")
    }

    func logText() -> String {
        (try? String(contentsOf: directory.appendingPathComponent("server.log"), encoding: .utf8)) ?? ""
    }

    /// Fast shutdown (SIGINT: sessions are ended, nothing waits for clients), then the usual stop.
    func stop() {
        shutDown()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Stops the server and starts it again on the same data: every client's connection is cut.
    func restart() throws {
        shutDown()
        try startServer()
    }

    private func shutDown() {
        if let process, process.isRunning {
            kill(process.processIdentifier, SIGINT)
            let deadline = Date().addingTimeInterval(15)
            while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
            process.stopAndWait(grace: 5)
        }
        process = nil
    }
}
