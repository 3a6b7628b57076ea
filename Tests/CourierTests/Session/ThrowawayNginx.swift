import CourierTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An nginx of its own for a test: TLS with `pki`'s `good` certificate and HTTP/2 on
/// 127.0.0.1, configured by `locations` (the body of its one `server` block), its files and logs
/// in a temporary directory. The one server in the tests that speaks HTTP/2 (CourierTestServer
/// speaks HTTP/1.1 only). Stopped and removed by ``stop()``.
///
/// nginx has no "port 0": a port the system just gave out is tried (`Loopback`), again on a clash.
final class ThrowawayNginx: Sendable {
    /// Why no server could be started: the tests skip with it.
    struct Unavailable: Error, CustomStringConvertible {
        let description: String
    }

    let port: Int
    let directory: URL
    private let process: Process

    /// nginx's binary, from `PATH` or `/usr/sbin` (Debian's `nginx-light`).
    static var binary: String? {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init) + ["/usr/sbin"]
        return path.map { $0 + "/nginx" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    init(pki: TLSTestPKI, locations: String) throws {
        guard let binary = Self.binary else {
            throw Unavailable(description: "nginx is not installed (looked in PATH and /usr/sbin): apt-get install nginx-light")
        }
        var template = Array("/tmp/courier-nginx-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw Unavailable(description: "cannot make a temporary directory") }
        directory = URL(fileURLWithPath: String(cString: made))
        var failure = ""
        for _ in 0..<8 {
            let candidate = try Loopback.freePort()
            let configuration = """
                daemon off;
                master_process off;
                worker_processes 1;
                pid \(directory.path)/nginx.pid;
                error_log \(directory.path)/error.log;
                events { worker_connections 64; }
                http {
                    access_log \(directory.path)/access.log;
                    client_body_temp_path \(directory.path)/body;
                    proxy_temp_path \(directory.path)/proxy;
                    fastcgi_temp_path \(directory.path)/fastcgi;
                    uwsgi_temp_path \(directory.path)/uwsgi;
                    scgi_temp_path \(directory.path)/scgi;
                    server {
                        listen 127.0.0.1:\(candidate) ssl http2;
                        ssl_certificate \(pki.path("good.pem"));
                        ssl_certificate_key \(pki.path("good.key"));
                        \(locations)
                    }
                }
                """
            let file = directory.appendingPathComponent("nginx.conf")
            try Data(configuration.utf8).write(to: file)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = ["-p", directory.path, "-c", file.path, "-e", directory.path + "/error.log"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            if Self.waitUntilListening(candidate, process: process) {
                self.port = candidate
                self.process = process
                return
            }
            process.terminate()
            process.waitUntilExit()
            failure = (try? String(contentsOf: directory.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
        }
        try? FileManager.default.removeItem(at: directory)
        throw Unavailable(description: "nginx did not listen: \(failure)")
    }

    deinit { stop() }

    /// `https://127.0.0.1:<port><pathAndQuery>`.
    func url(_ pathAndQuery: String) -> URL { URL(string: "https://127.0.0.1:\(port)\(pathAndQuery)")! }

    /// What nginx logged for each request (`access.log`, its combined format).
    var accessLog: String {
        (try? String(contentsOf: directory.appendingPathComponent("access.log"), encoding: .utf8)) ?? ""
    }

    /// Stops nginx and removes its directory.
    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    /// Waits (up to 10 s) until a connection to the port succeeds; nginx serves any number.
    private static func waitUntilListening(_ port: Int, process: Process) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, process.isRunning {
            if let connection = try? Loopback.connect(to: port) {
                close(connection)
                return true
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return false
    }
}
