import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier

/// The workloads through Courier's public API, written the way a user would: one
/// `SessionManager` set up only through public `Configuration` fields, completions on the
/// manager's own queue, default validation (2xx). Streams are consumed from a Swift task with
/// `for try await`, as async code would.
final class CourierClient: BenchClient {
    let manager: SessionManager
    /// The `stream` workload's policy: `--buffer-limit` and `--overflow` over the library's defaults,
    /// and `--timeout` as its idle limit.
    let streamPolicy: StreamPolicy
    /// The `sse` workload's policy: `--timeout` as its idle limit.
    let eventPolicy: StreamPolicy

    init(options: BenchOptions) {
        var configuration = SessionManager.Configuration()
        configuration.urlSessionConfiguration.timeoutIntervalForRequest = options.timeout
        // The header diet's A/B in one binary (Performance.md, "What FoundationNetworking spends
        // per header line, measured").
        if ProcessInfo.processInfo.environment["COURIER_BENCH_HEADER_DIET"] == "off" { configuration.headerDiet = false }
        if let limit = options.maxConnections {
            configuration.urlSessionConfiguration.httpMaximumConnectionsPerHost = limit
            Self.limitRunningTasks(to: limit, in: &configuration)
        }
        if options.workload == .memory {
            // The default in-memory limit (256 MiB) would cancel a larger body.
            let needed = options.expectedBytes.map { Int(clamping: $0) } ?? Int.max
            configuration.maximumResponseSize = max(configuration.maximumResponseSize, needed)
        }
        if let level = options.logLevel {
            // What a service's log sink costs at least: a record built, formatted and written.
            let devNull = open("/dev/null", O_WRONLY)
            configuration.eventMonitors = [
                LoggingMonitor(level: level) { record in
                    let line = record.line + "\n"
                    _ = line.utf8.withContiguousStorageIfAvailable { write(devNull, $0.baseAddress, $0.count) }
                }
            ]
        }
        if let file = options.caFile {
            switch options.tlsPolicy {
            case .none: break
            case .only: configuration.tls.default = TLSPolicy(trust: .only([.file(file)]))
            case .system: configuration.tls.default = TLSPolicy(trust: .system(adding: [.file(file)]))
            }
        }
        if options.cache == .memory { configuration.responseCache = .memory(maximumBytes: 64 << 20) }
        manager = SessionManager(configuration: configuration)
        // A stream's waits are its policy's (the request timeout does not apply to streams):
        // `--timeout` bounds silence there, as it does for URLSession's client.
        let silence = Duration.milliseconds(Int64((options.timeout * 1000).rounded(.up)))
        var policy = StreamPolicy.default
        if let limit = options.bufferLimit { policy.bufferLimit = limit }
        policy.overflow = options.overflow == .pause ? .pause : .fail
        policy.idleTimeout = silence
        streamPolicy = policy
        eventPolicy = StreamPolicy(idleTimeout: silence)
    }

    /// Caps how many tasks Courier runs at once per host at `--max-conns`, like the URLSession limit.
    ///
    /// `--max-conns K` for Courier also caps its running tasks per host at K (see
    /// `SessionManager.Configuration.maximumRunningTasksPerHost`).
    static func limitRunningTasks(to limit: Int, in configuration: inout SessionManager.Configuration) {
        configuration.maximumRunningTasksPerHost = limit
    }

    func fetch(_ request: URLRequest, completion: @escaping @Sendable (Result<Fetched, BenchFailure>) -> Void) {
        manager.dataTask(with: request, serializer: .data) { response in
            switch response.result {
            case .success(let body):
                completion(.success(Fetched(status: response.response?.statusCode ?? 0, body: body)))
            case .failure(let error):
                completion(.failure(BenchFailure("\(error)")))
            }
        }.resume()
    }

    func download(_ request: URLRequest, to file: URL, completion: @escaping @Sendable (Result<Int, BenchFailure>) -> Void) {
        manager.downloadTask(with: request, to: .file(file, options: .removePreviousFile)) { response in
            switch response.result {
            case .success:
                completion(.success(response.response?.statusCode ?? 0))
            case .failure(let error):
                completion(.failure(BenchFailure("\(error)")))
            }
        }.resume()
    }

    func stream(
        _ request: URLRequest, consumer: StreamConsumer, completion: @escaping @Sendable (Result<Streamed, BenchFailure>) -> Void
    ) {
        let manager = manager
        let policy = streamPolicy
        Task {
            do throws(CourierError) {
                completion(.success(try await Self.consume(request, manager: manager, policy: policy, consumer: consumer)))
            } catch {
                completion(.failure(BenchFailure("\(error)")))
            }
        }
    }

    /// A paced consumer sleeps only when it is at least this far ahead of its pace.
    private static let shortestSleep = Duration.milliseconds(1)

    /// `bytes(for:)`, then every chunk through `.chunks`: counted, maybe hashed, maybe paced, dropped.
    private static func consume(
        _ request: URLRequest, manager: SessionManager, policy: StreamPolicy, consumer: StreamConsumer
    ) async throws(CourierError) -> Streamed {
        let (stream, response) = try await manager.bytes(for: request, policy: policy)
        var hasher = consumer.hashes ? SHA256() : nil
        var bytes: Int64 = 0
        let clock = ContinuousClock()
        let start = clock.now
        for try await chunk in stream.chunks {
            bytes += Int64(chunk.count)
            hasher?.update(chunk)
            if let rate = consumer.bytesPerSecond {
                // Sleep until the consumer is back on its pace: when it would have finished
                // `bytes` at `rate`. Measured from the start, so timer slack does not add up;
                // only when at least a millisecond ahead, so a fast pace does not spend its CPU
                // on thousands of tiny sleeps.
                let due = start + .seconds(Double(bytes) / rate)
                if due - clock.now >= Self.shortestSleep { try? await clock.sleep(until: due) }
            }
        }
        let statistics = stream.statistics
        return Streamed(
            status: response.statusCode, bytes: bytes, digest: hasher?.finalize(),
            highWaterMark: statistics.highWaterMark, pauses: statistics.pauses)
    }

    func events(_ request: URLRequest, expected: Int, completion: @escaping @Sendable (Result<EventCount, BenchFailure>) -> Void) {
        let manager = manager
        let policy = eventPolicy
        Task {
            var count = 0
            var lastID: String?
            do throws(CourierError) {
                // The default reconnection policy, as a user would have it; the loop stops at
                // event `expected`, so the reconnection after the body's end (which the server
                // answers with 204) is not part of the run.
                for try await event in manager.events(for: request, policy: policy) {
                    count += 1
                    lastID = event.id
                    if count == expected { break }
                }
                completion(.success(EventCount(events: count, lastID: lastID)))
            } catch {
                completion(.failure(BenchFailure("after \(count) events: \(error)")))
            }
        }
    }
}
