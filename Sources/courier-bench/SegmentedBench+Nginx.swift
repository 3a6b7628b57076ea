import Foundation

/// The `nginx` case: the same file from nginx, which paces each connection in bursts
/// (`limit_rate`), at each of `--nginx-rates`; then a connection limit (`limit_conn`).
extension SegmentedBench {
    /// The limit of the `limit_conn` rows, and its `limit_rate`.
    static let nginxConnectionLimit = (limit: 4, rate: 4 << 20)

    /// Starts nginx when it is installed, runs the rows, stops it.
    func runNginx(aria2c: Bool) {
        guard FileManager.default.isExecutableFile(atPath: options.nginx) else {
            print("SKIP nginx: no executable at \(options.nginx) (apt-get install -y nginx-light, or --nginx PATH)")
            return
        }
        let home = directory.appendingPathComponent("nginx-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: home) }
        let nginx: NginxServer
        do {
            nginx = try NginxServer(
                executable: options.nginx, directory: home, file: Self.fileName, data: data, rates: options.nginxRates,
                connectionLimit: Self.nginxConnectionLimit)
        } catch {
            print("SKIP nginx: \(error)")
            return
        }
        defer { nginx.stop() }
        note("segmented: nginx on 127.0.0.1:\(nginx.port), files in \(home.path)")
        // The configurations of the goal: Courier's automatic count against the best of
        // aria2c's two usual settings, and Courier's fixed 16 as the count's own ceiling.
        var clients: [SegmentedClient] = [.courier(.automatic), .courier(.connections(16))]
        if aria2c { clients += [.aria2c(connections: 16, options: Aria2Options()), .aria2c(connections: 8, options: Aria2Options())] }
        for rate in options.nginxRates {
            runRounds(
                case: "nginx", origin: origin(nginx, path: NginxServer.ratePath(rate, file: Self.fileName), rate: rate), clients: clients)
        }
        let (limit, rate) = Self.nginxConnectionLimit
        let path = NginxServer.connectionLimitPath(limit, rate: rate, file: Self.fileName)
        runRounds(
            case: "nginx-conns", origin: origin(nginx, path: path, rate: rate), clients: [.courier(.automatic)], idealConnections: limit)
    }

    /// nginx's file at `path`; its traffic read from the access log.
    private func origin(_ nginx: NginxServer, path: String, rate: Int) -> SegmentedOrigin {
        let url = URL(string: "http://127.0.0.1:\(nginx.port)\(path)")!
        return SegmentedOrigin(url: url, rate: rate, server: "nginx") {
            let offset = nginx.logOffset()
            return {
                let traffic = nginx.traffic(of: path, after: offset)
                return ServedTraffic(peakInFlight: 0, refusals: traffic.refusals, servedBytes: traffic.servedBytes)
            }
        }
    }
}
