import Foundation

/// What one run measured, and its one `RESULT` line (pure: formatting and percentiles only).
///
/// ```
/// RESULT client=<name> workload=<w> secs=<s> cpu_s=<s> rss_kib=<peak> config=<k:v,...> <metrics>
/// ```
/// with `n=<N> c=<C> errors=<E> rps=<r> p50_ms=<x> p99_ms=<y>` for `small`,
/// `bytes=<B> mib_s=<m>` for `download` and `memory`, `bytes=<B> mib_s=<m> high_water_kib=<H>
/// pauses=<P>` for `stream`, `events=<N> events_s=<e>` for `sse`, `files=<N> c=<C> files_s=<f>` for
/// `queue`, `items=<N> items_s=<i> base_rss_kib=<B> journal_kib=<J>` for `queue --items-only`, and
/// `transfers=<N> cpu_per_wall=<r> kit=<state>` for `idle`. Every field is `key=value`
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
    }

    var client: ClientKind
    var workload: Workload
    /// Wall time of the timed part, on a monotonic clock.
    var seconds: Double
    /// User + system CPU spent during the timed part.
    var cpuSeconds: Double
    /// Peak resident set size of the process (`ru_maxrss`, KiB on Linux).
    var maxRSSKiB: Int
    var configuration: [(key: String, value: String)]
    var metrics: Metrics

    /// The line, without a newline.
    var text: String {
        let config = configuration.map { "\($0.key):\($0.value)" }.joined(separator: ",")
        var fields = [
            "RESULT", "client=\(client.rawValue)", "workload=\(workload.rawValue)", "secs=\(Self.fixed(seconds, 3))",
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
