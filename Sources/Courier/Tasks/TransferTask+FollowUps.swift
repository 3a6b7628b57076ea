import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What happens between one attempt and the next: redirects Courier decides (and sometimes
/// re-issues itself) and answering authentication challenges. Retries are
/// TransferTask+Retry.swift's.
extension TransferTask {
    /// What an ended attempt leads to, decided under the lock.
    enum FollowUp {
        case finish(Completion)
        /// Another request for the same attempt (a redirect re-issued, a challenge answered).
        case restart(URLRequest)
        /// The next attempt, after a delay; announced to the monitors when it is a retry (not a
        /// download's continuation after a short body).
        case retry(URLRequest, Duration, TaskRetryEvent?)
        /// Ask the retriers about `error`; the task waits meanwhile (``TaskPhaseMachine/Phase/waitingToRetry(pendingFailure:)``).
        /// `attempt` is the number of the attempt that failed.
        case askRetriers(Interceptor, URLRequest, CourierError, attempt: Int)
    }

    func perform(_ followUp: FollowUp?) {
        switch followUp {
        case .none: break
        case .finish(let completion): perform(completion)
        // Follow-ups of the same attempt skip the adapters: a token adapter must not put back a
        // header a cross-origin redirect stripped, nor replace an answered challenge.
        case .restart(let request): startAttempt(request, adapting: false)
        case .retry(let request, let delay, let event):
            if let event { announce(event) }
            scheduleRetry(request, after: delay)
        case .askRetriers(let interceptor, let request, let error, let attempt):
            interceptor.retry(request, failedWith: error, attempt: attempt) { [self] decision in
                perform(retryDecided(decision, error: error))
            }
        }
    }

    // MARK: - Before completing

    /// A follow-up request that belongs to the same attempt: a 307/308 Courier re-sends with its
    /// body, or a 401 answered with the credential. `nil` when the attempt really ended.
    func followUpRequest(_ state: inout State) -> URLRequest? {
        guard state.phase.state == .running, state.failure == nil else { return nil }
        if let redirect = state.pendingRedirect {
            state.pendingRedirect = nil
            state.metrics.endAttempt(.redirected)
            state.metrics.nextKind = .redirect
            return prepareFollowUp(redirect, &state)
        }
        guard let response = state.response ?? state.file?.rejected, response.statusCode == 401 else { return nil }
        var request = state.currentRequest ?? originalRequest
        switch state.challenge.decide(response, credential: state.options.credential, request: request, originalURL: originalRequest.url) {
        case .refuse(let reason, let scheme):
            emit(.challenge(TaskChallengeEvent(response: response, scheme: scheme, answered: false, reason: reason)), state)
            return nil
        case .answer(let authorization, let scheme):
            request.setValue(authorization, forHTTPHeaderField: "Authorization")
            emit(.challenge(TaskChallengeEvent(response: response, scheme: scheme, answered: true, reason: nil)), state)
            state.metrics.endAttempt(.challenged)
            state.metrics.nextKind = .authentication
            return prepareFollowUp(request, &state)
        }
    }

    private func prepareFollowUp(_ request: URLRequest, _ state: inout State) -> URLRequest {
        state.phase.attemptReplaced()
        state.file?.rejected = nil
        state.challenge.rejectedBySession = false
        if keepsBodyAcrossAttempts(state) {
            // Keep the partial file (or the bytes a stream delivered) as it is: the next response
            // decides what happens to it.
            state.rangeOffset = nil
            if canContinueByRange(state) {
                return Self.rangeRequest(request, from: state.received, validator: state.validator, state: &state)
            }
        }
        resetBody(&state)
        return request
    }

    // MARK: - Redirects

    /// Decides a redirect URLSession proposes (RedirectState.swift): `nil` stops at the 3xx
    /// response (refused, or re-issued by Courier itself when the body must be re-sent).
    func redirect(_ task: URLSessionTask, to proposed: URLRequest, response: HTTPURLResponse) -> URLRequest? {
        enum Step {
            case done(URLRequest?)
            case ask(@Sendable (URLRequest, HTTPURLResponse) -> URLRequest?, URLRequest, resend: Bool, stripped: [String])
        }
        let step = state.withLock { state -> Step in
            guard state.phase.isRunning(task) else { return .done(nil) }
            let policy = state.options.redirectPolicy
            let current = state.currentRequest ?? originalRequest
            let decision = state.redirects.decide(
                response, proposed: proposed, current: current, policy: policy,
                secretHeaders: RedirectState.secretHeaders(policy, taskSensitiveHeaders: state.options.sensitiveHeaders),
                hasBody: hasBody(current))
            if case .follow(let next, let resend, let stripped) = decision, case .modify(let decide) = policy.action {
                return .ask(decide, next, resend: resend, stripped: stripped)
            }
            return .done(apply(decision, response, &state))
        }
        switch step {
        case .done(let request):
            return request
        case .ask(let decide, let request, let resend, let stripped):
            let decided = decide(request, response)  // user code: called outside the lock
            return state.withLock { state in
                guard state.phase.isCurrent(task) else { return nil }
                let current = state.currentRequest ?? originalRequest
                let secrets = RedirectState.secretHeaders(state.options.redirectPolicy, taskSensitiveHeaders: state.options.sensitiveHeaders)
                let decision = RedirectState.vet(
                    decided, offered: request, leaving: current, secretHeaders: secrets, resend: resend, stripped: stripped)
                return apply(decision, response, &state)
            }
        }
    }

    /// Records a redirect decision and returns the request URLSession should follow, if any.
    private func apply(_ decision: RedirectState.Decision, _ response: HTTPURLResponse, _ state: inout State) -> URLRequest? {
        switch decision {
        case .stop(let reason, let target):
            noteRedirect(response, to: target, next: nil, refusal: reason, &state)
            return nil
        case .fail(let what, let target):
            let error = refusal(what, response)
            state.failure = error
            noteRedirect(response, to: target, next: nil, refusal: error.message, &state)
            return nil
        case .follow(let next, let resend, let stripped):
            // The new host's TLS policy (the old one's token must not follow the request there).
            let stamped: URLRequest
            do {
                stamped = try core.tls.stamped(next)
            } catch {
                state.failure = error
                noteRedirect(response, to: next.url, next: nil, refusal: error.message, &state)
                return nil
            }
            return settle(stamped, resend: resend, response: response, stripped: stripped, &state)
        }
    }

    /// Records a redirect in the timeline and tells the monitors. `next` is the request URLSession
    /// follows on the same task (a new attempt in the timeline); `nil` when the redirect is
    /// refused or Courier re-sends it itself after this attempt ends.
    private func noteRedirect(
        _ response: HTTPURLResponse, to target: URL?, next: URLRequest?, refusal: String?, stripped: [String] = [],
        resent: Bool = false, _ state: inout State
    ) {
        let followed = refusal == nil
        let record = TaskMetrics.Redirect(
            statusCode: response.statusCode, from: response.url, to: target, followed: followed,
            strippedHeaders: stripped, at: .zero)
        emit(.redirected(TaskRedirectEvent(
            response: response, target: target, followed: followed, refusal: refusal, strippedHeaders: stripped,
            method: followed ? (next?.httpMethod ?? state.pendingRedirect?.httpMethod) : nil)), state)
        if let attempt = state.metrics.redirect(record, followedInPlace: resent ? nil : next) {
            emit(.attemptStarted(TaskAttemptEvent(number: attempt.number, kind: attempt.kind, request: next ?? originalRequest)), state)
        }
    }

    /// The request URLSession should follow, or `nil` when Courier re-sends it itself.
    private func settle(
        _ next: URLRequest, resend: Bool, response: HTTPURLResponse, stripped: [String], _ state: inout State
    ) -> URLRequest? {
        if resend {
            state.pendingRedirect = next
            noteRedirect(response, to: next.url, next: next, refusal: nil, stripped: stripped, resent: true, &state)
            return nil
        }
        state.currentRequest = next
        noteRedirect(response, to: next.url, next: next, refusal: nil, stripped: stripped, &state)
        return next
    }
    private func hasBody(_ request: URLRequest) -> Bool {
        if case .upload = kind { return true }
        return request.httpBody != nil || request.httpBodyStream != nil
    }

    private func refusal(_ what: String, _ response: HTTPURLResponse) -> CourierError {
        CourierError(code: .redirectRefused, message: "refused a redirect \(what)", url: originalRequest.url, response: response)
    }
}

