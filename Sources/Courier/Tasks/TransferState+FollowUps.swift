import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Follow-ups of the same attempt decided on the transfer's state: a 307/308 Courier re-sends,
/// a 401 answered with the credential, and the redirects URLSession proposes
/// (TransferTask+FollowUps.swift asks the caller's redirect closure outside the lock).
extension TransferState {

    /// A follow-up request that belongs to the same attempt: a 307/308 Courier re-sends with its
    /// body, or a 401 answered with the credential. `nil` when the attempt really ended.
    mutating func followUpRequest() -> URLRequest? {
        guard phase.state == .running, failure == nil else { return nil }
        if let redirect = pendingRedirect {
            pendingRedirect = nil
            metrics.endAttempt(.redirected)
            metrics.nextKind = .redirect
            return prepareFollowUp(redirect)
        }
        if let again = cacheRevalidationRefused() { return prepareFollowUp(again) }
        guard let response = response ?? file?.rejected, response.statusCode == 401 else { return nil }
        var request = currentRequest ?? context.originalRequest
        switch challenge.decide(response, credential: options.credential, request: request, originalURL: context.originalRequest.url) {
        case .refuse(let reason, let scheme):
            emit(.challenge(TaskChallengeEvent(response: response, scheme: scheme, answered: false, reason: reason)))
            return nil
        case .answer(let authorization, let scheme):
            request.setValue(authorization, forHTTPHeaderField: "Authorization")
            emit(.challenge(TaskChallengeEvent(response: response, scheme: scheme, answered: true, reason: nil)))
            metrics.endAttempt(.challenged)
            metrics.nextKind = .authentication
            return prepareFollowUp(request)
        }
    }

    /// The request again without the cache's validators when its `304` named another
    /// representation than the stored one (RFC 9111 §4.3.4: that 304 cannot be used): the origin
    /// is asked for the whole answer, which then replaces the entry. `nil` otherwise.
    private mutating func cacheRevalidationRefused() -> URLRequest? {
        guard let exchange = cacheExchange, let validating = exchange.validating, let response, response.statusCode == 304,
            !CachePolicy.matchesValidators(validating.head, CacheResponseHead(status: 304, headers: CacheBinding.headers(of: response)))
        else { return nil }
        var request = currentRequest ?? context.originalRequest
        request.setValue(nil, forHTTPHeaderField: "If-None-Match")
        request.setValue(nil, forHTTPHeaderField: "If-Modified-Since")
        // The next lookup forwards it as it is, with no validator.
        request.cachePolicy = .reloadIgnoringLocalCacheData
        cacheExchange = nil
        metrics.endAttempt(.restarted)
        metrics.nextKind = .restart
        return request
    }

    private mutating func prepareFollowUp(_ request: URLRequest) -> URLRequest {
        phase.attemptReplaced()
        file?.rejected = nil
        challenge.rejectedBySession = false
        if keepsBodyAcrossAttempts() {
            // Keep the partial file (or the bytes a stream delivered) as it is: the next response
            // decides what happens to it.
            rangeOffset = nil
            if canContinueByRange() {
                return rangeRequest(request, from: received, validator: validator)
            }
        }
        _ = startOver(.cannotContinue)
        return request
    }

    /// What a redirect URLSession proposes leads to: an answer now, or a question to the
    /// caller's redirect closure (asked outside the lock, then ``redirectDecided(_:offered:resend:stripped:response:task:)``).
    enum RedirectStep {
        case done(URLRequest?)
        case ask(@Sendable (URLRequest, HTTPURLResponse) -> URLRequest?, URLRequest, resend: Bool, stripped: [String])
    }

    /// Decides a redirect URLSession proposes for `task` (RedirectState.swift).
    mutating func redirectProposed(_ proposed: URLRequest, response: HTTPURLResponse, task: URLSessionTask) -> RedirectStep {
        guard phase.isRunning(task) else { return .done(nil) }
        let policy = options.redirectPolicy
        let current = currentRequest ?? context.originalRequest
        let decision = redirects.decide(
            response, proposed: proposed, current: current, policy: policy,
            secretHeaders: RedirectState.secretHeaders(policy, taskSensitiveHeaders: options.sensitiveHeaders),
            hasBody: hasBody(current))
        if case .follow(let next, let resend, let stripped) = decision, case .modify(let decide) = policy.action {
            return .ask(decide, next, resend: resend, stripped: stripped)
        }
        return .done(apply(decision, response))
    }

