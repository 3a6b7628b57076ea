import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A download whose published file was read by a response serializer.
public struct SerializedDownloadResponse<Value: Sendable>: Sendable {
    /// The request as last sent.
    public let request: URLRequest?
    /// The final HTTP response, if one arrived.
    public let response: HTTPURLResponse?
    /// The published file; `nil` when the download failed (a file that does not decode stays
    /// published: the download itself succeeded).
    public let fileURL: URL?
    /// The serializer's value, or why there is none (the download's error, or the serializer's).
    public let result: Result<Value, CourierError>
    /// How the download went: attempts, retries, bytes carried.
    public let report: DownloadReport
    /// The task's timeline.
    public let metrics: TaskMetrics?

    /// The value, on success.
    public var value: Value? { try? result.get() }
    /// The error, if the download or the serializer failed.
    public var error: CourierError? {
        if case .failure(let error) = result { return error }
        return nil
    }
}

extension DownloadResponse {
    /// The published file read by `serializer` (e.g. `.decodable(T.self)`, `.json`, `.string`).
    ///
    /// The file is mapped into memory, not read into a buffer of its own: a 300 MB file costs the
    /// serializer's own work on top of its pages, never a second 300 MB copy made here. Runs where it
    /// is called; ``SessionManager/downloadTask(with:to:serializer:policy:validation:queue:progress:completion:)``
    /// calls it on the manager's processing queue.
    public func serialized<Serializer: ResponseSerializer>(by serializer: Serializer) -> Result<Serializer.Value, CourierError> {
        let file: URL
        switch result {
        case .failure(let error): return .failure(error)
        case .success(let url): file = url
        }
        let url = request?.url
        let data: Data
        do {
            data = try Data(contentsOf: file, options: .alwaysMapped)
        } catch {
            return .failure(
                CourierError(
                    code: .fileSystem, message: "cannot read the downloaded file \(file.path): \(error)", url: url,
                    response: response, underlyingError: error))
        }
        return serializer.result(
            request: request, response: response, data: data, body: nil,
            source: " on the downloaded file \(file.lastPathComponent)")
    }
}

extension SessionManager {
    /// A download whose published file is then read by `serializer`, off the caller's queue (on
    /// the manager's processing queue when the serializer needs one), before `completion` runs on
    /// `queue`. Everything else is ``downloadTask(with:to:policy:validation:queue:progress:completion:)``'s:
    /// resuming, retries, validation, publication. The file is mapped, not copied
    /// (``DownloadResponse/serialized(by:)``), and stays published whether or not it decodes.
    public func downloadTask<Serializer: ResponseSerializer>(
        with request: URLRequest, to destination: DownloadDestination, serializer: Serializer,
        policy: DownloadPolicy = .default, validation: Validation = .default, queue: CallbackQueue = .default,
        progress: (@Sendable (Progress) -> Void)? = nil,
        completion: @escaping @Sendable (SerializedDownloadResponse<Serializer.Value>) -> Void
    ) -> DownloadTask {
        let delivery = settings(for: queue).delivery
        let processingQueue = processingQueue
        return downloadTask(
            with: request, to: destination, policy: policy, validation: validation, queue: .immediate, progress: progress
        ) { download in
            let finish: @Sendable () -> Void = {
                let serialized = SerializedDownloadResponse(
                    request: download.request, response: download.response, fileURL: download.fileURL,
                    result: download.serialized(by: serializer), report: download.report, metrics: download.metrics)
                delivery.run { completion(serialized) }
            }
            if serializer.needsProcessingQueue, download.error == nil { processingQueue.async(execute: finish) } else { finish() }
        }
    }

    /// Downloads `request` to `destination` and reads the published file with `serializer`;
    /// returns the value, the file and the response. Cancelling the awaiting Swift `Task` cancels
    /// the download (keeping its bytes, as ``download(for:to:policy:validation:cancellation:progress:)`` does).
    public func download<Serializer: ResponseSerializer>(
        for request: URLRequest, to destination: DownloadDestination, serializer: Serializer,
        policy: DownloadPolicy = .default, validation: Validation = .default
    ) async throws(CourierError) -> (value: Serializer.Value, file: URL, http: HTTPURLResponse) {
        let (file, http) = try await download(for: request, to: destination, policy: policy, validation: validation)
        let response = DownloadResponse(request: request, response: http, result: .success(file))
        // As for data tasks: a serializer that does no work is not worth a queue hop.
        guard serializer.needsProcessingQueue else { return (try response.serialized(by: serializer).get(), file, http) }
        let processingQueue = processingQueue
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Serializer.Value, CourierError>, Never>) in
            processingQueue.async { continuation.resume(returning: response.serialized(by: serializer)) }
        }
        return (try result.get(), file, http)
    }
}
