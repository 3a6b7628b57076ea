import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
internal import CourierSupport

extension SessionManager {
    /// Fetches `request` and returns the body and response. Throws ``CourierError`` only (typed
    /// throws: `catch { error.code }` needs no cast); cancelling the Swift `Task` cancels the
    /// transfer (the error's code is then `cancelled`).
    ///
    /// With `cancelsWithTask: false` the transfer runs to its end whatever happens to the awaiting
    /// Swift `Task` (Alamofire's `automaticallyCancelling: false`): for a request that must not be
    /// cut in the middle, such as a payment, whose caller may be cancelled meanwhile. The call then
    /// returns its real outcome; only `SessionTask.cancel()` or the manager stops it.
    public func data(
        for request: URLRequest, validation: Validation = .default, cancelsWithTask: Bool = true
    ) async throws(CourierError) -> (Data, HTTPURLResponse) {
        let response = try await response(for: request, serializer: .data, validation: validation, cancelsWithTask: cancelsWithTask)
        return (response.value, response.http)
    }

    /// Fetches `url` with GET and returns the body and response.
    public func data(from url: URL, validation: Validation = .default) async throws(CourierError) -> (Data, HTTPURLResponse) {
        try await data(for: URLRequest(url: url), validation: validation)
    }

    /// Fetches `request` and decodes the body as `type`. `cancelsWithTask`: as for
    /// ``data(for:validation:cancelsWithTask:)``.
    public func decodable<Value: Decodable & Sendable>(
        _ type: Value.Type, for request: URLRequest, decoder: JSONDecoder = JSONDecoder(),
        validation: Validation = .default, cancelsWithTask: Bool = true
    ) async throws(CourierError) -> Value {
        try await response(
            for: request, serializer: .decodable(type, decoder: decoder), validation: validation, cancelsWithTask: cancelsWithTask
        ).value
    }

    /// Fetches `request` and serializes the body with `serializer`. `cancelsWithTask`: as for
    /// ``data(for:validation:cancelsWithTask:)``.
    public func response<Serializer: ResponseSerializer>(
        for request: URLRequest, serializer: Serializer, validation: Validation = .default,
        downloadProgress: (@Sendable (Progress) -> Void)? = nil, cancelsWithTask: Bool = true
    ) async throws(CourierError) -> (value: Serializer.Value, http: HTTPURLResponse) {
        try await run(cancel: Self.cancellation(cancelsWithTask)) { finish in
            self.dataTask(
                with: request, serializer: serializer, validation: validation, queue: .immediate,
                downloadProgress: downloadProgress
            ) { finish(Self.valueAndResponse($0.result, $0.response, url: request.url)) }
        }
    }

    /// Sends `body` with `request` and returns the reply body and response. `cancelsWithTask`: as
    /// for ``data(for:validation:cancelsWithTask:)``.
    public func upload(
        for request: URLRequest, from body: UploadBody, validation: Validation = .default,
        uploadProgress: (@Sendable (Progress) -> Void)? = nil, cancelsWithTask: Bool = true
    ) async throws(CourierError) -> (Data, HTTPURLResponse) {
        let response = try await upload(
            for: request, from: body, serializer: .data, validation: validation, uploadProgress: uploadProgress,
            cancelsWithTask: cancelsWithTask)
        return (response.value, response.http)
    }

    /// Sends `body` with `request` and serializes the reply with `serializer` (e.g. `.decodable(T.self)`).
    /// `cancelsWithTask`: as for ``data(for:validation:cancelsWithTask:)``.
    public func upload<Serializer: ResponseSerializer>(
        for request: URLRequest, from body: UploadBody, serializer: Serializer, validation: Validation = .default,
        uploadProgress: (@Sendable (Progress) -> Void)? = nil, cancelsWithTask: Bool = true
    ) async throws(CourierError) -> (value: Serializer.Value, http: HTTPURLResponse) {
        try await run(cancel: Self.cancellation(cancelsWithTask)) { finish in
            self.uploadTask(
                with: request, from: body, serializer: serializer, validation: validation, queue: .immediate,
                uploadProgress: uploadProgress
            ) { finish(Self.valueAndResponse($0.result, $0.response, url: request.url)) }
        }
    }

    /// Downloads `request` to `destination` (see ``downloadTask(with:to:policy:validation:queue:progress:completion:)``)
    /// and returns the published file and the response. A failure's ``CourierError/resumeData``
    /// continues it with ``download(resumingFrom:request:to:policy:validation:cancellation:progress:)``.
    ///
    /// Cancelling the awaiting Swift `Task` is a polite stop: by default (``DownloadCancellation/keepsBytes``)
    /// the bytes fetched stay on disk, as `cancel(producingResumeData:)` keeps them, and the thrown
    /// ``CourierError/Code-swift.struct/cancelled`` carries the ``CourierError/resumeData`` to go on
    /// with — so a service that shuts down through structured concurrency loses no progress.
    public func download(
        for request: URLRequest, to destination: DownloadDestination, policy: DownloadPolicy = .default,
        validation: Validation = .default, cancellation: DownloadCancellation = .keepsBytes,
        progress: (@Sendable (Progress) -> Void)? = nil
    ) async throws(CourierError) -> (URL, HTTPURLResponse) {
        try await run(cancel: cancellation.action) { finish in
            self.downloadTask(
                with: request, to: destination, policy: policy, validation: validation, queue: .immediate,
                progress: progress
            ) { finish(Self.valueAndResponse($0.result, $0.response, url: request.url)) }
        }
    }

