import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
internal import CourierSupport

/// What a streamed body holds between the network and its one consumer: the response head, the
/// chunks not yet taken, and how the stream ended.
///
/// The transfer appends (from the manager's serial delegate queue, so chunks stay in order) and
/// ends the stream; the consumer either pulls (``next()``: `ByteStream` and its views) or is
/// pushed to on a callback queue (``startPump(_:)``: the handle form). An ending is queued
/// behind the chunks, so a consumer sees every byte that arrived before it, except when the
/// consumer itself cancels, which drops what is held at once.
///
/// One lock around one state; continuations are resumed and callbacks run after it is released.
final class StreamBuffer: Sendable {
    typealias Ending = Result<Void, CourierError>

    /// The push consumer of the handle form.
    struct Pump: Sendable {
        let delivery: Delivery
        let onResponse: (@Sendable (HTTPURLResponse) -> Void)?
        let onChunk: @Sendable (Data) -> Void
        let onEnd: @Sendable (Ending) -> Void
    }

    private struct State {
        /// The chunks not yet taken (ByteRing.swift says why they are copied there).
        let chunks: ByteRing
        var statistics = StreamStatistics()
        var response: HTTPURLResponse?
        var responseWaiter: CheckedContinuation<Result<HTTPURLResponse, CourierError>, Never>?
        /// How the stream ended, queued behind the chunks.
        var ending: Ending?
        /// The consumer has been given the ending: afterwards it only gets `nil`.
        var endingDelivered = false
        var waiter: CheckedContinuation<Result<Data?, CourierError>, Never>?
        /// Called once the buffered bytes are down to `threshold` (a transfer paused for the consumer).
        var drain: (threshold: Int, action: @Sendable () -> Void)?
        var cancelTransfer: (@Sendable () -> Void)?
        var pump: Pump?
        var pumpRunning = false
        var responsePendingForPump = false
    }

    private let state: Locked<State>
    let url: URL?

    /// A buffer for a stream that holds at most `limit` bytes plus one chunk.
    init(url: URL?, limit: Int) {
        self.url = url
        // One chunk past the limit is allowed; libcurl hands over at most 16 KiB, 64 KiB is slack.
        self.state = Locked(State(chunks: ByteRing(expectedMaximum: limit + 64 * 1024)))
    }

    /// How the transfer is stopped when the consumer goes away (set once the task exists; it
    /// must not hold the buffer's owner strongly).
    func setCancelTransfer(_ cancel: @escaping @Sendable () -> Void) {
        state.withLock { $0.cancelTransfer = cancel }
    }

    var statistics: StreamStatistics { state.withLock { $0.statistics } }
    var bufferedBytes: Int { state.withLock { $0.statistics.bufferedBytes } }
    var hasResponse: Bool { state.withLock { $0.response != nil } }

    // MARK: - Producer (the transfer)

    /// The response head passed validation: the consumer may start.
    func deliverResponse(_ response: HTTPURLResponse) {
        let (waiter, runPump) = state.withLock { state -> (CheckedContinuation<Result<HTTPURLResponse, CourierError>, Never>?, Bool) in
            guard state.response == nil, state.ending == nil else { return (nil, false) }
            state.response = response
            defer { state.responseWaiter = nil }
            if state.pump?.onResponse != nil { state.responsePendingForPump = true }
            return (state.responseWaiter, claimPump(&state))
        }
        waiter?.resume(returning: .success(response))
        if runPump { schedulePump() }
    }

    /// Adds a chunk for the consumer (ignored once the stream has ended).
    func append(_ data: Data) {
        guard !data.isEmpty else { return }
        let (waiter, runPump) = state.withLock { state -> (CheckedContinuation<Result<Data?, CourierError>, Never>?, Bool) in
            guard state.ending == nil else { return (nil, false) }
            if let waiter = state.waiter {
                // The consumer is waiting: hand it over without holding it.
                state.waiter = nil
                state.statistics.bytesDelivered += Int64(data.count)
                return (waiter, false)
            }
            state.chunks.append(data)
            state.statistics.bufferedBytes += data.count
            state.statistics.highWaterMark = max(state.statistics.highWaterMark, state.statistics.bufferedBytes)
            return (nil, claimPump(&state))
        }
        waiter?.resume(returning: .success(data))
        if runPump { schedulePump() }
    }

    /// Counts a pause for the consumer.
    func notePause() {
        state.withLock { $0.statistics.pauses += 1 }
    }

