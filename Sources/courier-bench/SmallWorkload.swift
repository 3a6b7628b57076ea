import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `small`: request rate and latency. `--warmup` untimed GETs, then `--requests` timed ones,
/// each phase keeping `--concurrency` in flight.
///
/// Every response must be a 200 whose body has the expected length: `--expect-bytes`, or else
/// the length of the first 200 response (the first warm-up response; in the timed phase only
/// when there was no warm-up). Anything else counts in `errors=`; warm-up failures are only
/// reported on stderr.
struct SmallWorkload {
    let options: BenchOptions
    let client: any BenchClient

    func run(until deadline: Deadline) throws(BenchFailure) -> ResultLine {
        var expected = options.expectedBytes
        if options.warmup > 0 {
            let warmup = SlidingWindow(
                client: client, request: options.request, total: options.warmup, concurrency: options.concurrency,
                expectedBytes: expected, recordsLatency: false)
            guard warmup.run(until: deadline) != nil else { throw deadline.exceeded("warm-up: \(warmup.progress)") }
            let outcome = warmup.outcome
            Self.report(outcome, phase: "warm-up", total: options.warmup)
            expected = outcome.expectedBytes
        }

        let window = SlidingWindow(
            client: client, request: options.request, total: options.requests, concurrency: options.concurrency,
            expectedBytes: expected, recordsLatency: true)
        let stopwatch = Stopwatch()
        guard let end = window.run(until: deadline) else { throw deadline.exceeded(window.progress) }
        let measured = stopwatch.stop(at: end)
        let outcome = window.outcome
        Self.report(outcome, phase: "timed", total: options.requests)
        return ResultLine(
            client: options.client, workload: options.workload, seconds: measured.seconds, cpuSeconds: measured.cpuSeconds,
            maxRSSKiB: measured.maxRSSKiB, configuration: options.configuration,
            metrics: .requests(
                ResultLine.Requests(
                    count: options.requests, concurrency: options.concurrency, errors: outcome.errors,
                    latencies: outcome.latencies)))
    }

    private static func report(_ outcome: SlidingWindow.Outcome, phase: String, total: Int) {
        guard outcome.errors > 0 else { return }
        let first = outcome.firstError.map { "; first: \($0)" } ?? ""
        FileHandle.standardError.write(
            Data("courier-bench: \(phase): \(outcome.errors) of \(total) requests failed\(first)\n".utf8))
    }
}

/// Keeps `concurrency` requests outstanding until `total` have completed: the first
/// `concurrency` start at once, and each completion starts the next (from the client's queue,
/// so no thread sits between one request ending and the next starting).
final class SlidingWindow: Sendable {
    /// What a finished window found.
    struct Outcome: Sendable {
        var started = 0
        var finished = 0
        var errors = 0
        var firstError: String?
        /// Seconds from start to body complete, per successful request, in completion order.
        var latencies: [Double] = []
        /// The body length every response must have; learned from the first 200 when not given.
        var expectedBytes: Int64?
        /// When the last request completed (`MonotonicClock`).
        var end: Double?
    }

    private let client: any BenchClient
    private let request: URLRequest
    private let total: Int
    private let concurrency: Int
    private let recordsLatency: Bool
    private let state: Protected<Outcome>
    private let finished = DispatchSemaphore(value: 0)

    init(
        client: any BenchClient, request: URLRequest, total: Int, concurrency: Int, expectedBytes: Int64?,
        recordsLatency: Bool
    ) {
        self.client = client
        self.request = request
        self.total = total
        self.concurrency = concurrency
        self.recordsLatency = recordsLatency
        var outcome = Outcome(expectedBytes: expectedBytes)
        if recordsLatency { outcome.latencies.reserveCapacity(total) }  // no reallocation while timing
        state = Protected(outcome)
    }

    /// Runs every request; returns when the last one completed (`MonotonicClock`), or `nil` when
    /// `deadline` passed first.
    func run(until deadline: Deadline) -> Double? {
        guard total > 0 else { return MonotonicClock.seconds() }
        for _ in 0..<min(concurrency, total) { startNext() }
        guard deadline.wait(for: finished) else { return nil }
        return state.withLock { $0.end }
    }

    var outcome: Outcome { state.withLock { $0 } }

    /// `k of N requests done`, for a deadline message.
    var progress: String { "\(state.withLock { $0.finished }) of \(total) requests done" }

    private func startNext() {
        let starts = state.withLock { state -> Bool in
            guard state.started < total else { return false }
            state.started += 1
            return true
        }
        guard starts else { return }
        let started = MonotonicClock.seconds()
        client.fetch(request) { result in
            self.finish(result, latency: MonotonicClock.seconds() - started)
        }
    }

    private func finish(_ result: Result<Fetched, BenchFailure>, latency: Double) {
        let now = MonotonicClock.seconds()
        let isLast = state.withLock { state -> Bool in
            var problem: String?
            switch result {
            case .success(let fetched) where fetched.status == 200:
                let length = Int64(fetched.body.count)
                let expected = state.expectedBytes ?? length
                state.expectedBytes = expected
                if length != expected { problem = "\(length) bytes instead of \(expected)" }
            case .success(let fetched):
                problem = "HTTP \(fetched.status)"
            case .failure(let failure):
                problem = failure.description
            }
            if let problem {
                state.errors += 1
                if state.firstError == nil { state.firstError = problem }
            } else if recordsLatency {
                state.latencies.append(latency)
            }
            state.finished += 1
            guard state.finished == total else { return false }
            state.end = now
            return true
        }
        if isLast { finished.signal() } else { startNext() }
    }
}
