import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension SessionManager {
    // `@_specialize` below: pre-specialized for `.data`: called from another module, the generic body looks up
    // `DataResponse<Value>`'s and `Result`'s metadata at run time on every request (callgrind:
    // ~2.6k instructions of a small request).
    /// A task that fetches `request` and serializes the body with `serializer`.
    ///
    /// The task is created suspended: call `resume()`. `completion` runs exactly once, on
    /// `queue`, after validation and serialization on the processing queue.
    @_specialize(where Serializer == DataResponseSerializer)
    public func dataTask<Serializer: ResponseSerializer>(
        with request: URLRequest, serializer: Serializer, validation: Validation = .default,
        queue: CallbackQueue = .default, downloadProgress: (@Sendable (Progress) -> Void)? = nil,
        completion: @escaping @Sendable (DataResponse<Serializer.Value>) -> Void
    ) -> DataTask {
        makeDataTask(
            request, kind: .data, serializer: serializer, validation: validation, queue: queue,
            uploadProgress: nil, downloadProgress: downloadProgress, completion: completion)
    }

    /// A task that fetches `request` and delivers the body as `Data`.
    public func dataTask(
        with request: URLRequest, validation: Validation = .default, queue: CallbackQueue = .default,
        downloadProgress: (@Sendable (Progress) -> Void)? = nil,
        completion: @escaping @Sendable (DataResponse<Data>) -> Void
    ) -> DataTask {
        dataTask(
            with: request, serializer: .data, validation: validation, queue: queue,
            downloadProgress: downloadProgress, completion: completion)
    }

    /// A task that sends `body` with `request` and serializes the reply with `serializer`.
    public func uploadTask<Serializer: ResponseSerializer>(
        with request: URLRequest, from body: UploadBody, serializer: Serializer, validation: Validation = .default,
        queue: CallbackQueue = .default, uploadProgress: (@Sendable (Progress) -> Void)? = nil,
        downloadProgress: (@Sendable (Progress) -> Void)? = nil,
        completion: @escaping @Sendable (DataResponse<Serializer.Value>) -> Void
    ) -> UploadTask {
        makeDataTask(
            request, kind: .upload(body), serializer: serializer, validation: validation, queue: queue,
            uploadProgress: uploadProgress, downloadProgress: downloadProgress, completion: completion)
    }

    /// A task that sends `body` with `request` and delivers the reply as `Data`.
    public func uploadTask(
        with request: URLRequest, from body: UploadBody, validation: Validation = .default,
        queue: CallbackQueue = .default, uploadProgress: (@Sendable (Progress) -> Void)? = nil,
        completion: @escaping @Sendable (DataResponse<Data>) -> Void
    ) -> UploadTask {
        uploadTask(
            with: request, from: body, serializer: .data, validation: validation, queue: queue,
            uploadProgress: uploadProgress, completion: completion)
    }

    private func makeDataTask<Serializer: ResponseSerializer>(
        _ request: URLRequest, kind: TransferTask.Kind, serializer: Serializer, validation: Validation,
        queue: CallbackQueue, uploadProgress: (@Sendable (Progress) -> Void)?,
        downloadProgress: (@Sendable (Progress) -> Void)?,
        completion: @escaping @Sendable (DataResponse<Serializer.Value>) -> Void
    ) -> DataTask {
        var settings = settings(for: queue)
        var finisher = dataFinisher(
            serializer: serializer, validation: validation, delivery: settings.delivery, completion: completion)
        if let cache = cacheBinding() {
            // The cache settles the outcome (304 merged, stale on error, stored) before validation sees it.
            settings.cache = cache
            let serialize = finisher
            finisher = { outcome, handle in serialize(cache.settle(outcome), handle) }
        }
        let transfer = TransferTask(
            core: core, request: prepared(request), kind: kind, validation: validation, options: taskOptions,
            settings: settings, events: events, finisher: finisher)
        let task = DataTask(transfer: transfer)
        if let uploadProgress { task.addProgressHandler(.upload, uploadProgress) }
        if let downloadProgress { task.addProgressHandler(.download, downloadProgress) }
        transfer.prepare(handle: task)
        sweepSideFiles(for: kind)
        return task
    }

    /// The manager's cache as a transfer uses it; `nil` without one.
    func cacheBinding() -> CacheBinding? {
        guard let cache = configuration.responseCache else { return nil }
        return CacheBinding(
            cache: cache, secrets: taskOptions.sensitiveHeaders,
            revalidate: { [weak self] request, ended in
                // Its answer refreshes (or replaces) the entry; nobody waits for it.
                guard let self else { return ended() }
                self.dataTask(with: request) { _ in ended() }.resume()
            })
    }

    /// Validation and serialization on the processing queue (or where the transfer ended, for a
    /// serializer that needs no queue), then one completion.
    private func dataFinisher<Serializer: ResponseSerializer>(
        serializer: Serializer, validation: Validation, delivery: Delivery,
        completion: @escaping @Sendable (DataResponse<Serializer.Value>) -> Void
    ) -> TransferTask.Finisher {
        let processingQueue = processingQueue
        let events = events
        let finish: @Sendable (TransferOutcome, (any SessionTask)?) -> Void = { outcome, handle in
            let result: Result<Serializer.Value, CourierError>
            if let error = outcome.error {
                result = .failure(error.adding(url: nil, response: nil, body: outcome.data))
            } else {
                result = Self.serialize(outcome, serializer: serializer, validation: validation)
            }
            let response = DataResponse(
                request: outcome.request, response: outcome.response, data: outcome.data, result: result,
                metrics: outcome.metrics)
            events.emit(
                .completed(
                    TaskCompletionEvent(
                        response: outcome.response, data: outcome.data, value: response.value, fileURL: nil,
                        error: response.error, metrics: outcome.metrics)), for: handle)
            delivery.run { completion(response) }
        }
        guard serializer.needsProcessingQueue else { return finish }
        return { outcome, handle in processingQueue.async { finish(outcome, handle) } }
    }

    private static func serialize<Serializer: ResponseSerializer>(
        _ outcome: TransferOutcome, serializer: Serializer, validation: Validation
    ) -> Result<Serializer.Value, CourierError> {
        do {
            try validation.validate(request: outcome.request, response: outcome.response, data: outcome.data)
        } catch {
            return .failure(error.adding(url: outcome.request.url, response: outcome.response, body: outcome.data))
        }
        return serializer.result(request: outcome.request, response: outcome.response, data: outcome.data, body: outcome.data)
    }
}
