import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The one retry path, for every kind of task: after an attempt failed, the task's own
/// ``RetryPolicy`` (a download's ``DownloadPolicy/retry``) decides first, then the interceptor's
/// retriers; a retry plans the next attempt, which continues with `Range` when the bytes held
/// allow it. What only a download adds — its record brought up to date, its bytes kept when
/// nothing retries, the `Retry-After`-too-long refusal named in its error — are steps of this
/// path, not a second one.
extension TransferTask {
    /// The retry policy the task's kind brings, asked before the interceptor's retriers: a
    /// download's ``DownloadPolicy/retry``. Other kinds have theirs in the interceptor
    /// (``SessionManager/Configuration/retryPolicy``).
    var ownRetryPolicy: RetryPolicy? {
        if case .download(let plan) = kind { return plan.policy.retry }
        return nil
    }

    /// Decides what follows a failed attempt: a retry now (the own policy), a question to the
    /// retriers, or — when the own policy refused for a `Retry-After` beyond its cap — the end,
    /// with that said in the error. `failure` is what the task ends with if nothing retries
    /// (`nil` for a response only validation refuses: a data task's serializer reports it);
    /// `nil` means the failure is not a retry matter, and the caller finishes as it would.
    func retryFollowUp(after failure: CourierError?, _ state: inout State) -> FollowUp? {
        // A host with no route is the network's fault, decided before any policy (TransferTask+Connectivity.swift).
        if let followUp = routeFollowUp(after: failure, &state) { return followUp }
        let interceptor = state.options.interceptor.flatMap { $0.retriers.isEmpty ? nil : $0 }
        let own = ownRetryPolicy
        guard own != nil || interceptor != nil, state.phase.state == .running, !streamCannotContinue(state),
            !core.isInvalidated
        else { return nil }
        var failure = failure
        var candidate = failure
        if candidate == nil {
            // A refused response is found by validating (a download's is a failure already).
            do {
                try validation.validate(request: state.currentRequest, response: state.response, data: state.memory.data)
            } catch {
                candidate = error.adding(url: originalRequest.url, response: state.response, body: state.memory.data)
            }
        }
        // Only what an attempt can end with is a retry matter: not a cancellation, a refused
        // redirect, a body too large, a broken upload source.
        guard var candidate,
            candidate.isTransport
                || [.timedOut, .unacceptableStatusCode, .unacceptableContentType, .unacceptableResponse].contains(candidate.code)
        else { return nil }
        let request = state.currentRequest ?? originalRequest
        if let own {
            switch own.verdict(for: request, error: candidate, attempt: state.attempt) {
            case .retry(let delay):
                return retry(after: delay, error: candidate, limit: own.retryLimit, &state)
            case .retryAfterTooLong(let requested):
                // Asked to come back later than the policy waits: no capped wait the server has
                // already said is too short. The error says why; the retriers may still decide.
                candidate = Self.retryAfterRefusal(candidate, requested: requested, cap: own.maximumRetryAfter)
                if failure != nil { failure = candidate }
            case .giveUp:
                break
            }
        }
        guard let interceptor else { return .finish(finishFailedAttempt(failure, &state)) }
        state.phase.attemptAwaitsRetry(pendingFailure: failure)
        state.metrics.endAttempt(.failed, error: candidate)
        return .askRetriers(interceptor, request, candidate, attempt: state.attempt)
    }

    /// Ends the task after a failed attempt nothing retries: a download keeps its bytes (and
    /// gets resume data) when they can be continued.
    func finishFailedAttempt(_ failure: CourierError?, _ state: inout State) -> Completion {
        if let plan = state.file?.plan, let failure { return finishFailedDownload(failure, plan, &state) }
        return completeLocked(&state, error: failure)
    }

    /// The retriers' answer; `error` is the failure they were asked about.
    func retryDecided(_ decision: RetryDecision, error: CourierError) -> FollowUp? {
        state.withLock { state -> FollowUp? in
            var delay = Duration.zero
            if case .retryAfter(let requested) = decision { delay = requested }
            switch state.phase.retriersAnswered(retry: decision != .doNotRetry) {
            case .none: return nil  // cancelled or paused meanwhile
            case .finish(let failure): return .finish(finishFailedAttempt(failure, &state))
            case .retry: return retry(after: delay, error: error, limit: nil, &state)
            }
        }
    }

    /// The next attempt after `delay`, with the event that announces it. `limit` is the deciding
    /// policy's retry limit (`nil` when a retrier decided: it alone knows its limit).
    private func retry(after delay: Duration, error: CourierError, limit: Int?, _ state: inout State) -> FollowUp {
        let received = state.received
        if let plan = state.file?.plan {
            state.file?.retries += 1
            // The record holds exactly the bytes the next attempt continues from.
            writeRecord(plan, &state, force: true)
        }
        noteRetry(error, delay: delay, &state)
        let next = nextAttempt(&state)
        state.phase.attemptAwaitsRetry(pendingFailure: nil)
        let event = TaskRetryEvent(
            error: error, retry: state.attempt, retryLimit: limit, delay: delay, bytesReceived: received,
            continuesFrom: next.continuesFrom ?? 0)
        return .retry(next.request, delay, event)
    }

    /// The next attempt, as planned: its request, and the offset it continues from with `Range`
    /// (`nil` when it starts over).
    struct PlannedAttempt {
        let request: URLRequest
        let continuesFrom: Int64?
    }

    /// Sets the state up for a new attempt and plans it: the bytes held are continued with `Range`
    /// when that is safe (``canContinueByRange(_:)``); otherwise the attempt starts over. An attempt
    /// after waiting for a route spends no retry (`spendingRetry: false`).
    func nextAttempt(_ state: inout State, spendingRetry: Bool = true) -> PlannedAttempt {
        if spendingRetry { state.attempt += 1 }
        state.redirects = RedirectState()
        state.challenge = ChallengeState()
        state.file?.rejected = nil
        // A data or upload task starts over: what it holds may be an error page.
        guard keepsBodyAcrossAttempts(state) else {
            resetBody(&state)
            return PlannedAttempt(request: originalRequest, continuesFrom: nil)
        }
        let request = restartRequest(&state)
        return PlannedAttempt(request: request, continuesFrom: state.rangeOffset)
    }

    func scheduleRetry(_ request: URLRequest, after delay: Duration) {
        let seconds = delay.seconds
        core.callQueue.asyncAfter(deadline: .now() + seconds) { [self] in
            let proceed = state.withLock { $0.phase.retryDelayElapsed() }
            if proceed { startAttempt(request) }
        }
    }

    /// Tells the monitors about a retry, before its delay starts.
    func announce(_ event: TaskRetryEvent) {
        guard events.isActive else { return }
        events.emit(.retrying(event), for: state.withLock { $0.retainedHandle ?? $0.handle })
    }

    /// `failure` restated as final because its response's `Retry-After` asks for `requested`,
    /// longer than `cap`: the message names both, the rest of the error stays.
    static func retryAfterRefusal(_ failure: CourierError, requested: Duration, cap: Duration) -> CourierError {
        let header = failure.response?.value(forHTTPHeaderField: "Retry-After") ?? ""
        let message = failure.message
            + "; it asked to be retried after \(Backoff.describe(requested)) (Retry-After: \(header)), longer than the "
            + "\(Backoff.describe(cap)) RetryPolicy.maximumRetryAfter allows, so it was not retried"
        var refusal = CourierError(
            code: failure.code, message: message, url: failure.url, response: failure.response, body: failure.body,
            underlyingError: failure.underlyingError)
        refusal.resumeData = failure.resumeData
        return refusal
    }
}
