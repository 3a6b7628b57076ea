import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What every Courier task handle offers: identity, lifecycle control, state and progress.
///
/// Handles are cheap and thread-safe. A started task keeps itself alive until it completes, so
/// you may drop the handle after `resume()`.
public protocol SessionTask: AnyObject, Sendable {
    /// Courier's identifier for the task: 1, 2, 3… in the order tasks are created by a manager,
    /// and the same across every URLSession task it runs (pause/resume, retries, redirects it re-sends).
    var taskIdentifier: Int { get }
    /// Where the task is in its life.
    var state: TaskLifecycle.State { get }
    /// The request as given.
    var originalRequest: URLRequest { get }
    /// The request of the current (or last) attempt; differs after a `Range` resume.
    var currentRequest: URLRequest? { get }
    /// The final response of the current attempt, once its head has arrived.
    var response: HTTPURLResponse? { get }
    /// A snapshot of upload progress (a fresh `Progress` each read; unknown totals stay unknown).
    var uploadProgress: Progress { get }
    /// A snapshot of download progress (a fresh `Progress` each read; unknown totals stay unknown).
    var downloadProgress: Progress { get }
    /// Starts the task, or continues it after ``suspend()`` without re-receiving bytes already held.
    func resume()
    /// Pauses the task: stops the transfer (never URLSession's `suspend()`, which duplicates bytes on Linux).
    func suspend()
    /// Cancels the task; it completes once with ``CourierError/Code-swift.struct/cancelled``.
    func cancel()
    /// Calls `handler` with throttled progress snapshots on the task's callback queue.
    func addProgressHandler(_ direction: ProgressDirection, _ handler: @escaping @Sendable (Progress) -> Void)
    /// Progress snapshots as an `AsyncSequence`; it ends when the task completes.
    func progressUpdates(_ direction: ProgressDirection) -> AsyncStream<Progress>
}

/// The kinds of task handle; used only as ``CourierTask``'s type parameter, so that
/// kind-specific API can live in constrained extensions.
public protocol TaskKind: Sendable {}
/// A data or upload task's kind: the body comes back in memory.
public enum DataTransfer: TaskKind {}
/// A download task's kind: the body is streamed into a file and published at a destination.
public enum DownloadTransfer: TaskKind {}

/// A data task, or an upload task (an upload is a data task with a request body, as in URLSession).
public typealias DataTask = CourierTask<DataTransfer>
/// An upload task: a ``DataTask`` whose request carries an ``UploadBody``.
public typealias UploadTask = DataTask
/// A download task: the body is streamed into a private file and published at its destination.
public typealias DownloadTask = CourierTask<DownloadTransfer>

/// The handle of one Courier task; see ``SessionTask``. A thin, thread-safe front for the
/// per-task delegate that does the work.
public final class CourierTask<Kind: TaskKind>: SessionTask {
    let transfer: TransferTask
    init(transfer: TransferTask) { self.transfer = transfer }

    /// Courier's identifier for the task, unique within its manager.
    public var taskIdentifier: Int { transfer.state.withLock { $0.taskIdentifier } }
    /// Where the task is in its life.
    public var state: TaskLifecycle.State { transfer.state.withLock { $0.phase.state } }
    /// The request as given.
    public var originalRequest: URLRequest { transfer.originalRequest }
    /// The request of the current (or last) attempt.
    public var currentRequest: URLRequest? { transfer.state.withLock { $0.currentRequest } }
    /// The final response of the current attempt, once its head has arrived.
    public var response: HTTPURLResponse? { transfer.state.withLock { $0.response } }
    /// A fresh snapshot of upload progress.
    public var uploadProgress: Progress { transfer.progress(.upload) }
    /// A fresh snapshot of download progress.
    public var downloadProgress: Progress { transfer.progress(.download) }
    /// The task's timeline so far; complete (``TaskMetrics/completedAt`` set) once the task is.
    public var metrics: TaskMetrics { transfer.metrics }
    /// Starts the task, or continues it after `suspend()`.
    public func resume() { transfer.resume(handle: self) }
    /// Pauses the task by stopping its transfer.
    public func suspend() { transfer.suspend(handle: self) }
    /// Cancels the task; it completes once, as cancelled.
    public func cancel() { transfer.cancel(handle: self) }
    /// Calls `handler` with throttled progress snapshots on the task's callback queue.
    public func addProgressHandler(_ direction: ProgressDirection, _ handler: @escaping @Sendable (Progress) -> Void) {
        _ = transfer.addObserver(ProgressObserver(direction: direction, handler: handler, finish: nil))
    }
    /// Progress snapshots as an `AsyncStream` that ends when the task completes.
    public func progressUpdates(_ direction: ProgressDirection) -> AsyncStream<Progress> {
        transfer.progressStream(direction)
    }

    /// Uses `policy` for this task's redirects instead of the manager's. Set it before `resume()`.
    @discardableResult
    public func redirect(using policy: RedirectPolicy) -> Self {
        transfer.state.withLock { $0.options.redirectPolicy = policy }
        return self
    }

    /// Answers this task's Basic or Digest challenges with `credential` (once per attempt, and only
    /// for the origin the task was made for). Set it before `resume()`.
    @discardableResult
    public func authenticate(with credential: Credential) -> Self {
        transfer.state.withLock { $0.options.credential = credential }
        return self
    }

    /// Decides what this task stores in the manager's ``ResponseCache`` instead of the manager's
    /// ``SessionManager/Configuration/responseCacher`` (Alamofire's `cacheResponse(using:)`). Set
    /// it before `resume()`.
    @discardableResult
    public func cacheResponse(using cacher: ResponseCacher) -> Self {
        transfer.state.withLock { $0.options.responseCacher = cacher }
        return self
    }

    /// Adds adapters and retriers for this task, after the manager's (and after the manager's
    /// `retryPolicy`, so a task cannot loosen it). Set them before `resume()`.
    @discardableResult
    public func intercept(with interceptor: Interceptor) -> Self {
        transfer.state.withLock { $0.options.interceptor = $0.options.interceptor.map { $0.then(interceptor) } ?? interceptor }
        return self
    }
}

extension TransferTask {
    func progressStream(_ direction: ProgressDirection) -> AsyncStream<Progress> {
        AsyncStream(bufferingPolicy: .bufferingNewest(64)) { continuation in
            let observer = ProgressObserver(
                direction: direction, handler: { continuation.yield($0) }, finish: { continuation.finish() })
            if !addObserver(observer) { continuation.finish() }
        }
    }
}
