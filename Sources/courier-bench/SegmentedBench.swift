import Courier
import CourierTestServer
import Foundation

/// `courier-bench segmented`: one file from an in-process server that caps each connection at
/// `--rate` (and from nginx, when installed), downloaded by Courier's split and by aria2c, case by
/// case (Docs/Performance.md, Docs/SegmentedDownloads.md).
///
/// Each run prints its RESULT line as it ends; each configuration then gets a line with
/// `round:median`: the run with the median time, its `errors` the sum over the rounds.
final class SegmentedBench {
    /// The file's name on the server and on disk.
    static let fileName = "segmented.bin"
    static let path = "/files/" + fileName

    let options: SegmentedOptions
    let server: TestServer
    let data: Data
    let directory: URL
    private let removesDirectory: Bool
    private let courier: SegmentedCourier
    /// Bytes per second of one unthrottled Courier download, once measured.
    var loopback: Double = .infinity
    var failures = 0

    init(options: SegmentedOptions) throws {
        self.options = options
        if let given = options.directory {
            directory = URL(fileURLWithPath: given, isDirectory: true)
            removesDirectory = false
        } else {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-bench-segmented-\(UUID().uuidString)")
            removesDirectory = true
        }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        data = TestServer.deterministicBytes(count: options.size, seed: 1)
        server = try TestServer()
        server.addFile(Self.fileName, data: data, etag: "\"segmented-\(options.size)-1\"")
        courier = SegmentedCourier(timeout: options.timeout)
    }

    deinit {
        server.stop()
        if removesDirectory { try? FileManager.default.removeItem(at: directory) }
    }

    /// Runs the cases; 0 when every run succeeded, 1 otherwise.
    func run() -> Int32 {
        note(
            "segmented: \(options.size) bytes at \(options.rate) bytes/s per connection, \(options.rounds) round(s), files in \(directory.path)"
        )
        // Loopback: one unthrottled download, the limit no client can pass here. Its own ideal
        // is itself (speed_ratio 1).
        var loopbackLine = measure(
            client: .courier(.off), label: [("case", "loopback")], origin: testServer(query: ""), connections: 1, round: "1")
        if case .segmented(var run) = loopbackLine.metrics, run.errors == 0 {
            loopback = Double(options.size) / loopbackLine.seconds
            run.idealSeconds = loopbackLine.seconds
            loopbackLine.metrics = .segmented(run)
        }
        print(loopbackLine)
        let hasAria2c = FileManager.default.isExecutableFile(atPath: options.aria2c)
        for which in options.cases {
            switch which {
            case .capped:
                runRounds(case: "capped", origin: testServer(query: "rate=\(options.rate)"), clients: cappedClients(aria2c: hasAria2c))
            case .slow:
                let query = "rate=\(options.rate)&slow_at=\(options.size / 2)&slow_factor=20"
                var clients: [SegmentedClient] = [.courier(.automatic), .courier(.connections(4))]
                if hasAria2c { clients.append(.aria2c(connections: 4, options: Aria2Options())) }
                // The ideal: four connections at R the whole time, as if none slowed.
                runRounds(case: "slow", origin: testServer(query: query), clients: clients, idealConnections: 4)
            case .ban:
                runRounds(
                    case: "ban", origin: testServer(query: "rate=\(options.rate)&max_conns=4"), clients: [.courier(.automatic)],
                    idealConnections: 4)
            case .kill:
                runKills()
            case .nginx:
                runNginx(aria2c: hasAria2c)
            }
            if !hasAria2c, which == .capped || which == .slow || which == .nginx {
                print("SKIP aria2c rows of \(which.rawValue): no executable at \(options.aria2c) (apt-get install -y aria2)")
            }
        }
        return failures == 0 ? Bench.success : Bench.workloadFailure
    }

