import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier

/// The workloads through Courier's public API, written the way a user would: one
/// `SessionManager` set up only through public `Configuration` fields, completions on the
/// manager's own queue, default validation (2xx).
final class CourierClient: BenchClient {
    let manager: SessionManager

    init(options: BenchOptions) {
        var configuration = SessionManager.Configuration()
        configuration.urlSessionConfiguration.timeoutIntervalForRequest = options.timeout
        if let limit = options.maxConnections {
            configuration.urlSessionConfiguration.httpMaximumConnectionsPerHost = limit
            Self.limitRunningTasks(to: limit, in: &configuration)
        }
        if options.workload == .memory {
            // The default in-memory limit (256 MiB) would cancel a larger body.
            let needed = options.expectedBytes.map { Int(clamping: $0) } ?? Int.max
            configuration.maximumResponseSize = max(configuration.maximumResponseSize, needed)
        }
        manager = SessionManager(configuration: configuration)
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
}
