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
extension TransferState {
    /// The retry policy the task's body brings, asked before the interceptor's retriers: a
    /// download's ``DownloadPolicy/retry``. Other kinds have theirs in the interceptor
    /// (``SessionManager/Configuration/retryPolicy``).
    var ownRetryPolicy: RetryPolicy? { file?.plan.policy.retry }

    /// Decides what follows a failed attempt: a retry now (the own policy), a question to the
    /// retriers, or — when the own policy refused for a `Retry-After` beyond its cap — the end,
    /// with that said in the error. `failure` is what the task ends with if nothing retries
    /// (`nil` for a response only validation refuses: a data task's serializer reports it);
    /// `nil` means the failure is not a retry matter, and the caller finishes as it would.
    /// `facts`: what the driver knows of the world (the manager invalidated, the route gone).
    mutating func retryFollowUp(after failure: CourierError?, facts: AttemptFacts) -> FollowUp? {
        let invalidated = facts.invalidated
        // A host with no route is the network's fault, decided before any policy (TransferState+Connectivity.swift).
        if let followUp = routeFollowUp(after: failure, facts: facts) { return followUp }
        let interceptor = options.interceptor.flatMap { $0.retriers.isEmpty ? nil : $0 }
        let own = ownRetryPolicy
        guard own != nil || interceptor != nil, phase.state == .running, !streamCannotContinue(),
            !invalidated
        else { return nil }
        var failure = failure
        var candidate = failure
        if candidate == nil {
            // A refused response is found by validating (a download's is a failure already).
            do {
                try context.validation.validate(request: currentRequest, response: response, data: memory.data)
            } catch {
                candidate = error.adding(url: context.originalRequest.url, response: response, body: memory.data)
            }
        }
        // Only what an attempt can end with is a retry matter: not a cancellation, a refused
        // redirect, a body too large, a broken upload source.
        guard var candidate,
            candidate.isTransport
                || [.timedOut, .unacceptableStatusCode, .unacceptableContentType, .unacceptableResponse].contains(candidate.code)
        else { return nil }
        let request = currentRequest ?? context.originalRequest
        if let own {
            switch own.verdict(for: request, error: candidate, attempt: attempt) {
            case .retry(let delay):
                return retry(after: delay, error: candidate, limit: own.retryLimit)
            case .retryAfterTooLong(let requested):
                // Asked to come back later than the policy waits: no capped wait the server has
                // already said is too short. The error says why; the retriers may still decide.
                candidate = Self.retryAfterRefusal(candidate, requested: requested, cap: own.maximumRetryAfter)
                if failure != nil { failure = candidate }
            case .giveUp:
                break
            }
        }
        guard let interceptor else { return .finish(finishFailedAttempt(failure)) }
        phase.attemptAwaitsRetry(pendingFailure: failure)
        metrics.endAttempt(.failed, error: candidate)
        return .askRetriers(interceptor, request, candidate, attempt: attempt)
    }

    /// Ends the task after a failed attempt nothing retries: a download keeps its bytes (and
    /// gets resume data) when they can be continued.
    mutating func finishFailedAttempt(_ failure: CourierError?) -> Completion {
        if let plan = file?.plan, let failure { return finishFailedDownload(failure, plan) }
        return complete(error: failure)
    }

    /// The retriers' answer; `error` is the failure they were asked about, `owner` who decided
    /// (``RetryOwner/refresh`` for a refusal retrier). `nil` when the task was cancelled or paused meanwhile.
    mutating func retriersAnswered(_ decision: RetryDecision, error: CourierError, owner: RetryOwner = .attempt) -> FollowUp? {
        var delay = Duration.zero
        if case .retryAfter(let requested) = decision { delay = requested }
        switch phase.retriersAnswered(retry: decision != .doNotRetry) {
        case .none: return nil
        case .finish(let failure): return .finish(finishFailedAttempt(failure))
        case .retry: return retry(after: delay, error: error, limit: nil, owner: owner)
        }
    }

    /// The next attempt after `delay`, with the event that announces it. `limit` is the deciding
    /// policy's retry limit (`nil` when a retrier decided: it alone knows its limit).
    private mutating func retry(after delay: Duration, error: CourierError, limit: Int?, owner: RetryOwner = .attempt) -> FollowUp {
        let received = received
        if let plan = file?.plan {
            file?.retries += 1
            // The record holds exactly the bytes the next attempt continues from.
            writeRecord(plan, force: true)
        }
        noteRetry(error, delay: delay, owner: owner)
        let next = nextAttempt()
        phase.attemptAwaitsRetry(pendingFailure: nil)
        let event = TaskRetryEvent(
            error: error, retry: attempt, retryLimit: limit, delay: delay, bytesReceived: received,
            continuesFrom: next.continuesFrom ?? 0, owner: owner)
        return .retry(next.request, delay, event)
    }

    /// The next attempt, as planned: its request, and the offset it continues from with `Range`
    /// (`nil` when it starts over).
    struct PlannedAttempt {
        let request: URLRequest
        let continuesFrom: Int64?
    }

    /// Sets the state up for a new attempt and plans it: the bytes held are continued with `Range`
    /// when that is safe (``canContinueByRange()``); otherwise the attempt starts over. An attempt
    /// after waiting for a route spends no retry (`spendingRetry: false`).
    mutating func nextAttempt(spendingRetry: Bool = true) -> PlannedAttempt {
        if spendingRetry { attempt += 1 }
        redirects = RedirectState()
        challenge = ChallengeState()
        file?.rejected = nil
        // A data or upload task starts over: what it holds may be an error page.
        guard keepsBodyAcrossAttempts() else {
            _ = startOver(.cannotContinue)
            return PlannedAttempt(request: context.originalRequest, continuesFrom: nil)
        }
        let request = restartRequest()
        return PlannedAttempt(request: request, continuesFrom: rangeOffset)
    }

    /// `failure` restated as final because its response's `Retry-After` asks for `requested`,
    /// longer than `cap`: the message names both, the rest of the error stays.
    static func retryAfterRefusal(_ failure: CourierError, requested: Duration, cap: Duration) -> CourierError {
        let header = failure.response?.value(forHTTPHeaderField: "Retry-After") ?? ""
        let message =
            failure.message
            + "; it asked to be retried after \(Backoff.describe(requested)) (Retry-After: \(header)), longer than the "
            + "\(Backoff.describe(cap)) RetryPolicy.maximumRetryAfter allows, so it was not retried"
        var refusal = CourierError(
            code: failure.code, message: message, url: failure.url, response: failure.response, body: failure.body,
            underlyingError: failure.underlyingError)
        refusal.resumeData = failure.resumeData
        return refusal
    }
}