    /// Continues the download `resumeData` describes and returns the published file and the
    /// response. Cancelling the awaiting Swift `Task` keeps the bytes by default, as for
    /// ``download(for:to:policy:validation:cancellation:progress:)``.
    public func download(
        resumingFrom resumeData: ResumeData, request: URLRequest? = nil, to destination: DownloadDestination,
        policy: DownloadPolicy = .default, validation: Validation = .default,
        cancellation: DownloadCancellation = .keepsBytes, progress: (@Sendable (Progress) -> Void)? = nil
    ) async throws(CourierError) -> (URL, HTTPURLResponse) {
        try await run(cancel: cancellation.action) { finish in
            self.downloadTask(
                resumingFrom: resumeData, request: request, to: destination, policy: policy, validation: validation,
                queue: .immediate, progress: progress
            ) { finish(Self.valueAndResponse($0.result, $0.response, url: resumeData.url)) }
        }
    }

    /// What cancelling the awaiting Swift `Task` does to the transfer: cancel it, or nothing.
    private static func cancellation(_ cancelsWithTask: Bool) -> @Sendable (any SessionTask) -> Void {
        guard cancelsWithTask else { return { _ in } }
        return { task in task.cancel() }
    }

    private static func valueAndResponse<Value>(
        _ result: Result<Value, CourierError>, _ response: HTTPURLResponse?, url: URL?
    ) -> Result<(value: Value, http: HTTPURLResponse), CourierError> {
        result.flatMap { value in
            guard let response else {
                return .failure(.noResponse(url: url))
            }
            return .success((value, response))
        }
    }

    /// Creates a task with `make`, starts it, and suspends until its completion; cancelling the
    /// Swift task cancels the Courier task, whenever the cancellation arrives.
    ///
    /// The continuation carries the task's `Result` and never throws, so the error keeps its type
    /// (`throws(CourierError)`) without a cast: Courier tasks complete with a `CourierError` only.
    private func run<Value: Sendable>(
        cancel: @escaping @Sendable (any SessionTask) -> Void = { $0.cancel() },
        _ make: (@escaping @Sendable (Result<Value, CourierError>) -> Void) -> any SessionTask
    ) async throws(CourierError) -> Value {
        let link = CancellationLink(cancel: cancel)
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, CourierError>, Never>) in
                let task = make { continuation.resume(returning: $0) }
                task.resume()
                link.attach(task)
            }
        } onCancel: {
            link.cancel()
        }
        return try result.get()
    }
}

/// What cancelling the Swift `Task` that awaits an async download does with the bytes fetched.
public enum DownloadCancellation: Sendable {
    /// Keep the partial file and its record (when the bytes can be continued), as
    /// ``CourierTask/cancel(producingResumeData:)`` does; the thrown error carries the
    /// ``CourierError/resumeData``, and a download to the same fixed place continues by itself.
    /// The default: a polite stop (a task group cancelled on SIGTERM) is not a reason to fetch
    /// the bytes again, and a `kill -9` would have kept them anyway.
    case keepsBytes
    /// Remove the partial file and its record, as ``CourierTask/cancel()`` does.
    case discardsBytes

    var action: @Sendable (any SessionTask) -> Void {
        switch self {
        case .discardsBytes:
            return { $0.cancel() }
        case .keepsBytes:
            return { task in
                if let download = task as? DownloadTask { download.cancel(producingResumeData: { _ in }) } else { task.cancel() }
            }
        }
    }
}

/// Connects a Swift task's cancellation to a Courier task that may not exist yet.
private final class CancellationLink: Sendable {
    private let state = Locked<(task: (any SessionTask)?, isCancelled: Bool)>((nil, false))
    private let cancelTask: @Sendable (any SessionTask) -> Void

    init(cancel: @escaping @Sendable (any SessionTask) -> Void) {
        self.cancelTask = cancel
    }

    func attach(_ task: any SessionTask) {
        let cancelNow = state.withLock { state -> Bool in
            state.task = task
            return state.isCancelled
        }
        if cancelNow { cancelTask(task) }
    }

    func cancel() {
        let task = state.withLock { state -> (any SessionTask)? in
            state.isCancelled = true
            return state.task
        }
        if let task { cancelTask(task) }
    }
}
