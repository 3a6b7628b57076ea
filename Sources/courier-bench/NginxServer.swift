import Foundation

/// An nginx started for `segmented`'s `nginx` case: on 127.0.0.1 at a free port, with its
/// configuration, logs and the file in a directory of its own, one `location` per `limit_rate`
/// and one with `limit_conn`. nginx paces each connection in bursts driven by its timers (a
/// `sendfile_max_chunk` at once, then silence), unlike the test server's smooth pacing: the
/// most common real server a split download meets.
final class NginxServer {
    /// The paths the file is served at.
    static func ratePath(_ rate: Int, file: String) -> String { "/rate-\(rate)/\(file)" }
    static func connectionLimitPath(_ limit: Int, rate: Int, file: String) -> String { "/conns-\(limit)-rate-\(rate)/\(file)" }

    let port: UInt16
    let directory: URL
    private let child: ChildProcess
    private let accessLog: URL

    /// Writes `data` as `file` and the configuration into `directory`, starts `executable` and
    /// waits until it listens. Throws a sentence saying why it could not.
    init(
        executable: String, directory: URL, file: String, data: Data, rates: [Int],
        connectionLimit: (limit: Int, rate: Int)?
    ) throws {
        self.directory = directory
        let root = directory.appendingPathComponent("www", isDirectory: true)
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("temp"), withIntermediateDirectories: true)
        try data.write(to: root.appendingPathComponent(file))
        guard let port = Self.freePort() else { throw NginxError("no free port on 127.0.0.1") }
        self.port = port
        accessLog = directory.appendingPathComponent("access.log")
        let configuration = directory.appendingPathComponent("nginx.conf")
        try Self.configuration(port: port, directory: directory.path, rates: rates, connectionLimit: connectionLimit)
            .write(to: configuration, atomically: true, encoding: .utf8)
        child = try ChildProcess(
            executable, ["-c", configuration.path, "-p", directory.path + "/"], log: directory.appendingPathComponent("nginx.out"))
        // Listening within 5 s, or it said why in its error log.
        let deadline = MonotonicClock.seconds() + 5
        while !Self.accepts(port) {
            guard child.isRunning, MonotonicClock.seconds() < deadline else {
                child.kill()
                _ = child.waitAfterKill()
                let log = (try? String(contentsOf: directory.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
                throw NginxError("nginx did not start: \(log.split(separator: "\n").last ?? "no error log")")
            }
            usleep(20_000)
        }
    }

    /// Stops nginx (its files stay for the caller to remove).
    func stop() {
        guard child.isRunning else { return }
        child.kill()
        _ = child.waitAfterKill()
    }

    deinit { stop() }

    /// The configuration: the file in `directory`/www at `ratePath` for each rate and at
    /// `connectionLimitPath` for the limit; logs, pid and temporary files in `directory`; in the
    /// foreground, one process. The access log says, per response: status, body bytes, path.
    static func configuration(port: UInt16, directory: String, rates: [Int], connectionLimit: (limit: Int, rate: Int)?) -> String {
        let root = "\(directory)/www/"
        var locations = rates.map { rate in
            "        location \(ratePath(rate, file: "").dropLast()) { alias \"\(root)\"; limit_rate \(rate); }"
        }
        if let (limit, rate) = connectionLimit {
            locations.append(
                "        location \(connectionLimitPath(limit, rate: rate, file: "").dropLast()) "
                    + "{ alias \"\(root)\"; limit_rate \(rate); limit_conn bench_conns \(limit); }")
        }
        let temp = "\(directory)/temp"
        return """
            daemon off;
            master_process off;
            worker_processes 1;
            pid "\(directory)/nginx.pid";
            error_log "\(directory)/error.log" warn;
            events { worker_connections 1024; }
            http {
                log_format courier_bench '$status $body_bytes_sent $uri';
                access_log "\(directory)/access.log" courier_bench;
                client_body_temp_path "\(temp)";
                proxy_temp_path "\(temp)";
                fastcgi_temp_path "\(temp)";
                uwsgi_temp_path "\(temp)";
                scgi_temp_path "\(temp)";
                default_type application/octet-stream;
                sendfile on;
                limit_conn_zone $binary_remote_addr zone=bench_conns:1m;
                server {
                    listen 127.0.0.1:\(port);
            \(locations.joined(separator: "\n"))
                }
            }

            """
    }

    /// Where the access log ends now: a run's traffic is what is logged after it.
    func logOffset() -> UInt64 {
        ((try? FileManager.default.attributesOfItem(atPath: accessLog.path)[.size]) as? NSNumber)?.uint64Value ?? 0
    }

    /// The traffic of `path` logged after `offset`, once the log has stopped growing (nginx logs
    /// a cancelled response when its next paced write finds the connection closed).
    func traffic(of path: String, after offset: UInt64) -> (refusals: Int, servedBytes: Int64) {
        var size = logOffset()
        var stableSince = MonotonicClock.seconds()
        let deadline = stableSince + 3
        while MonotonicClock.seconds() - stableSince < 1.2, MonotonicClock.seconds() < deadline {
            usleep(50_000)
            let now = logOffset()
            if now != size { (size, stableSince) = (now, MonotonicClock.seconds()) }
        }
        guard let handle = try? FileHandle(forReadingFrom: accessLog) else { return (0, 0) }
        defer { try? handle.close() }
        try? handle.seek(toOffset: offset)
        let text = String(decoding: (try? handle.readToEnd()) ?? Data(), as: UTF8.self)
        return Self.traffic(ofLog: text, path: path)
    }

    /// The refusals (429, 503) and body bytes of `path` in access log lines `status bytes path`.
    static func traffic(ofLog text: String, path: String) -> (refusals: Int, servedBytes: Int64) {
        var refusals = 0
        var served: Int64 = 0
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count == 3, fields[2] == path, let status = Int(fields[0]), let bytes = Int64(fields[1]) else { continue }
            if status == 429 || status == 503 { refusals += 1 } else { served += bytes }
        }
        return (refusals, served)
    }

    /// A port no one listens on now (bound, read, released: nginx takes it right after).
    private static func freePort() -> UInt16? {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return nil }
        defer { close(socket) }
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { return nil }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        return named == 0 ? UInt16(bigEndian: address.sin_port) : nil
    }

    /// Whether something accepts a connection on 127.0.0.1:`port`.
    private static func accepts(_ port: UInt16) -> Bool {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return false }
        defer { close(socket) }
        var address = loopback(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}

/// Why nginx could not serve the `nginx` case.
struct NginxError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
