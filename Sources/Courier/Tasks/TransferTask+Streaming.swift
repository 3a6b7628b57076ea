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
    /// A streamed body's own part of the task's state.
    struct StreamState {
        /// The consumer has the response head: body bytes now go to it.
        var accepted = false
        /// The timer of the stream's waits (``StreamPolicy/headTimeout``, ``StreamPolicy/idleTimeout``),
        /// cancelled on completion.
        var idleTimer: (any DispatchSourceTimer)?
        /// When the server last sent something (or an attempt started).
        var lastActivity = ContinuousClock.Instant.now
        /// The current attempt has no response head yet: its silence is bounded by the head limit.
        var awaitingHead = true
        /// The head or idle limit ended the current attempt: its URLSession task is being cancelled,
        /// and its completion reports this (TransferTask+URLSessionEvents.swift).
        var expiredWait: CourierError?
    }

    /// Whether the next attempt continues the body held instead of starting over: a download's
    /// partial file, or the bytes a stream already handed to its consumer.
    func keepsBodyAcrossAttempts(_ state: State) -> Bool {
        switch kind {
        case .download: return true
        case .stream: return state.stream.accepted
        case .data, .upload: return false
        }
    }

    /// A stream whose consumer has bytes that no later attempt could continue (no strong
    /// validator): it must not be retried or resumed, because starting over would repeat them.
    func streamCannotContinue(_ state: State) -> Bool {
        guard case .stream = kind, state.stream.accepted, state.received > 0 else { return false }
        return !canContinueByRange(state)
    }

    /// A stream under way refuses an answer that would start its body over (`nil` otherwise).
    func streamRefusesRestart(_ why: String, _ response: HTTPURLResponse, _ state: inout State)
        -> ((URLSessionTask) -> TransferAction)?
    {
        guard case .stream = kind, state.stream.accepted, state.received > 0 else { return nil }
        state.failure = .invalidResponse(
            "\(why); the \(state.received) bytes already delivered cannot be taken back, so the stream cannot start over",
            response)
        return { .cancel($0) }
    }

    /// A final response for a stream: accepted when validation passes, so an error page never
    /// looks like a stream (it is held in memory as a data task's body and becomes the error).
    /// `nil` when it is not accepted.
    func acceptStreamResponse(_ response: HTTPURLResponse, _ buffer: StreamBuffer, _ state: inout State) -> TransferAction? {
        do {
            try validation.validate(request: state.currentRequest, response: response, data: nil)
        } catch {
            if state.stream.accepted {
                // A retry's answer to a stream whose head the consumer already has.
                state.failure = error.adding(url: originalRequest.url, response: response, body: nil)
                return state.phase.attempt.map { .cancel($0) } ?? TransferAction.none
            }
            return nil
        }
        if state.stream.accepted { return TransferAction.none }  // a retry before any byte: same resource
        state.stream.accepted = true
        state.stream.lastActivity = .now
        return .streamResponse(buffer, response)
    }

    /// A chunk of an accepted stream: checked against its range, counted, and handed to the
    /// consumer, unless the consumer is too far behind.
    func streamData(
        _ data: Data, _ task: URLSessionTask, _ buffer: StreamBuffer, _ policy: StreamPolicy, _ state: inout State
    ) -> TransferAction {
        if let end = state.spanEnd, state.received + Int64(data.count) > end {
            state.failure = .invalidResponse("the 206 went on past the end of its range (byte \(end))", state.response)
            return .cancel(task)
        }
        if state.stream.idleTimer != nil { state.stream.lastActivity = .now }
        let held = buffer.bufferedBytes + data.count
        var then = TransferAction.none
        if held > policy.bufferLimit {
            guard policy.overflow == .pause, canContinueByRange(state) else {
                state.failure = .bufferOverflow(
                    policy, canPause: policy.overflow == .pause, method: originalRequest.httpMethod,
                    mayContinue: AutomaticResend.isAllowed(.rangeContinuation, for: originalRequest), url: originalRequest.url)
                return .cancel(task)
            }
            // This chunk is kept (the buffer ends at most one chunk past the limit); the next
            // attempt asks for what follows it once the consumer is down to half the limit.
            state.phase.attemptThrottled(.consumer)
            then = .pauseStream(task, buffer, drainedTo: policy.bufferLimit / 2)
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
    /// stream's waits starts again, under the head limit before the head and
    /// ``StreamPolicy/idleTimeout`` after it. The timer is moved to the new limit, which may be
    /// shorter than the one it was set for.
    func restartWaitClock(awaitingHead: Bool, _ state: inout State) {
        guard case .stream(_, let policy) = kind else { return }
        state.stream.awaitingHead = awaitingHead
        if awaitingHead { state.stream.expiredWait = nil }
        guard let timer = state.stream.idleTimer else { return }
        state.stream.lastActivity = .now
        let limit = awaitingHead ? policy.headLimit : policy.idleTimeout
        if let next = limit ?? policy.headLimit ?? policy.idleTimeout {
            timer.schedule(deadline: .now() + max(0, next.seconds))
        }
    }

    /// Starts the clock of the stream's waits on the first `resume()`, for a stream whose policy
    /// limits the wait for the head or the gaps between chunks. These limits are Courier's to
    /// keep: URLSession's request timeout is set past them (``StreamPolicy/urlSessionTimeout``).
    func armIdleTimer() {
        guard case .stream(_, let policy) = kind, let first = policy.headLimit ?? policy.idleTimeout else { return }
        let timer = DispatchSource.makeTimerSource(queue: core.callQueue)
        timer.schedule(deadline: .now() + max(0, first.seconds))
        timer.setEventHandler { [weak self] in self?.checkWaits(policy) }
        let armed = state.withLock { state -> Bool in
            guard state.phase.state != .completed else { return false }
            state.stream.idleTimer = timer
            state.stream.lastActivity = .now
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
    private func checkWaits(_ policy: StreamPolicy) {
        let now = ContinuousClock.Instant.now
        let expired = state.withLock { state -> URLSessionTask? in
            guard let timer = state.stream.idleTimer, state.stream.expiredWait == nil, state.failure == nil else { return nil }
            if state.phase.attempt == nil || state.phase.state != .running { state.stream.lastActivity = now }
            let silent = now - state.stream.lastActivity
            let head = state.stream.awaitingHead
            let limit = head ? policy.headLimit : policy.idleTimeout
            if let limit, silent >= limit, let current = state.phase.attempt {
                // A task still being launched is not registered yet: cancelling it now would lose
                // its completion. It is looked at again in a moment.
                guard !state.phase.isLaunching else {
                    timer.schedule(deadline: .now() + 0.01)
                    return nil
                }
                state.stream.expiredWait = head
                    ? .headTimeout(limit, policy: policy, url: originalRequest.url) : .idleTimeout(limit, url: originalRequest.url)
                return current
            }
            // A wait without a limit (no idle limit once the head is in) is looked at again after
            // the other one, for the next attempt's head.
            guard let next = limit.map({ $0 - silent }) ?? policy.headLimit ?? policy.idleTimeout else { return nil }
            timer.schedule(deadline: .now() + max(0.001, next.seconds))
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
