import Foundation

/// What one run measured, and its one `RESULT` line (pure: formatting and percentiles only).
///
/// ```
/// RESULT client=<name> workload=<w> secs=<s> cpu_s=<s> rss_kib=<peak> config=<k:v,...> <metrics>
/// ```
/// with `n=<N> c=<C> errors=<E> rps=<r> p50_ms=<x> p99_ms=<y> cpu_us_per_req=<u>` for `small`,
/// `bytes=<B> mib_s=<m>` for `download` and `memory`, `bytes=<B> mib_s=<m> high_water_kib=<H>
/// pauses=<P>` for `stream`, `events=<N> events_s=<e>` for `sse`, `files=<N> c=<C> files_s=<f>` for
/// `queue`, `items=<N> items_s=<i> base_rss_kib=<B> journal_kib=<J>` for `queue --items-only`, and
/// `transfers=<N> cpu_per_wall=<r> kit=<state>` for `idle`, and `bytes=<B> mib_s=<m> ideal_s=<i>
/// speed_ratio=<r> errors=<E> conns=<C> peak=<P> r429=<Q> served=<S> refetched=<X> kills=<K>
/// refetched_per_kill_conn=<Y>` for `segmented`, and `n=<N> p50_us=<x> p99_us=<y> cpu_us_per_msg=<u>
/// big_mib=<M> mib_s=<m>` for `websocket` (then `connects=<K> connect_cpu_us_p50=<c> connect_ms_p50=<w>`
/// when `--connects` asked for connects). Every field is `key=value`
/// without spaces, so `awk`/`split` can read it; the order never changes.
struct ResultLine {
    /// The request-rate workload's figures.
    struct Requests: Equatable {
        var count: Int
        var concurrency: Int
        var errors: Int
        /// Start → body complete, in seconds, for each successful request (any order).
        var latencies: [Double]
    }

    /// The stream workload's figures.
    struct Stream: Equatable {
        /// Body bytes the consumer took.
        var bytes: Int64
        /// The most bytes the stream held for its consumer at once (0 for `urlsession`, which
        /// holds none).
        var highWaterMark: Int
        /// How often the transfer paused for the consumer and continued with `Range`.
        var pauses: Int
    }

    /// The `queue` workload's figures when it downloads.
    struct Files: Equatable {
        /// Files downloaded, each complete.
        var count: Int
        /// Downloads running at once.
        var concurrency: Int
    }

    /// The `queue --items-only` figures.
    struct Items: Equatable {
        /// Items queued (none running).
        var count: Int
        /// The peak resident set size before the items were added (the queue open, its one slot
        /// taken): `rss_kib` minus this is what the items cost at their peak.
        var baseRSSKiB: Int
        /// The journal's size once the items are durable, in bytes.
        var journalBytes: Int64
    }

    /// The `idle` workload's figures.
    struct Idle: Equatable {
        /// Transfers that waited at once.
        var transfers: Int
        /// Whether Courier's platform kit was in effect (`PlatformFixes.status.state`'s raw value
        /// at the end of the run).
        var kit: String
    }

    /// One `segmented` run: a client's download of the capped file, and what the server saw.
    struct Segmented: Equatable {
        /// Bytes of the verified file (0 when the run failed).
        var bytes: Int64
        /// The time the run would take at its limit: the file's size over min(N·R, loopback).
        var idealSeconds: Double
        /// 1 when the run failed (no file, wrong bytes, an error), else 0; medians sum them.
        var errors: Int
        /// The connections the client says it used (Courier's report; aria2c's `-x`).
        var connections: Int
        /// The most responses of the file the server had in flight at once.
        var peakInFlight: Int
        /// The 429s the server gave (`max_conns`).
        var refusals: Int
        /// Body bytes the server wrote for the file, all responses together.
        var servedBytes: Int64
        /// The file's size: `served - size` is what was fetched more than once.
        var fileSize: Int64
        /// `kill`: how often the client was killed, and the responses in flight at those
        /// moments, summed (the active connections).
        var kills = 0
        var connectionsAtKills = 0
    }