    /// The caller's redirect closure answered `decided` for the `offered` request: vetted again
    /// (it may not put back a secret header nor leave http(s)), then recorded.
    mutating func redirectDecided(
        _ decided: URLRequest?, offered: URLRequest, resend: Bool, stripped: [String], response: HTTPURLResponse,
        task: URLSessionTask
    ) -> URLRequest? {
        guard phase.isCurrent(task) else { return nil }
        let current = currentRequest ?? context.originalRequest
        let secrets = RedirectState.secretHeaders(options.redirectPolicy, taskSensitiveHeaders: options.sensitiveHeaders)
        let decision = RedirectState.vet(
            decided, offered: offered, leaving: current, secretHeaders: secrets, resend: resend, stripped: stripped)
        return apply(decision, response)
    }

    /// Records a redirect decision and returns the request URLSession should follow, if any.
    private mutating func apply(_ decision: RedirectState.Decision, _ response: HTTPURLResponse) -> URLRequest? {
        switch decision {
        case .stop(let reason, let target):
            noteRedirect(response, to: target, next: nil, refusal: reason)
            return nil
        case .fail(let what, let target):
            let error = refusal(what, response)
            failure = error
            noteRedirect(response, to: target, next: nil, refusal: error.message)
            return nil
        case .follow(let next, let resend, let stripped):
            // The new host's TLS policy (the old one's token must not follow the request there).
            let stamped: URLRequest
            do {
                stamped = try context.tls.stamped(next)
            } catch {
                failure = error
                noteRedirect(response, to: next.url, next: nil, refusal: error.message)
                return nil
            }
            return settle(stamped, resend: resend, response: response, stripped: stripped)
        }
    }

    /// Records a redirect in the timeline and tells the monitors. `next` is the request URLSession
    /// follows on the same task (a new attempt in the timeline); `nil` when the redirect is
    /// refused or Courier re-sends it itself after this attempt ends.
    private mutating func noteRedirect(
        _ response: HTTPURLResponse, to target: URL?, next: URLRequest?, refusal: String?, stripped: [String] = [],
        resent: Bool = false
    ) {
        let followed = refusal == nil
        let record = TaskMetrics.Redirect(
            statusCode: response.statusCode, from: response.url, to: target, followed: followed,
            strippedHeaders: stripped, at: .zero)
        let resentMethod = pendingRedirect?.httpMethod
        emit(
            .redirected(
                TaskRedirectEvent(
                    response: response, target: target, followed: followed, refusal: refusal, strippedHeaders: stripped,
                    method: followed ? (next?.httpMethod ?? resentMethod) : nil)))
        if let attempt = metrics.redirect(record, followedInPlace: resent ? nil : next) {
            let request = next ?? context.originalRequest
            let tls = context.tls
            emit(
                .attemptStarted(
                    TaskAttemptEvent(
                        number: attempt.number, kind: attempt.kind, request: request, tlsPolicy: tls.policy(for: request))))
        }
    }

    /// The request URLSession should follow, or `nil` when Courier re-sends it itself.
    private mutating func settle(
        _ next: URLRequest, resend: Bool, response: HTTPURLResponse, stripped: [String]
    ) -> URLRequest? {
        if resend {
            pendingRedirect = next
            noteRedirect(response, to: next.url, next: next, refusal: nil, stripped: stripped, resent: true)
            return nil
        }
        currentRequest = next
        noteRedirect(response, to: next.url, next: next, refusal: nil, stripped: stripped)
        return next
    }
    private func hasBody(_ request: URLRequest) -> Bool {
        if context.upload != nil { return true }
        return request.httpBody != nil || request.httpBodyStream != nil
    }

    private func refusal(_ what: String, _ response: HTTPURLResponse) -> CourierError {
        CourierError(code: .redirectRefused, message: "refused a redirect \(what)", url: context.originalRequest.url, response: response)
    }
}
