import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A stream task's kind: the body is handed to a consumer as it arrives (``StreamTask``).
public enum StreamTransfer: TaskKind {}
/// A task whose body is handed to a consumer as it arrives: ``ByteStream``'s task, or the
/// handle of ``SessionManager/streamTask(with:policy:validation:queue:onResponse:onChunk:completion:)``.
public typealias StreamTask = CourierTask<StreamTransfer>

extension CourierTask where Kind == StreamTransfer {
    /// How much the stream holds and has held, now.
    public var statistics: StreamStatistics {
        guard case .stream(let buffer, _) = transfer.kind else { return StreamStatistics() }
        return buffer.statistics
    }
}

/// How a streamed body ended, for the handle form's completion.
public struct StreamResponse: Sendable {
    /// The request of the last attempt.
    public let request: URLRequest?
    /// The response head handed to the consumer (or the refused one, for a validation failure).
    public let response: HTTPURLResponse?
    /// `nil` when every byte of the body was delivered; otherwise why the stream ended early.
    public let error: CourierError?
    /// What the stream held and delivered.
    public let statistics: StreamStatistics
}

extension SessionManager {
    /// Fetches `request` and returns its body as a stream, once the response head is in and
    /// has passed `validation` (an error page throws, with its body, instead of looking like a
    /// stream). The shape of Darwin's `URLSession.bytes(for:)`: a port renames the call.
    ///
    /// The body arrives in a buffer bounded by `policy` (see ``StreamPolicy``), which also sets
    /// how long the head and the gaps between chunks may take: URLSession's request timeout
    /// (`timeoutIntervalForRequest`, `request.timeoutInterval`) does not apply. Cancelling the
    /// Swift task that awaits this call or iterates the stream, or dropping the stream, cancels
    /// the transfer. The manager's retry policy and interceptors apply; once bytes were handed
    /// over, a retry continues them with `Range` or does not happen.
    public func bytes(
        for request: URLRequest, policy: StreamPolicy = .default, validation: Validation = .default
    ) async throws(CourierError) -> (ByteStream, HTTPURLResponse) {
        try await bytes(for: request, policy: policy, validation: validation, retried: true)
    }

    /// ``bytes(for:policy:validation:)``; with `retried` false, only the retriers that retry
    /// only refusals (an ``AuthenticationInterceptor`` answering a 401) are asked about a failed
    /// attempt, and the adapters still run: an event stream's connection, whose other retry is
    /// the stream's reconnection (Docs/Retries.md). `control` learns the task as soon as it
    /// exists, so a sequence's `cancel()` reaches it while the head is awaited.
    func bytes(
        for request: URLRequest, policy: StreamPolicy, validation: Validation, retried: Bool, control: StreamControl? = nil
    ) async throws(CourierError) -> (ByteStream, HTTPURLResponse) {
        let (task, buffer) = makeStreamTask(request, policy: policy, validation: validation, queue: .immediate, retried: retried)
        let source = ByteStream.Source(buffer: buffer, task: task, policy: policy)
        control?.connecting(task)
        task.resume()
        switch await buffer.awaitResponse() {
        case .success(let response): return (ByteStream(source: source), response)
        case .failure(let error): throw error
        }
    }

    /// Fetches `url` with GET and returns its body as a stream (see ``bytes(for:policy:validation:)``).
    public func bytes(
        from url: URL, policy: StreamPolicy = .default, validation: Validation = .default
    ) async throws(CourierError) -> (ByteStream, HTTPURLResponse) {
        try await bytes(for: URLRequest(url: url), policy: policy, validation: validation)
    }

    /// A task that hands `request`'s body to `onChunk` as it arrives: the callback form of
    /// ``bytes(for:policy:validation:)``, with the same validation, bounded buffer and overflow
    /// policy (the bytes queued for `onChunk` are what the buffer holds).
    ///
    /// Created suspended: call `resume()`. On `queue`, in order and one at a time: `onResponse`
    /// once the head passes validation, `onChunk` for each chunk, then `completion` exactly once.
    public func streamTask(
        with request: URLRequest, policy: StreamPolicy = .default, validation: Validation = .default,
        queue: CallbackQueue = .default, onResponse: (@Sendable (HTTPURLResponse) -> Void)? = nil,
        onChunk: @escaping @Sendable (Data) -> Void, completion: @escaping @Sendable (StreamResponse) -> Void
    ) -> StreamTask {
        let (task, buffer) = makeStreamTask(request, policy: policy, validation: validation, queue: queue)
        let transfer = task.transfer
        buffer.startPump(
            StreamBuffer.Pump(
                delivery: settings(for: queue).delivery, onResponse: onResponse, onChunk: onChunk,
                onEnd: { [weak buffer] ending in
                    let request = transfer.state.withLock { $0.currentRequest }
                    let error: CourierError?
                    if case .failure(let failure) = ending { error = failure } else { error = nil }
                    completion(
                        StreamResponse(
                            request: request, response: error?.response ?? transfer.state.withLock { $0.response },
                            error: error, statistics: buffer?.statistics ?? StreamStatistics()))
                }))
        return task
    }

    private func makeStreamTask(
        _ request: URLRequest, policy: StreamPolicy, validation: Validation, queue: CallbackQueue, retried: Bool = true
    ) -> (StreamTask, StreamBuffer) {
        let buffer = StreamBuffer(url: request.url, limit: policy.bufferLimit)
        let events = events
        let finisher: TransferTask.Finisher = { outcome, handle in
            var ending: StreamBuffer.Ending = .success(())
            if let error = outcome.error {
                ending = .failure(error.adding(url: nil, response: nil, body: outcome.data))
            } else if !buffer.hasResponse {
                // The head was refused: the body held is the error page the validation reports.
                // Judged as the head was (TransferState+Streaming.swift, `data: nil`), never again with
                // the body: an empty body has no type to check, so a 200 text/html with no body
                // passed here and ended as "no HTTP response", a transient error the event stream
                // reconnected to (issue 31). The body still goes into the error.
                do throws(CourierError) {
                    try validation.validate(request: outcome.request, response: outcome.response, data: nil)
                    ending = .failure(.noResponse(url: outcome.request.url))
                } catch {
                    ending = .failure(error.adding(url: outcome.request.url, response: outcome.response, body: outcome.data))
                }
            }
            var failure: CourierError?
            if case .failure(let error) = ending { failure = error }
            events.emit(
                .completed(
                    TaskCompletionEvent(
                        response: outcome.response, data: outcome.data, value: nil, fileURL: nil, error: failure, metrics: outcome.metrics)),
                for: handle)
            buffer.finish(ending)
        }
        var request = prepared(request)
        // A stream's waits are its policy's: URLSession's request timeout (the session's, or the
        // request's own) must not cut a wait the policy allows (TransferTask+Streaming.swift keeps them).
        request.timeoutInterval = policy.urlSessionTimeout
        let transfer = TransferTask(
            core: core, request: request, kind: .stream(buffer, policy), validation: validation,
            options: retried ? taskOptions : taskOptions.keepingOnlyRefusalRetriers, settings: settings(for: queue), events: events,
            finisher: finisher)
        let task = StreamTask(transfer: transfer)
        // Weak: the task keeps the buffer, and a started task keeps itself until it completes.
        buffer.setCancelTransfer { [weak task] in task?.cancel() }
        transfer.prepare(handle: task)
        return (task, buffer)
    }
}