    /// The `websocket` figures: small messages' echo latencies, then the 1 MiB echoes' rate.
    struct WebSocketEcho: Equatable {
        /// Send → echo received, in seconds, for each timed small message.
        var latencies: [Double]
        /// The CPU the small messages cost, in seconds.
        var smallCPUSeconds: Double
        /// 1 MiB messages echoed, and the wall time they took.
        var bigMessages: Int
        var bigSeconds: Double
        /// The idle phase (`--idle`): its wall seconds and the CPU seconds it cost (0 when none).
        var idleSeconds: Double = 0
        var idleCPUSeconds: Double = 0
        /// CPU and wall seconds of each new connection (connect, one echo, close), in order.
        var connectCPUSeconds: [Double] = []
        var connectSeconds: [Double] = []
    }

    /// What the workload adds after `config=`.
    enum Metrics: Equatable {
        case requests(Requests)
        /// Bytes moved by a download or memory run.
        case bytes(Int64)
        case stream(Stream)
        /// Server-Sent Events delivered by an sse run.
        case events(Int)
        case files(Files)
        case items(Items)
        case idle(Idle)
        case segmented(Segmented)
        case webSocket(WebSocketEcho)
    }

    /// The client's name: a ``ClientKind``'s, or `aria2c` for `segmented`'s other client.
    var client: String
    var workload: Workload
    /// Wall time of the timed part, on a monotonic clock.
    var seconds: Double
    /// User + system CPU spent during the timed part.
    var cpuSeconds: Double
    /// Peak resident set size of the process (`ru_maxrss`, KiB on Linux).
    var maxRSSKiB: Int
    var configuration: [(key: String, value: String)]
    var metrics: Metrics

    init(
        client: ClientKind, workload: Workload, seconds: Double, cpuSeconds: Double, maxRSSKiB: Int,
        configuration: [(key: String, value: String)], metrics: Metrics
    ) {
        self.init(
            clientName: client.rawValue, workload: workload, seconds: seconds, cpuSeconds: cpuSeconds, maxRSSKiB: maxRSSKiB,
            configuration: configuration, metrics: metrics)
    }

    /// A line for a client that is not a ``ClientKind`` (`segmented` runs aria2c too).
    init(
        clientName: String, workload: Workload, seconds: Double, cpuSeconds: Double, maxRSSKiB: Int,
        configuration: [(key: String, value: String)], metrics: Metrics
    ) {
        self.client = clientName
        self.workload = workload
        self.seconds = seconds
        self.cpuSeconds = cpuSeconds
        self.maxRSSKiB = maxRSSKiB
        self.configuration = configuration
        self.metrics = metrics
    }