    /// The `capped` configurations: Courier's split, then aria2c's sweep (one option changed at a
    /// time from `-k 1M`, no allocation, the default selector and a 16 MiB cache).
    private func cappedClients(aria2c: Bool) -> [SegmentedClient] {
        var clients: [SegmentedClient] = [.courier(.automatic)]
        if !options.quick { clients += [4, 8, 16].map { .courier(.connections($0)) } }
        guard aria2c else { return clients }
        let base = Aria2Options()
        if options.quick {
            return clients + [
                .aria2c(connections: 16, options: base), .aria2c(connections: 16, options: Aria2Options(pieceSize: "4M")),
                .aria2c(connections: 8, options: base),
            ]
        }
        clients += [1, 4, 8, 16].map { .aria2c(connections: $0, options: base) }
        var variants: [Aria2Options] = []
        for size in ["4M", "20M"] { variants.append(Aria2Options(pieceSize: size)) }
        variants.append(Aria2Options(fileAllocation: "falloc"))
        for selector in ["inorder", "geom"] { variants.append(Aria2Options(pieceSelector: selector)) }
        variants.append(Aria2Options(diskCache: "0"))
        return clients + variants.map { .aria2c(connections: 16, options: $0) }
    }

    /// Every client once per round, in ABBA order (forward, backward, forward, …), then the medians.
    func runRounds(case name: String, origin: SegmentedOrigin, clients: [SegmentedClient], idealConnections: Int? = nil) {
        var lines = Array(repeating: [ResultLine](), count: clients.count)
        for round in 0..<options.rounds {
            let order = round % 2 == 0 ? Array(clients.indices) : Array(clients.indices.reversed())
            for index in order {
                let line = measure(
                    client: clients[index], label: [("case", name)], origin: origin,
                    connections: idealConnections ?? clients[index].connections, round: String(round + 1))
                print(line)
                lines[index].append(line)
            }
        }
        guard options.rounds > 1 else { return }
        for runs in lines { print(Self.median(of: runs)) }
    }

    /// The run with the median time (the lower one for an even count), its errors summed over all.
    static func median(of runs: [ResultLine]) -> ResultLine {
        let sorted = runs.sorted { $0.seconds < $1.seconds }
        var line = sorted[(sorted.count - 1) / 2]
        line.configuration = line.configuration.map { $0.key == "round" ? ("round", "median") : $0 }
        if case .segmented(var run) = line.metrics {
            run.errors = runs.reduce(0) { total, line in
                if case .segmented(let other) = line.metrics { return total + other.errors }
                return total
            }
            line.metrics = .segmented(run)
        }
        return line
    }

    /// The in-process server's file with `query`.
    func testServer(query: String) -> SegmentedOrigin {
        let server = server
        return SegmentedOrigin(url: server.url(Self.path + (query.isEmpty ? "" : "?" + query)), rate: options.rate, server: "test") {
            server.clearRequests()
            return { [self] in
                let traffic = settledTraffic()
                return ServedTraffic(
                    peakInFlight: traffic.peakInFlight, refusals: traffic.tooManyRequests, servedBytes: traffic.bodyBytesServed)
            }
        }
    }

    /// One download by `client` of `origin`'s file, checked byte for byte.
    private func measure(
        client: SegmentedClient, label: [(key: String, value: String)], origin: SegmentedOrigin, connections: Int, round: String
    ) -> ResultLine {
        let url = origin.url
        let file = directory.appendingPathComponent(Self.fileName)
        try? FileManager.default.removeItem(at: file)
        let served = origin.begin()
        note(
            "segmented: \(label.map(\.value).joined()) \(client.name) \(client.configuration.map { "\($0.key):\($0.value)" }.joined(separator: ",")) round \(round)"
        )

        let usage = (own: ResourceUsage.now(), children: ResourceUsage.children())
        let started = MonotonicClock.seconds()
        var outcome: SegmentedOutcome
        switch client {
        case .courier(let split):
            outcome = courier.download(url, to: file, split: split)
        case .aria2c(let count, let aria2Options):
            outcome = runAria2c(count, aria2Options, url: url)
        }
        let seconds = MonotonicClock.seconds() - started
        let ownUsage = ResourceUsage.now()
        let childUsage = ResourceUsage.children()
        if outcome.failure == nil { outcome.failure = verify(file) }
        let traffic = served()
        if let failure = outcome.failure {
            failures += 1
            note("segmented: FAILED: \(failure)")
        }
        // Courier runs in this process with the server: its CPU and memory include the
        // server's (and the file it serves). aria2c's are its own.
        let isChild: Bool
        if case .aria2c = client { isChild = true } else { isChild = false }
        let cpu = isChild ? childUsage.cpuSeconds - usage.children.cpuSeconds : ownUsage.cpuSeconds - usage.own.cpuSeconds
        let metrics = ResultLine.Segmented(
            bytes: outcome.failure == nil ? Int64(options.size) : 0,
            idealSeconds: Double(options.size) / min(Double(connections) * Double(origin.rate), loopback),
            errors: outcome.failure == nil ? 0 : 1, connections: outcome.connections, peakInFlight: traffic.peakInFlight,
            refusals: traffic.refusals, servedBytes: traffic.servedBytes, fileSize: Int64(options.size))
        return ResultLine(
            clientName: client.name, workload: .segmented, seconds: seconds, cpuSeconds: cpu,
            maxRSSKiB: isChild ? childUsage.maxRSSKiB : ownUsage.maxRSSKiB,
            configuration: label + client.configuration + configuration(rate: origin.rate, server: origin.server) + [("round", round)],
            metrics: .segmented(metrics))
    }

