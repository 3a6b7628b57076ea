import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CourierSupport

/// A response whose whole body reached the caller.
struct Fetched: Sendable {
    let status: Int
    let body: Data
}

/// What a streamed body's consumer saw.
struct Streamed: Sendable {
    let status: Int
    /// Body bytes the consumer took.
    let bytes: Int64
    /// The SHA-256 of those bytes, when the consumer was asked to hash them.
    let digest: [UInt8]?
    /// The most bytes the stream held at once (0 when the client holds none).
    let highWaterMark: Int
    /// How often the transfer paused for the consumer.
    let pauses: Int
}

/// How the `stream` workload's consumer treats each chunk.
struct StreamConsumer: Sendable {
    /// Hash every chunk with SHA-256.
    var hashes = false
    /// Pace the consumer to this many bytes per second by sleeping after chunks; `nil` = no pacing.
    var bytesPerSecond: Double?
}

/// What an event stream delivered.
struct EventCount: Sendable {
    let events: Int
    /// The last event's `id:` field, when the client parses fields (`nil` otherwise).
    let lastID: String?
}

/// Why a request failed, in words for stderr.
struct BenchFailure: Error, Sendable, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// What the workloads drive: one object per process, created before any timing starts. Each
/// call starts one request at once; `completion` runs exactly once, on the client's own queue.
protocol BenchClient: Sendable {
    /// GETs `request` and completes once the whole body is in one `Data`.
    func fetch(_ request: URLRequest, completion: @escaping @Sendable (Result<Fetched, BenchFailure>) -> Void)
    /// GETs `request` into `file` (replacing it) and completes with the HTTP status once the
    /// complete file is at `file`.
    func download(_ request: URLRequest, to file: URL, completion: @escaping @Sendable (Result<Int, BenchFailure>) -> Void)
    /// GETs `request` and hands its body chunk by chunk to a consumer that treats each chunk as
    /// `consumer` says and drops it; completes once the body has ended.
    func stream(
        _ request: URLRequest, consumer: StreamConsumer, completion: @escaping @Sendable (Result<Streamed, BenchFailure>) -> Void)
    /// GETs `request` as a `text/event-stream` and counts its events; completes after
    /// `expected` events or at the end of the body, whichever comes first.
    func events(_ request: URLRequest, expected: Int, completion: @escaping @Sendable (Result<EventCount, BenchFailure>) -> Void)
}

extension BenchOptions {
    /// The client `--client` names, set up for this run.
    func makeClient() -> any BenchClient {
        switch client {
        case .courier: CourierClient(options: self)
        case .urlsession: URLSessionClient(options: self, lean: false)
        case .urlsessionLean: URLSessionClient(options: self, lean: true)
        }
    }

    /// The one request every call sends: a GET of `--url`, timing out after `--timeout` idle seconds.
    var request: URLRequest {
        var request = URLRequest(url: url, timeoutInterval: timeout)
        // libcurl closes the connection after such an exchange: the next request opens a new one.
        if newConnections { request.setValue("close", forHTTPHeaderField: "Connection") }
        return request
    }

    /// How the `stream` consumer treats chunks: `--sha256` hashes, `--consume-mib-s` paces.
    var streamConsumer: StreamConsumer {
        StreamConsumer(hashes: expectedSHA256 != nil, bytesPerSecond: consumeMiBPerSecond.map { $0 * 1_048_576 })
    }
}