    /// The line, without a newline.
    var text: String {
        let config = configuration.map { "\($0.key):\($0.value)" }.joined(separator: ",")
        var fields = [
            "RESULT", "client=\(client)", "workload=\(workload.rawValue)", "secs=\(Self.fixed(seconds, 3))",
            "cpu_s=\(Self.fixed(cpuSeconds, 3))", "rss_kib=\(maxRSSKiB)", "config=\(config)",
        ]
        switch metrics {
        case .requests(let requests):
            let sorted = requests.latencies.sorted()
            fields += [
                "n=\(requests.count)", "c=\(requests.concurrency)", "errors=\(requests.errors)",
                "rps=\(Self.fixed(Double(requests.count) / seconds, 1))",
                "p50_ms=\(Self.milliseconds(Self.percentile(50, ofSorted: sorted)))",
                "p99_ms=\(Self.milliseconds(Self.percentile(99, ofSorted: sorted)))",
                // CPU per request: steadier than the rate on shared cores (the TLS rows compare it).
                "cpu_us_per_req=\(Self.fixed(cpuSeconds / Double(requests.count) * 1e6, 1))",
            ]
        case .bytes(let bytes):
            fields += ["bytes=\(bytes)", "mib_s=\(Self.fixed(Double(bytes) / 1_048_576 / seconds, 1))"]
        case .stream(let stream):
            fields += [
                "bytes=\(stream.bytes)", "mib_s=\(Self.fixed(Double(stream.bytes) / 1_048_576 / seconds, 1))",
                "high_water_kib=\((stream.highWaterMark + 1023) / 1024)", "pauses=\(stream.pauses)",
            ]
        case .events(let events):
            fields += ["events=\(events)", "events_s=\(Self.fixed(Double(events) / seconds, 1))"]
        case .files(let files):
            fields += [
                "files=\(files.count)", "c=\(files.concurrency)", "files_s=\(Self.fixed(Double(files.count) / seconds, 1))",
            ]
        case .items(let items):
            fields += [
                "items=\(items.count)", "items_s=\(Self.fixed(Double(items.count) / seconds, 1))",
                "base_rss_kib=\(items.baseRSSKiB)", "journal_kib=\((items.journalBytes + 1023) / 1024)",
            ]
        case .idle(let idle):
            // The cores the process kept busy while the transfers waited.
            fields += [
                "transfers=\(idle.transfers)", "cpu_per_wall=\(Self.fixed(cpuSeconds / seconds, 4))", "kit=\(idle.kit)",
            ]
        case .webSocket(let echo):
            // Microseconds: a loopback echo is a fraction of a millisecond. mib_s counts each
            // 1 MiB message once (the peers' script does too), though it crosses the wire twice.
            let sorted = echo.latencies.sorted()
            let micro = { (seconds: Double?) in seconds.map { Self.fixed($0 * 1e6, 1) } ?? "nan" }
            fields += [
                "n=\(echo.latencies.count)", "p50_us=\(micro(Self.percentile(50, ofSorted: sorted)))",
                "p99_us=\(micro(Self.percentile(99, ofSorted: sorted)))",
                "cpu_us_per_msg=\(Self.fixed(echo.smallCPUSeconds / Double(max(1, echo.latencies.count)) * 1e6, 1))",
                "big_mib=\(echo.bigMessages)", "mib_s=\(Self.fixed(Double(echo.bigMessages) / echo.bigSeconds, 1))",
            ]
            if echo.idleSeconds > 0 {
                fields += [
                    "idle_s=\(Self.fixed(echo.idleSeconds, 1))", "idle_cpu_core=\(Self.fixed(echo.idleCPUSeconds / echo.idleSeconds, 5))",
                ]
            }
            if !echo.connectCPUSeconds.isEmpty {
                let cpu = Self.percentile(50, ofSorted: echo.connectCPUSeconds.sorted()) ?? .nan
                let wall = Self.percentile(50, ofSorted: echo.connectSeconds.sorted()) ?? .nan
                fields += [
                    "connects=\(echo.connectCPUSeconds.count)", "connect_cpu_us_p50=\(Self.fixed(cpu * 1e6, 1))",
                    "connect_ms_p50=\(Self.fixed(wall * 1e3, 3))",
                ]
            }
        case .segmented(let run):
            // speed_ratio: the ideal time over the time taken (1 = at the limit); refetched: the
            // bytes served beyond one copy of the file, per kill and connection active then.
            let refetched = run.servedBytes - run.fileSize
            let perKill = run.kills == 0 ? "-" : String(refetched / Int64(max(1, run.connectionsAtKills)))
            fields += [
                "bytes=\(run.bytes)", "mib_s=\(Self.fixed(Double(run.bytes) / 1_048_576 / seconds, 1))",
                "ideal_s=\(Self.fixed(run.idealSeconds, 3))", "speed_ratio=\(Self.fixed(run.idealSeconds / seconds, 3))",
                "errors=\(run.errors)", "conns=\(run.connections)", "peak=\(run.peakInFlight)", "r429=\(run.refusals)",
                "served=\(run.servedBytes)", "refetched=\(refetched)", "kills=\(run.kills)", "refetched_per_kill_conn=\(perKill)",
            ]
        }
        return fields.joined(separator: " ")
    }

    /// The nearest-rank percentile: the smallest value with at least `percent`% of the values at
    /// or below it (so p100 is the maximum and no value is ever interpolated). `nil` when empty.
    static func percentile(_ percent: Double, ofSorted values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let rank = Int((percent / 100 * Double(values.count)).rounded(.up))
        return values[min(max(rank, 1), values.count) - 1]
    }

    /// `value` with `digits` decimals; `nan`/`inf` as such (a zero-length timing must not crash).
    static func fixed(_ value: Double, _ digits: Int) -> String {
        guard value.isFinite else { return value.isNaN ? "nan" : "inf" }
        return String(format: "%.\(digits)f", value)
    }

    /// Seconds as milliseconds with 3 decimals; `nan` when there is no value (no request succeeded).
    static func milliseconds(_ seconds: Double?) -> String {
        seconds.map { fixed($0 * 1000, 3) } ?? "nan"
    }

    /// A duration in seconds as given: `60`, `2.5`.
    static func seconds(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}
