import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A streamed body: the response head goes to the consumer once it passes validation, each chunk
/// goes to the consumer's ``StreamBuffer`` instead of memory, and a consumer that falls behind
/// is handled by the stream's ``StreamPolicy``.
///
/// Bytes handed to a consumer cannot be taken back, so after the first one a stream never starts
/// over: a retry, a `resume()` after `suspend()`, or a pause for the consumer continues with
/// `Range`/`If-Range` (the download machinery) or the stream fails.
extension TransferTask {
    /// Whether the next attempt continues the body held instead of starting over: a download's
    /// partial file, or the bytes a stream already handed to its consumer.
    func keepsBodyAcrossAttempts(_ state: State) -> Bool {
        if let stream = state.stream { return stream.accepted }
        return state.file != nil  // a download: its partial file
    }

    /// A stream whose consumer has bytes that no later attempt could continue (no strong
    /// validator): it must not be retried or resumed, because starting over would repeat them.
    func streamCannotContinue(_ state: State) -> Bool {
        guard let stream = state.stream, stream.hasDelivered(received: state.received) else { return false }
        return !canContinueByRange(state)
    }

    /// A stream under way refuses an answer that would start its body over (`nil` otherwise).
    func streamRefusesRestart(_ why: String, _ response: HTTPURLResponse, _ state: inout State)
        -> ((URLSessionTask) -> TransferAction)?
    {
        guard let stream = state.stream, stream.hasDelivered(received: state.received) else { return nil }
        state.failure = .invalidResponse(
            "\(why); the \(state.received) bytes already delivered cannot be taken back, so the stream cannot start over",
            response)
        return { .cancel($0) }
    }

    /// A final response for a stream: accepted when validation passes, so an error page never
    /// looks like a stream (it is held in memory as a data task's body and becomes the error).
    /// `nil` when it is not accepted, or the task is no stream.
    func acceptStreamResponse(_ response: HTTPURLResponse, _ state: inout State) -> TransferAction? {
        guard let stream = state.stream else { return nil }
        do {
            try validation.validate(request: state.currentRequest, response: response, data: nil)
        } catch {
            if stream.accepted {
                // A retry's answer to a stream whose head the consumer already has.
                state.failure = error.adding(url: originalRequest.url, response: response, body: nil)
                return state.phase.attempt.map { .cancel($0) } ?? TransferAction.none
            }
            return nil
        }
        if stream.accepted { return TransferAction.none }  // a retry before any byte: same resource
        state.stream?.accepted = true
        state.stream?.lastActivity = .now
        return .streamResponse(stream.buffer, response)
    }

    /// A chunk of an accepted stream: checked against its range, counted, and handed to the
    /// consumer, unless the consumer is too far behind.
    func streamData(_ data: Data, _ task: URLSessionTask, _ state: inout State) -> TransferAction {
        guard let buffer = state.stream?.buffer, let policy = state.stream?.policy else { return .none }
        if let end = state.spanEnd, state.received + Int64(data.count) > end {
            state.failure = .invalidResponse("the 206 went on past the end of its range (byte \(end))", state.response)
            return .cancel(task)
        }
        let canContinue = canContinueByRange(state)
        var then = TransferAction.none
        switch state.stream?.chunkArrived(count: data.count, buffered: buffer.bufferedBytes, canContinue: canContinue, now: .now) {
        case .overflow?:
            state.failure = .bufferOverflow(
                policy, canPause: policy.overflow == .pause, method: originalRequest.httpMethod,
                mayContinue: AutomaticResend.isAllowed(.rangeContinuation, for: originalRequest), url: originalRequest.url)
            return .cancel(task)
        case .deliverThenPause(let drainedTo)?:
            // The next attempt asks for what follows this chunk once the consumer caught up.
            state.phase.attemptThrottled(.consumer)
            then = .pauseStream(task, buffer, drainedTo: drainedTo)
        case .deliver?, nil:
            break
        }
        state.received += Int64(data.count)
        if case .pauseStream = then { notePause(.consumer, &state) }
        if case .none = then, let (observers, snapshot) = dueProgress(.download, &state) {
            then = .progress(observers, snapshot)
        }
        return .streamChunk(buffer, data, then: then)
    }

    /// The consumer has caught up: the next attempt asks for the rest (unless the task was
    /// paused, cancelled or failed meanwhile).
    func continueAfterStreamDrain() {
        continueAfterPause(.consumer)
    }

    // MARK: - Waits: the head, and idle gaps

