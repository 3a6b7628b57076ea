import Foundation

/// `memory`: one GET whose whole body ends up in one `Data`, to compare peak memory (`rss_kib`)
/// with the body size. The length is checked against `--expect-bytes` when given.
struct MemoryWorkload {
    let options: BenchOptions
    let client: any BenchClient

    func run(until deadline: Deadline) throws(BenchFailure) -> ResultLine {
        let arrival = Arrival<Result<Fetched, BenchFailure>>()
        let stopwatch = Stopwatch()
        client.fetch(options.request) { arrival.deliver($0) }
        guard let arrived = arrival.wait(until: deadline) else { throw deadline.exceeded("request running") }
        // Measured while the body is still held, so the peak includes it.
        let measured = stopwatch.stop(at: arrived.at)

        let fetched = try arrived.value.get()
        guard fetched.status == 200 else { throw BenchFailure("request failed: HTTP \(fetched.status)") }
        let length = Int64(fetched.body.count)
        if let expected = options.expectedBytes, length != expected {
            throw BenchFailure("received \(length) bytes, expected \(expected)")
        }
        return ResultLine(
            client: options.client, workload: .memory, seconds: measured.seconds, cpuSeconds: measured.cpuSeconds,
            maxRSSKiB: measured.maxRSSKiB, configuration: options.configuration, metrics: .bytes(length))
    }
}
