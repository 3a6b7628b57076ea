import Courier
import Foundation

/// The `kill` case: the `courier` command killed with SIGKILL at seeded moments, then rerun to
/// the end; the file must be exact and the server says how much was fetched again.
extension SegmentedBench {
    /// The `courier` executable: `--courier`, else the one next to this executable.
    var courierExecutable: String {
        if let given = options.courier { return given }
        let own = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: own).deletingLastPathComponent().appendingPathComponent("courier").path
    }

    /// Whether `courier get` has `--split` (the option comes with the segmented engine).
    func courierHasSplit(_ executable: String) -> Bool {
        let log = directory.appendingPathComponent("courier-help.txt")
        try? FileManager.default.removeItem(at: log)
        guard let child = try? ChildProcess(executable, ["get", "--help"], log: log), child.wait(seconds: 30) != nil,
            let help = try? String(contentsOf: log, encoding: .utf8)
        else { return false }
        return help.contains("--split")
    }

    /// Kills the command `options.kills` times, each time once the server has served a seeded
    /// random share of the file in that attempt (a moment that does not depend on how fast the
    /// download is), then lets it finish.
    func runKills() {
        let executable = courierExecutable
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            print("SKIP kill: no courier executable at \(executable) (swift build -c release --product courier, or --courier PATH)")
            return
        }
        let split = courierHasSplit(executable)
        let file = directory.appendingPathComponent("killed-" + Self.fileName)
        let partial = file.deletingLastPathComponent().appendingPathComponent(".\(file.lastPathComponent).courier-partial")
        for leftover in [file, partial, partial.deletingPathExtension().appendingPathExtension("courier-resume")] {
            try? FileManager.default.removeItem(at: leftover)
        }
        let url = server.url(Self.path + "?rate=\(options.rate)")
        let arguments = ["get"] + (split ? ["--split", "auto"] : []) + [url.absoluteString, "-o", file.path, "-q"]
        let log = directory.appendingPathComponent("courier.log")
        note("segmented: kill \(executable) \(arguments.joined(separator: " "))")
        server.clearRequests()

        var random = SeededRandom(seed: options.seed)
        var kills = 0
        var connectionsAtKills = 0
        var failure: String?
        let usage = ResourceUsage.children()
        let started = MonotonicClock.seconds()
        var attempts = 0
        while failure == nil {
            attempts += 1
            guard attempts <= options.kills + 5 else {
                failure = "not done after \(attempts - 1) runs"
                break
            }
            let servedBefore = server.traffic(for: Self.path).bodyBytesServed
            // A share of the file up to about twice an even split of it between the kills.
            let share = random.uniform(0.02...(1.8 / Double(options.kills + 1)))
            let target = servedBefore + Int64(share * Double(options.size))
            let child: ChildProcess
            do {
                child = try ChildProcess(executable, arguments, log: log)
            } catch {
                failure = "cannot run \(executable): \(error)"
                break
            }
            if kills < options.kills {
                let deadline = MonotonicClock.seconds() + options.timeout
                while child.isRunning, server.traffic(for: Self.path).bodyBytesServed < target, MonotonicClock.seconds() < deadline {
                    usleep(2_000)
                }
                if child.isRunning {
                    let active = server.traffic(for: Self.path).inFlight
                    child.kill()
                    let (_, killed) = child.waitAfterKill()
                    if killed {
                        kills += 1
                        connectionsAtKills += max(1, active)
                        continue
                    }
                }
            }
            guard let status = child.wait(seconds: options.timeout) else {
                failure = "courier did not finish within --timeout"
                break
            }
            if status == 0 { break }
            failure = "courier exited with \(status) (see \(log.path))"
        }
        let seconds = MonotonicClock.seconds() - started
        let childUsage = ResourceUsage.children()
        if failure == nil { failure = verifyDigest(file) }
        let traffic = settledTraffic()
        if let failure {
            failures += 1
            note("segmented: FAILED: \(failure)")
        }
        let metrics = ResultLine.Segmented(
            bytes: failure == nil ? Int64(options.size) : 0,
            idealSeconds: Double(options.size) / min(16 * Double(options.rate), loopback), errors: failure == nil ? 0 : 1,
            connections: traffic.peakInFlight, peakInFlight: traffic.peakInFlight, refusals: traffic.tooManyRequests,
            servedBytes: traffic.bodyBytesServed, fileSize: Int64(options.size), kills: kills, connectionsAtKills: connectionsAtKills)
        print(
            ResultLine(
                clientName: "courier-cli", workload: .segmented, seconds: seconds, cpuSeconds: childUsage.cpuSeconds - usage.cpuSeconds,
                maxRSSKiB: childUsage.maxRSSKiB,
                configuration: [("case", "kill"), ("split", split ? "auto" : "unsupported"), ("seed", String(options.seed))]
                    + configuration() + [("round", "1")],
                metrics: .segmented(metrics)))
    }

    /// `nil` when `file`'s SHA-256 is the served bytes', else what is wrong.
    private func verifyDigest(_ file: URL) -> String? {
        guard let handle = try? FileHandle(forReadingFrom: file) else { return "no file at \(file.path)" }
        defer { try? handle.close() }
        var hasher = SHA256()
        var count = 0
        while let chunk = try? handle.read(upToCount: 8 << 20), !chunk.isEmpty {
            hasher.update(chunk)
            count += chunk.count
        }
        var expected = SHA256()
        expected.update(data)
        return hasher.finalize() == expected.finalize() ? nil : "SHA-256 differs (\(count) bytes on disk, \(data.count) served)"
    }
}

/// splitmix64: the seeded moments of the kills.
struct SeededRandom {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `range`, uniformly.
    mutating func uniform(_ range: ClosedRange<Double>) -> Double {
        range.lowerBound + Double(next() >> 11) / Double(1 << 53) * (range.upperBound - range.lowerBound)
    }
}
