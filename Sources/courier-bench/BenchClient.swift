import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response whose whole body reached the caller.
struct Fetched: Sendable {
    let status: Int
    let body: Data
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
}

extension BenchOptions {
    /// The client `--client` names, set up for this run.
    func makeClient() -> any BenchClient {
        switch client {
        case .courier: CourierClient(options: self)
        case .urlsession: URLSessionClient(options: self)
        }
    }

    /// The one request every call sends: a GET of `--url`, timing out after `--timeout` idle seconds.
    var request: URLRequest {
        URLRequest(url: url, timeoutInterval: timeout)
    }
}

/// One value behind one `NSLock` (like the library's: ThreadSanitizer sees it, unlike futexes).
final class Protected<Value: Sendable>: @unchecked Sendable {  // `value` is only touched under `lock`
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    /// Runs `body` with exclusive access; keep it short and never call out of it.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
