import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A streamed body, the driver's half: the end of a pause for the consumer, and the timer of the
/// stream's waits. The rules (the head to the consumer once it passes validation, each chunk to
/// its ``StreamBuffer``, a consumer that falls behind handled by the ``StreamPolicy``, never
/// starting over once bytes were delivered) are TransferState+Streaming.swift's.
extension TransferTask {
    /// The consumer has caught up: the next attempt asks for the rest (unless the task was
    /// paused, cancelled or failed meanwhile).
    func continueAfterStreamDrain() {
        continueAfterPause(.consumer)
    }

    // MARK: - Waits: the head, and idle gaps

    /// Starts the clock of the stream's waits on the first `resume()`, for a stream whose policy
    /// limits the wait for the head or the gaps between chunks. These limits are Courier's to
    /// keep: URLSession's request timeout is set past them (``StreamPolicy/urlSessionTimeout``).
    func armIdleTimer() {
        guard let policy = locked({ $0.stream?.policy }), let first = policy.headLimit ?? policy.idleTimeout else { return }
        let timer = DispatchSource.makeTimerSource(queue: core.callQueue)
        timer.schedule(deadline: .now() + max(0, first.seconds))
        timer.setEventHandler { [weak self] in self?.checkWaits() }
        let armed =
            locked { state -> Bool in
                guard !state.phase.isCompleted else { return false }
                state.stream?.timesWaits = true
                state.stream?.lastActivity = state.now
                return true
            } && timers.keepWait(timer)
        if armed { timer.resume() }
    }

    /// Ends the current attempt with ``CourierError/Code-swift.struct/timedOut`` when the server
    /// has been silent longer than the current wait allows (the head limit before the attempt's
    /// head, ``StreamPolicy/idleTimeout`` after it), as URLSession's request timeout would have:
    /// the retriers are then asked, and without a retry the stream fails. Otherwise it looks again
    /// when the limit could pass. Time between attempts (paused for the consumer, waiting to
    /// retry) is not silence.
    private func checkWaits() {
        let expired = locked { state -> URLSessionTask? in
            guard state.failure == nil, state.stream?.timesWaits == true else { return nil }
            let attempt = state.phase.state == .running ? state.phase.attempt : nil
            let check = state.stream?.waitChecked(
                now: state.now, hasAttempt: attempt != nil, launching: state.phase.isLaunching, url: originalRequest.url)
            switch check {
            case .expired?: return attempt
            case .lookAgain(let after)?: state.nextWaitCheck = after
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
            why =
                "and the stream cannot pause: it would continue with Range, which only a GET can, "
                + "and a \((method ?? "GET").uppercased()) is never sent again by itself"
        } else {
            why =
                "and the stream cannot pause: continuing with Range needs a strong validator (ETag or Last-Modified) and an unencoded body"
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
        let setting =
            policy.headTimeout != nil
            ? "StreamPolicy.headTimeout" : "StreamPolicy.idleTimeout, which bounds the head when headTimeout is nil"
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
