import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the `idle` workload makes wait (`--shape`).
enum IdleShape: String, CaseIterable, Sendable {
    /// One GET whose response head comes after `--seconds` (the test server's `/delay/{ms}`).
    case head
    /// One Server-Sent Events stream with an event about every ``IdleShape/eventSpacing`` seconds
    /// for `--seconds`.
    case sse
    /// 16 such streams at once.
    case sse16

    /// The longest wait `--seconds` allows: the test server's longest `/delay` (10 s).
    static let longestWait: Double = 10
    /// The pause between a stream's events the stream shapes aim at, in seconds.
    static let eventSpacing: Double = 2

    /// How many transfers wait at once.
    var transfers: Int { self == .sse16 ? 16 : 1 }
}

/// `idle`: what transfers cost while they wait — for a delayed response head, or between the
/// events of slow event streams — as CPU seconds (user + system, `getrusage(RUSAGE_SELF)`) per
/// wall second. A transfer that only waits should cost next to nothing; FoundationNetworking's
/// stale write source (Docs/Platform.md §6.16) made one cost most of a core, which Courier's
/// platform kit fixes, so the line also says what the kit does in the process (`kit=`).
///
/// `--url` is the base of a CourierTestServer (`courier serve`). The clock starts once every
/// transfer has been started (`resume()` called) and stops once every one has completed; both
/// CPU time and wall time are read at that end, so their ratio covers the same span. Each
/// process opens its connections afresh, so each run measures cold connections.
struct IdleWorkload {
    let options: BenchOptions
    let client: any BenchClient

    func run(until deadline: Deadline) throws(BenchFailure) -> ResultLine {
        let shape = options.shape
        let request = Self.request(options)
        let arrivals = (0..<shape.transfers).map { _ in Arrival<Result<Int, BenchFailure>>() }
        let events = Self.events(options)
        for arrival in arrivals {
            switch shape {
            case .head:
                client.fetch(request) { result in arrival.deliver(result.map(\.status)) }
            case .sse, .sse16:
                client.events(request, expected: events) { result in
                    arrival.deliver(result.flatMap { counted in Self.check(counted, expected: events, client: options.client) })
                }
            }
        }
        let stopwatch = Stopwatch()
        for (index, arrival) in arrivals.enumerated() {
            guard let arrived = arrival.wait(until: deadline) else {
                throw deadline.exceeded("\(shape.transfers - index) of \(shape.transfers) transfers waiting")
            }
            let status = try arrived.value.get()
            guard status == 200 else { throw BenchFailure("transfer \(index + 1): HTTP \(status)") }
        }
        let measured = stopwatch.stop(at: MonotonicClock.seconds())
        return ResultLine(
            client: options.client, workload: .idle, seconds: measured.seconds, cpuSeconds: measured.cpuSeconds,
            maxRSSKiB: measured.maxRSSKiB, configuration: options.configuration,
            metrics: .idle(ResultLine.Idle(transfers: shape.transfers, kit: PlatformFixes.status.state.rawValue)))
    }

    /// How many intervals of about ``IdleShape/eventSpacing`` a stream spans: at least one.
    private static func intervals(_ options: BenchOptions) -> Int {
        max(1, Int((options.seconds / IdleShape.eventSpacing).rounded()))
    }

    /// How many events a stream sends: one at its start, then one after each interval.
    static func events(_ options: BenchOptions) -> Int {
        intervals(options) + 1
    }

    /// The request every transfer sends: `BASE/delay/{ms}` (`head`), or `BASE/sse?count=N&interval_ms=I`
    /// whose N events, I ms apart, span `--seconds` (`sse`, `sse16`; I is about 2,000).
    static func request(_ options: BenchOptions) -> URLRequest {
        let milliseconds = max(1, Int((options.seconds * 1000).rounded()))
        let url: URL
        switch options.shape {
        case .head:
            url = options.url.appendingPathComponent("delay").appendingPathComponent(String(milliseconds))
        case .sse, .sse16:
            let interval = Int((Double(milliseconds) / Double(intervals(options))).rounded())
            var components = URLComponents(url: options.url.appendingPathComponent("sse"), resolvingAgainstBaseURL: false)
            components?.queryItems = [
                URLQueryItem(name: "count", value: String(events(options))),
                URLQueryItem(name: "interval_ms", value: String(interval)),
            ]
            url = components?.url ?? options.url
        }
        return URLRequest(url: url, timeoutInterval: options.timeout)
    }

    /// A stream that delivered every event is a 200 (the clients report only success or failure):
    /// exactly `expected` events, and for Courier the last one's `id:` is `expected`.
    private static func check(_ counted: EventCount, expected: Int, client: ClientKind) -> Result<Int, BenchFailure> {
        guard counted.events == expected else {
            return .failure(BenchFailure("received \(counted.events) events, expected \(expected)"))
        }
        if client == .courier, counted.lastID != String(expected) {
            return .failure(
                BenchFailure("the last event's id is \(counted.lastID.map { "'\($0)'" } ?? "missing"), expected '\(expected)'"))
        }
        return .success(200)
    }
}
