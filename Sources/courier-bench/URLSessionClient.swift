import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The baseline: the workloads on a raw delegate-based `URLSession`, as directly as it allows.
///
/// One session with `URLSessionConfiguration.default` and a delegate on a serial queue. Data
/// tasks append each chunk to the task's `Data` in `didReceive data`; download tasks let
/// URLSession write its temp file and rename it to the destination in `didFinishDownloadingTo`.
final class URLSessionClient: BenchClient {
    private let session: URLSession
    private let delegate = RawSessionDelegate()

    init(options: BenchOptions) {
        let configuration = URLSessionConfiguration.default
        configuration.timeoutIntervalForRequest = options.timeout
        if let limit = options.maxConnections { configuration.httpMaximumConnectionsPerHost = limit }
        // Serial: one task's callbacks must never overlap (Docs/Platform.md §2.9: a wider queue runs them at once).
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        queue.name = "courier-bench.urlsession"
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: queue)
    }

    func fetch(_ request: URLRequest, completion: @escaping @Sendable (Result<Fetched, BenchFailure>) -> Void) {
        let task = session.dataTask(with: request)
        delegate.register(RawTransfer(.data(completion)), for: task)
        task.resume()
    }

    func download(_ request: URLRequest, to file: URL, completion: @escaping @Sendable (Result<Int, BenchFailure>) -> Void) {
        let task = session.downloadTask(with: request)
        delegate.register(RawTransfer(.download(file, completion)), for: task)
        task.resume()
    }
}

/// One running task's state. Created before `resume()`; afterwards touched only from the
/// session's serial delegate queue.
final class RawTransfer: @unchecked Sendable {  // `body`/`problem` change only on the serial delegate queue
    enum Kind {
        case data(@Sendable (Result<Fetched, BenchFailure>) -> Void)
        case download(URL, @Sendable (Result<Int, BenchFailure>) -> Void)
    }

    let kind: Kind
    /// A data task's body so far.
    var body = Data()
    /// Whether a download's file reached its destination, or why not.
    var published: Result<Void, BenchFailure> = .failure(BenchFailure("the download finished without a file"))

    init(_ kind: Kind) { self.kind = kind }

    func complete(_ task: URLSessionTask, error: (any Error)?) {
        let status = (task.response as? HTTPURLResponse)?.statusCode ?? 0
        let failure = error.map { error in
            let error = error as NSError
            return BenchFailure("\(error.domain) \(error.code): \(error.localizedDescription)")
        }
        switch kind {
        case .data(let completion):
            completion(failure.map { .failure($0) } ?? .success(Fetched(status: status, body: body)))
        case .download(_, let completion):
            completion(failure.map { .failure($0) } ?? published.map { status })
        }
    }

    /// Moves URLSession's finished temp file to the destination: one rename (which replaces an
    /// existing file), or, when the temp directory is on another file system, a copy and a delete.
    static func move(_ location: URL, to file: URL) -> Result<Void, BenchFailure> {
        if rename(location.path, file.path) == 0 { return .success(()) }
        let code = errno
        guard code == EXDEV else {
            return .failure(BenchFailure("cannot move the download to \(file.path): \(String(cString: strerror(code)))"))
        }
        do {
            if FileManager.default.fileExists(atPath: file.path) { try FileManager.default.removeItem(at: file) }
            try FileManager.default.copyItem(at: location, to: file)
            try FileManager.default.removeItem(at: location)
            return .success(())
        } catch {
            return .failure(BenchFailure("cannot copy the download to \(file.path): \(error.localizedDescription)"))
        }
    }
}

/// The session delegate: looks up the task's `RawTransfer` by identifier and feeds it.
///
/// Every method is declared in the class that declares the conformances: the delegate protocols
/// have default implementations, and FoundationNetworking calls only what this class declares
/// (Docs/Platform.md §5.3).
final class RawSessionDelegate: NSObject, URLSessionDataDelegate, URLSessionDownloadDelegate, Sendable {
    private let transfers = Protected<[Int: RawTransfer]>([:])

    /// Registers `transfer` before its task is resumed, so no callback can miss it.
    func register(_ transfer: RawTransfer, for task: URLSessionTask) {
        transfers.withLock { $0[task.taskIdentifier] = transfer }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        transfers.withLock { $0[dataTask.taskIdentifier] }?.body.append(data)
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        guard let transfer = transfers.withLock({ $0[downloadTask.taskIdentifier] }),
            case .download(let file, _) = transfer.kind
        else { return }
        transfer.published = RawTransfer.move(location, to: file)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        transfers.withLock { $0.removeValue(forKey: task.taskIdentifier) }?.complete(task, error: error)
    }
}