    /// The run-wide settings for `config=` (nginx's rows say `server:nginx`).
    func configuration(rate: Int? = nil, server: String = "test") -> [(key: String, value: String)] {
        [("rate", String(rate ?? options.rate)), ("size", String(options.size))] + (server == "test" ? [] : [("server", server)])
    }

    private func runAria2c(_ connections: Int, _ aria2Options: Aria2Options, url: URL) -> SegmentedOutcome {
        let arguments = aria2Options.arguments(connections: connections, url: url, directory: directory, name: Self.fileName)
        do {
            let child = try ChildProcess(options.aria2c, arguments, log: directory.appendingPathComponent("aria2c.log"))
            guard let status = child.wait(seconds: options.timeout) else {
                return SegmentedOutcome(connections: connections, failure: "aria2c did not finish within --timeout")
            }
            let failure = status == 0 ? nil : "aria2c exited with \(status) (see \(directory.path)/aria2c.log)"
            return SegmentedOutcome(connections: connections, failure: failure)
        } catch {
            return SegmentedOutcome(connections: connections, failure: "cannot run \(options.aria2c): \(error)")
        }
    }

    /// `nil` when `file` holds exactly the served bytes, else what is wrong.
    private func verify(_ file: URL) -> String? {
        guard let handle = try? FileHandle(forReadingFrom: file) else { return "no file at \(file.path)" }
        defer { try? handle.close() }
        let piece = 8 << 20
        var offset = 0
        while true {
            let chunk = (try? handle.read(upToCount: piece)) ?? nil
            guard let chunk, !chunk.isEmpty else { break }
            guard offset + chunk.count <= data.count, chunk == data[offset..<(offset + chunk.count)] else {
                return "the file differs from the served bytes in the \(piece >> 20) MiB from byte \(offset)"
            }
            offset += chunk.count
        }
        return offset == data.count ? nil : "the file holds \(offset) bytes, not \(data.count)"
    }

    /// The file's traffic once nothing is in flight (the last write is counted after it left).
    func settledTraffic() -> PathTraffic {
        let deadline = MonotonicClock.seconds() + 10
        while server.traffic(for: Self.path).inFlight > 0, MonotonicClock.seconds() < deadline { usleep(5_000) }
        return server.traffic(for: Self.path)
    }

    func print(_ line: ResultLine) {
        FileHandle.standardOutput.write(Data((line.text + "\n").utf8))
    }

    func print(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    func note(_ text: String) {
        Bench.writeToStandardError(text + "\n")
    }
}

/// Where a run's file comes from, and what its server saw of the run.
struct SegmentedOrigin {
    /// The file's URL.
    var url: URL
    /// The server's rate per connection, for the ideal time and `config=`.
    var rate: Int
    /// `test` (the in-process server) or `nginx`.
    var server: String
    /// Called before the run; what it returns says, after the run, what the server saw.
    var begin: () -> () -> ServedTraffic
}

/// What a server saw of one run.
struct ServedTraffic {
    /// The most responses of the file in flight at once (0 when the server does not say).
    var peakInFlight: Int
    /// The refusals: 429s (`max_conns`), or nginx's 503s (`limit_conn`).
    var refusals: Int
    /// Body bytes written for the file, all responses together.
    var servedBytes: Int64
}