    /// An attempt starts (`awaitingHead`), or its response head arrived: the clock of the
    /// stream's waits starts again (StreamBody.swift), and the timer is moved to the new limit,
    /// which may be shorter than the one it was set for.
    func restartWaitClock(awaitingHead: Bool, _ state: inout State) {
        guard let next = state.stream?.waitRestarted(awaitingHead: awaitingHead, now: .now) else { return }
        state.stream?.idleTimer?.schedule(deadline: .now() + max(0, next.seconds))
    }

    /// Starts the clock of the stream's waits on the first `resume()`, for a stream whose policy
    /// limits the wait for the head or the gaps between chunks. These limits are Courier's to
    /// keep: URLSession's request timeout is set past them (``StreamPolicy/urlSessionTimeout``).
    func armIdleTimer() {
        guard case .stream(_, let policy) = kind, let first = policy.headLimit ?? policy.idleTimeout else { return }
        let timer = DispatchSource.makeTimerSource(queue: core.callQueue)
        timer.schedule(deadline: .now() + max(0, first.seconds))
        timer.setEventHandler { [weak self] in self?.checkWaits() }
        let armed = state.withLock { state -> Bool in
            guard !state.phase.isCompleted else { return false }
            state.stream?.idleTimer = timer
            state.stream?.lastActivity = .now
            return true
        }
        if armed { timer.resume() }
    }

    /// Ends the current attempt with ``CourierError/Code-swift.struct/timedOut`` when the server
    /// has been silent longer than the current wait allows (the head limit before the attempt's
    /// head, ``StreamPolicy/idleTimeout`` after it), as URLSession's request timeout would have:
    /// the retriers are then asked, and without a retry the stream fails. Otherwise it looks again
    /// when the limit could pass. Time between attempts (paused for the consumer, waiting to
    /// retry) is not silence.
    private func checkWaits() {
        let expired = state.withLock { state -> URLSessionTask? in
            guard state.failure == nil, let timer = state.stream?.idleTimer else { return nil }
            let attempt = state.phase.state == .running ? state.phase.attempt : nil
            let check = state.stream?.waitChecked(
                now: .now, hasAttempt: attempt != nil, launching: state.phase.isLaunching, url: originalRequest.url)
            switch check {
            case .expired?: return attempt
            case .lookAgain(let after)?: timer.schedule(deadline: .now() + after.seconds)
            case .none?, nil: break
            }
            return nil
        }
        if let expired { core.cancel(expired) }
    }
}

extension CourierError {
    /// The stream's consumer fell more than its buffer limit behind. `mayContinue`: the request is
    /// one a `Range` continuation may send again (``AutomaticResend``).
    static func bufferOverflow(
        _ policy: StreamPolicy, canPause: Bool, method: String?, mayContinue: Bool, url: URL?
    ) -> CourierError {
        let why: String
        if !canPause {
            why = "and StreamPolicy.overflow is .fail (.pause would stop the transfer and continue it once the consumer catches up)"
        } else if !mayContinue {
            why = "and the stream cannot pause: it would continue with Range, which only a GET can, "
                + "and a \((method ?? "GET").uppercased()) is never sent again by itself"
        } else {
            why = "and the stream cannot pause: continuing with Range needs a strong validator (ETag or Last-Modified) and an unencoded body"
        }
        return bufferOverflow(policy, why, url: url)
    }

    /// The stream's consumer fell more than its buffer limit behind; `why` says why that ends it.
    static func bufferOverflow(_ policy: StreamPolicy, _ why: String, url: URL?) -> CourierError {
        CourierError(
            code: .bufferOverflow,
            message: "the consumer fell more than \(policy.bufferLimit) bytes (StreamPolicy.bufferLimit) behind the network, \(why)",
            url: url)
    }

    /// No response head arrived within the stream's head limit (``StreamPolicy/headTimeout``, or
    /// its idle timeout when it has none).
    static func headTimeout(_ limit: Duration, policy: StreamPolicy, url: URL?) -> CourierError {
        let setting = policy.headTimeout != nil ? "StreamPolicy.headTimeout" : "StreamPolicy.idleTimeout, which bounds the head when headTimeout is nil"
        return CourierError(
            code: .timedOut, message: "no response head arrived within \(Backoff.describe(limit)) (\(setting))", url: url)
    }

    /// No byte arrived within the stream's idle timeout.
    static func idleTimeout(_ idle: Duration, url: URL?) -> CourierError {
        CourierError(
            code: .timedOut, message: "no bytes arrived for \(Backoff.describe(idle)) (StreamPolicy.idleTimeout)", url: url)
    }

    /// A stream paused with `suspend()` whose bytes cannot be continued with `Range`.
    static func streamCannotContinue(url: URL?) -> CourierError {
        CourierError(
            code: .invalidRequest,
            message: "the stream cannot be resumed: bytes were already delivered and the response has no strong validator "
                + "(ETag or Last-Modified) to continue them with Range",
            url: url)
    }
}
