import Foundation

/// `sse`: one GET of a `text/event-stream` whose events are counted as they arrive, to compare
/// events per second. The clock stops at event `--expect-events` (Courier) or at the end of the
/// body (urlsession). Courier must deliver exactly that many, the last one with that `id:`
/// (the test server's `/sse?count=N` numbers its events 1…N); urlsession must count exactly that
/// many blank lines ending a block.
struct EventsWorkload {
    let options: BenchOptions
    let client: any BenchClient

    func run(until deadline: Deadline) throws(BenchFailure) -> ResultLine {
        let expected = options.expectedEvents ?? 0
        let arrival = Arrival<Result<EventCount, BenchFailure>>()
        let stopwatch = Stopwatch()
        client.events(options.request, expected: expected) { arrival.deliver($0) }
        guard let arrived = arrival.wait(until: deadline) else { throw deadline.exceeded("event stream running") }
        let measured = stopwatch.stop(at: arrived.at)

        let counted = try arrived.value.get()
        guard counted.events == expected else { throw BenchFailure("received \(counted.events) events, expected \(expected)") }
        if options.client == .courier, counted.lastID != String(expected) {
            throw BenchFailure("the last event's id is \(counted.lastID.map { "'\($0)'" } ?? "missing"), expected '\(expected)'")
        }
        return ResultLine(
            client: options.client, workload: .sse, seconds: measured.seconds, cpuSeconds: measured.cpuSeconds,
            maxRSSKiB: measured.maxRSSKiB, configuration: options.configuration, metrics: .events(counted.events))
    }
}
