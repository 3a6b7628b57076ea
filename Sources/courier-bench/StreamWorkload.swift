import Courier
import Foundation

/// `stream`: one GET whose body is consumed chunk by chunk as it arrives and never held whole,
/// to compare throughput with `memory` and peak memory (`rss_kib`) with the stream's buffer
/// limit rather than the body size. The clock stops when the consumer has taken the last chunk.
/// The length is checked against `--expect-bytes` and the digest against `--sha256` when given.
struct StreamWorkload {
    let options: BenchOptions
    let client: any BenchClient

    func run(until deadline: Deadline) throws(BenchFailure) -> ResultLine {
        let arrival = Arrival<Result<Streamed, BenchFailure>>()
        let stopwatch = Stopwatch()
        client.stream(options.request, consumer: options.streamConsumer) { arrival.deliver($0) }
        guard let arrived = arrival.wait(until: deadline) else { throw deadline.exceeded("stream running") }
        let measured = stopwatch.stop(at: arrived.at)

        let streamed = try arrived.value.get()
        guard streamed.status == 200 else { throw BenchFailure("stream failed: HTTP \(streamed.status)") }
        if let expected = options.expectedBytes, streamed.bytes != expected {
            throw BenchFailure("consumed \(streamed.bytes) bytes, expected \(expected)")
        }
        if let expected = options.expectedSHA256, streamed.digest != expected {
            let got = streamed.digest.map(SHA256.hexString) ?? "none"
            throw BenchFailure("the body's SHA-256 is \(got), expected \(SHA256.hexString(expected))")
        }
        return ResultLine(
            client: options.client, workload: .stream, seconds: measured.seconds, cpuSeconds: measured.cpuSeconds,
            maxRSSKiB: measured.maxRSSKiB, configuration: options.configuration,
            metrics: .stream(
                ResultLine.Stream(bytes: streamed.bytes, highWaterMark: streamed.highWaterMark, pauses: streamed.pauses)))
    }
}
