import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier  // the package's SHA-256 (`package` access: the same hash on both clients) and, lean, PlatformFixes
import CourierSupport

/// The baseline: the workloads on a raw delegate-based `URLSession`, as directly as it allows.
///
/// One session with `URLSessionConfiguration.default` and a delegate on a serial queue. Data
/// tasks append each chunk to the task's `Data` in `didReceive data`; download tasks let
/// URLSession write its temp file and rename it to the destination in `didFinishDownloadingTo`.
/// Streams only count each chunk (and hash it with `--sha256`) in `didReceive data`, holding
/// nothing; event streams only split lines there and count the blank lines that end events.
final class URLSessionClient: BenchClient {
    private let session: URLSession
    private let delegate = RawSessionDelegate()
    /// `urlsession-lean`: where tasks are created and resumed, so that the callback thread never
    /// waits in `dataTask(with:)`'s and `resume()`'s `sync` onto URLSession's work queue. `nil`:
    /// on the caller's thread, as a plain client does.
    private let startQueue: DispatchQueue?

    /// `lean`: the session set up as Courier sets up its own (see `ClientKind.urlsessionLean`).
    init(options: BenchOptions, lean: Bool) {
        let configuration = URLSessionConfiguration.default
        configuration.timeoutIntervalForRequest = options.timeout
        // Serial: one task's callbacks must never overlap (Docs/Platform.md §2.9: a wider queue runs them at once).
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        queue.name = "courier-bench.urlsession"
        if lean {
            PlatformFixes.install()
            configuration.urlCache = nil
            configuration.httpCookieAcceptPolicy = .never
            configuration.httpShouldSetCookies = false
            configuration.httpMaximumConnectionsPerHost = 4
            // Kept alive by the client: `underlyingQueue` is unowned(unsafe) (Docs/Performance.md).
            let callbacks = DispatchQueue(label: "courier-bench.urlsession-lean.callbacks", target: .global())
            queue.underlyingQueue = callbacks
            callbackQueue = callbacks
            startQueue = DispatchQueue(label: "courier-bench.urlsession-lean.start")
        } else {
            callbackQueue = nil
            startQueue = nil
        }
        if let limit = options.maxConnections { configuration.httpMaximumConnectionsPerHost = limit }
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: queue)
    }

    /// The lean client's callback queue, held because `OperationQueue.underlyingQueue` does not hold it.
    private let callbackQueue: DispatchQueue?

    /// Registers the task's transfer and resumes it: here, or on the start queue (lean).
    private func start(_ task: URLSessionTask, _ transfer: RawTransfer) {
        delegate.register(transfer, for: task)
        task.resume()
    }

    /// Creates a data task and starts it with `transfer`, on the start queue when there is one.
    private func startDataTask(_ request: URLRequest, _ transfer: RawTransfer) {
        guard let startQueue else { return start(session.dataTask(with: request), transfer) }
        startQueue.async { [session] in self.start(session.dataTask(with: request), transfer) }
    }

    func fetch(_ request: URLRequest, completion: @escaping @Sendable (Result<Fetched, BenchFailure>) -> Void) {
        startDataTask(request, RawTransfer(.data(completion)))
    }

    func download(_ request: URLRequest, to file: URL, completion: @escaping @Sendable (Result<Int, BenchFailure>) -> Void) {
        let transfer = RawTransfer(.download(file, completion))
        guard let startQueue else { return start(session.downloadTask(with: request), transfer) }
        startQueue.async { [session] in self.start(session.downloadTask(with: request), transfer) }
    }

    /// Counts (and maybe hashes) each chunk as it arrives. `consumer.bytesPerSecond` is refused
    /// by the option parser: this client cannot pace without buffering.
    func stream(
        _ request: URLRequest, consumer: StreamConsumer, completion: @escaping @Sendable (Result<Streamed, BenchFailure>) -> Void
    ) {
        let transfer = RawTransfer(.stream(completion))
        if consumer.hashes { transfer.hasher = SHA256() }
        startDataTask(request, transfer)
    }

    /// Counts events by line splitting alone until the body ends (`expected` is checked by the
    /// workload).
    func events(_ request: URLRequest, expected: Int, completion: @escaping @Sendable (Result<EventCount, BenchFailure>) -> Void) {
        var request = request
        request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
        startDataTask(request, RawTransfer(.events(completion)))
    }
}

/// The raw client's whole Server-Sent Events "parser": splits lines at CR, LF or CRLF and
/// counts a blank line that ends a block of non-blank lines as one event. No fields are parsed
/// and nothing is copied: the floor any SSE client pays on top of the transport.
struct EventLineCounter {
    private(set) var events = 0
    /// The current line has bytes.
    private var lineHasBytes = false
    /// A non-blank line came since the last blank one.
    private var blockHasLines = false
    /// The previous byte was a CR (so an LF right after it ends nothing).
    private var afterCR = false

    mutating func count(_ bytes: UnsafeRawBufferPointer) {
        for byte in bytes {
            switch byte {
            case 0x0A:
                if afterCR {
                    afterCR = false
                } else {
                    endLine()
                }
            case 0x0D:
                afterCR = true
                endLine()
            default:
                afterCR = false
                lineHasBytes = true
            }
        }
    }

    private mutating func endLine() {
        if lineHasBytes {
            blockHasLines = true
            lineHasBytes = false
        } else if blockHasLines {
            events += 1
            blockHasLines = false
        }
    }
}

/// One running task's state. Created before `resume()`; afterwards touched only from the
/// session's serial delegate queue.
final class RawTransfer: @unchecked Sendable {  // the `var`s change only on the serial delegate queue
    enum Kind {
        case data(@Sendable (Result<Fetched, BenchFailure>) -> Void)
        case download(URL, @Sendable (Result<Int, BenchFailure>) -> Void)
        case stream(@Sendable (Result<Streamed, BenchFailure>) -> Void)
        case events(@Sendable (Result<EventCount, BenchFailure>) -> Void)
    }

    let kind: Kind
    /// A data task's body so far.
    var body = Data()
    /// A stream's bytes so far.
    var received: Int64 = 0
    /// A stream's running digest, with `--sha256` (set before `resume()`).
    var hasher: SHA256?
    /// An event stream's line splitter.
    var lines = EventLineCounter()
    /// Whether a download's file reached its destination, or why not.
    var published: Result<Void, BenchFailure> = .failure(BenchFailure("the download finished without a file"))

    init(_ kind: Kind) { self.kind = kind }

    /// One chunk of the body: kept (data), counted and maybe hashed (stream) or split (events).
    func receive(_ data: Data) {
        switch kind {
        case .data: body.append(data)
        case .stream:
            received += Int64(data.count)
            hasher?.update(data)
        case .events: data.withUnsafeBytes { lines.count($0) }
        case .download: break
        }
    }

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
        case .stream(let completion):
            let streamed = Streamed(status: status, bytes: received, digest: hasher?.finalize(), highWaterMark: 0, pauses: 0)
            completion(failure.map { .failure($0) } ?? .success(streamed))
        case .events(let completion):
            if let failure {
                completion(.failure(failure))
            } else if status != 200 {
                completion(.failure(BenchFailure("HTTP \(status)")))
            } else {
                completion(.success(EventCount(events: lines.events, lastID: nil)))
            }
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
    private let transfers = Locked<[Int: RawTransfer]>([:])

    /// Registers `transfer` before its task is resumed, so no callback can miss it.
    func register(_ transfer: RawTransfer, for task: URLSessionTask) {
        transfers.withLock { $0[task.taskIdentifier] = transfer }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        transfers.withLock { $0[dataTask.taskIdentifier] }?.receive(data)
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