    /// Calls `action` once at most `threshold` bytes are held (now, if that is already so).
    func whenDrained(atMost threshold: Int, _ action: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if state.statistics.bufferedBytes <= threshold || state.ending != nil { return true }
            state.drain = (threshold, action)
            return false
        }
        if now { action() }
    }

    /// Ends the stream; the consumer sees `ending` after the chunks held. Only the first ending counts.
    func finish(_ ending: Ending) {
        enum Wake {
            case none, responseWaiter(CheckedContinuation<Result<HTTPURLResponse, CourierError>, Never>, CourierError), consumer(
                CheckedContinuation<Result<Data?, CourierError>, Never>, Ending), pump
        }
        var wakes: [Wake] = []
        state.withLock { state in
            guard state.ending == nil else { return }
            state.ending = ending
            state.drain = nil
            if let waiter = state.responseWaiter {
                state.responseWaiter = nil
                let error: CourierError
                switch ending {
                case .failure(let failure): error = failure
                case .success: error = .noResponse(url: url)
                }
                wakes.append(.responseWaiter(waiter, error))
            }
            if let waiter = state.waiter, state.chunks.isEmpty {
                state.waiter = nil
                state.endingDelivered = true
                wakes.append(.consumer(waiter, ending))
            }
            if state.pump != nil {
                state.pump?.delivery.group?.enter()  // left once the pump has reported the ending
                if claimPump(&state) { wakes.append(.pump) }
            }
        }
        for wake in wakes {
            switch wake {
            case .none: break
            case .responseWaiter(let waiter, let error): waiter.resume(returning: .failure(error))
            case .consumer(let waiter, let ending): waiter.resume(returning: ending.map { nil })
            case .pump: schedulePump()
            }
        }
    }

    // MARK: - Pull consumer

    /// Waits for the response head (or the failure that came instead). Cancelling the waiting
    /// Swift task cancels the transfer.
    func awaitResponse() async -> Result<HTTPURLResponse, CourierError> {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Result<HTTPURLResponse, CourierError>? in
                    if let response = state.response { return .success(response) }
                    if case .failure(let error)? = state.ending { return .failure(error) }
                    if state.ending != nil { return .failure(.noResponse(url: url)) }
                    state.responseWaiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            consumerCancelled()
        }
    }

    /// The next chunk, `nil` at the end, or the failure that ended the stream. Cancelling the
    /// calling Swift task cancels the transfer and fails with ``CourierError/Code-swift.struct/cancelled``.
    func next() async -> Result<Data?, CourierError> {
        if Task.isCancelled {
            // Checked first: a consumer cancelled while chunks are held must not read on, nor
            // see a clean end of the bytes it dropped.
            consumerCancelled()
            return .failure(.cancelled(url: url))
        }
        var drained: (@Sendable () -> Void)?
        if let ready = state.withLock({ take(&$0, drained: &drained) }) {
            drained?()
            return ready
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                var drained: (@Sendable () -> Void)?
                let ready = state.withLock { state -> Result<Data?, CourierError>? in
                    if let ready = take(&state, drained: &drained) { return ready }
                    state.waiter = continuation
                    return nil
                }
                drained?()
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            consumerCancelled()
        }
    }

    /// What the consumer gets now, if anything: a chunk, or the ending once no chunk is left.
    private func take(_ state: inout State, drained: inout (@Sendable () -> Void)?) -> Result<Data?, CourierError>? {
        if let chunk = state.chunks.removeFirst() {
            state.statistics.bufferedBytes -= chunk.count
            state.statistics.bytesDelivered += Int64(chunk.count)
            if let drain = state.drain, state.statistics.bufferedBytes <= drain.threshold {
                state.drain = nil
                drained = drain.action
            }
            return .success(chunk)
        }
        if state.endingDelivered { return .success(nil) }
        if let ending = state.ending {
            state.endingDelivered = true
            state.chunks.release()  // nothing more will be held
            return ending.map { nil }
        }
        return nil
    }

    /// The consumer went away (its task was cancelled, or it dropped the stream): what is held
    /// is dropped and the transfer cancelled.
    func consumerCancelled() {
        let (cancel, waiter, responseWaiter) = state.withLock { state in
            let waiter = state.waiter
            let responseWaiter = state.responseWaiter
            state.waiter = nil
            state.responseWaiter = nil
            state.drain = nil
            state.chunks.release()
            state.statistics.bufferedBytes = 0
            if state.ending == nil { state.ending = .failure(.cancelled(url: url)) }
            if waiter != nil { state.endingDelivered = true }
            return (state.cancelTransfer, waiter, responseWaiter)
        }
        waiter?.resume(returning: .failure(.cancelled(url: url)))
        responseWaiter?.resume(returning: .failure(.cancelled(url: url)))
        cancel?()
    }

    // MARK: - Push consumer

    /// Hands everything to `pump`, in order, on its queue: the head, each chunk, then the ending.
    func startPump(_ pump: Pump) {
        let run = state.withLock { state -> Bool in
            state.pump = pump
            if state.response != nil, pump.onResponse != nil { state.responsePendingForPump = true }
            if state.ending != nil { pump.delivery.group?.enter() }
            return claimPump(&state)
        }
        if run { schedulePump() }
    }

    /// Marks the pump running when it has work and is idle; the caller then schedules it.
    private func claimPump(_ state: inout State) -> Bool {
        guard state.pump != nil, !state.pumpRunning else { return false }
        let hasWork =
            state.responsePendingForPump || !state.chunks.isEmpty
            || (state.ending != nil && !state.endingDelivered)
        guard hasWork else { return false }
        state.pumpRunning = true
        return true
    }

    private func schedulePump() {
        guard let delivery = state.withLock({ $0.pump?.delivery }) else { return }
        delivery.withoutGroup.run { [self] in runPump() }
    }

    /// Runs on the pump's queue, one run at a time: delivers until nothing is left.
    private func runPump() {
        while true {
            enum Step { case response(HTTPURLResponse), chunk(Data), end(Ending), idle }
            var drained: (@Sendable () -> Void)?
            let (step, pump) = state.withLock { state -> (Step, Pump?) in
                guard let pump = state.pump else { return (.idle, nil) }
                if state.responsePendingForPump, let response = state.response {
                    state.responsePendingForPump = false
                    return (.response(response), pump)
                }
                switch take(&state, drained: &drained) {
                case .success(let chunk?)?: return (.chunk(chunk), pump)
                case .success(nil)? where state.ending != nil:
                    state.pump = nil
                    return (.end(state.ending!), pump)
                case .failure(let error)?:
                    state.pump = nil
                    return (.end(.failure(error)), pump)
                default:
                    state.pumpRunning = false
                    return (.idle, pump)
                }
            }
            drained?()
            guard let pump else { return }
            switch step {
            case .response(let response): pump.onResponse?(response)
            case .chunk(let chunk): pump.onChunk(chunk)
            case .end(let ending):
                pump.onEnd(ending)
                pump.delivery.group?.leave()
                return
            case .idle: return
            }
        }
    }
}
