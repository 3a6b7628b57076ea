import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
internal import CourierSupport

/// A set of tasks run together (AFNetworking's `batchOfRequestOperations`): a progress callback
/// `(finished, total)` after each task completes, and one completion with every task's result,
/// in the order the requests were given. Cancelling the batch cancels the tasks still running;
/// they complete as cancelled and the batch still completes once.
public final class Batch: Sendable {
    /// The tasks, in request order.
    public let tasks: [DataTask]

    init(tasks: [DataTask]) {
        self.tasks = tasks
    }

    /// Cancels every task that has not finished.
    public func cancel() {
        for task in tasks { task.cancel() }
    }
}

extension SessionManager {
    /// Runs `requests` as data tasks serialized with `serializer`. `progress(finished, total)` is
    /// called after each task completes, then `completion` once with all responses in request
    /// order, on `queue`.
    /// With ``CallbackQueue/immediate`` the callbacks run on Courier's threads as tasks finish
    /// and may overlap; on a serial queue they come one at a time with `finished` increasing.
    @discardableResult
    public func batch<Serializer: ResponseSerializer>(
        _ requests: [URLRequest], serializer: Serializer, validation: Validation = .default,
        queue: CallbackQueue = .default, progress: (@Sendable (_ finished: Int, _ total: Int) -> Void)? = nil,
        completion: @escaping @Sendable ([DataResponse<Serializer.Value>]) -> Void
    ) -> Batch {
        let delivery = settings(for: queue).delivery
        let collector = BatchCollector<Serializer.Value>(count: requests.count, delivery: delivery)
        // The tasks' completions run inline on Courier's processing threads; the collector
        // counts them in order and sends progress and the final completion to `queue`.
        let tasks = requests.enumerated().map { index, request in
            dataTask(with: request, serializer: serializer, validation: validation, queue: .immediate) { response in
                collector.record(response, at: index) { finished, results in
                    progress?(finished, requests.count)
                    if let results { completion(results) }
                }
            }
        }
        if requests.isEmpty { delivery.run { completion([]) } }
        for task in tasks { task.resume() }
        return Batch(tasks: tasks)
    }

    /// Runs `requests` and returns every response in request order. Cancelling the Swift `Task`
    /// cancels the batch.
    public func batch<Serializer: ResponseSerializer>(
        _ requests: [URLRequest], serializer: Serializer, validation: Validation = .default,
        progress: (@Sendable (_ finished: Int, _ total: Int) -> Void)? = nil
    ) async -> [DataResponse<Serializer.Value>] {
        let holder = Locked<Batch?>(nil)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let batch = self.batch(
                    requests, serializer: serializer, validation: validation, queue: .immediate, progress: progress
                ) { continuation.resume(returning: $0) }
                holder.withLock { $0 = batch }
                if Task.isCancelled { batch.cancel() }
            }
        } onCancel: {
            holder.withLock { $0 }?.cancel()
        }
    }
}

/// Collects a batch's responses and hands each event to the delivery in the order it happened.
private final class BatchCollector<Value: Sendable>: Sendable {
    private let state: Locked<(results: [DataResponse<Value>?], finished: Int)>
    private let delivery: Delivery

    init(count: Int, delivery: Delivery) {
        state = Locked((Array(repeating: nil, count: count), 0))
        self.delivery = delivery
    }

    /// Records `response`; `report(finished, allResultsWhenDone)` is delivered once per call.
    func record(
        _ response: DataResponse<Value>, at index: Int,
        report: @escaping @Sendable (Int, [DataResponse<Value>]?) -> Void
    ) {
        let immediate = state.withLock { state -> (@Sendable () -> Void)? in
            state.results[index] = response
            state.finished += 1
            let finished = state.finished
            let all = finished == state.results.count ? state.results.compactMap { $0 } : nil
            let event: @Sendable () -> Void = { report(finished, all) }
            // Enqueued under the lock so a serial queue sees the events in order; only the
            // enqueueing happens here, never the callback itself.
            guard let queue = delivery.queue else { return event }
            queue.async(group: delivery.group, execute: event)
            return nil
        }
        if let immediate { delivery.run(immediate) }
    }
}
