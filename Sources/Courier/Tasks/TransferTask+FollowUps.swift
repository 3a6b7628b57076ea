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
        /// Ask the retriers about `error`; the task waits meanwhile (``State/awaitingRetry``).
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
        guard state.lifecycle.state == .running, state.failure == nil else { return nil }
        if let redirect = state.pendingRedirect {
            state.pendingRedirect = nil
            state.metrics.endAttempt(.redirected)
            state.metrics.nextKind = .redirect
            return prepareFollowUp(redirect, &state)
        }
        guard let response = state.response ?? state.download.rejected, response.statusCode == 401 else { return nil }
        let header = response.value(forHTTPHeaderField: "WWW-Authenticate")
        let challenge = header.flatMap(AuthenticationChallenge.init(header:))
        func refuse(_ reason: String) -> URLRequest? {
            emit(.challenge(TaskChallengeEvent(response: response, scheme: challenge?.scheme, answered: false, reason: reason)), state)
            return nil
        }
        guard let credential = state.options.credential else { return refuse("no credential is configured") }
        guard !state.authenticationAttempted else { return refuse("the credential was already sent and refused") }
        guard let challenge else {
            return refuse(header == nil ? "the 401 has no WWW-Authenticate challenge" : "no supported challenge (Basic or Digest)")
        }
        var request = state.currentRequest ?? originalRequest
        // Only the origin the task was made for gets the credential, never one a redirect led to.
        guard RedirectPolicy.origin(of: request.url) == RedirectPolicy.origin(of: originalRequest.url) else {
            return refuse("the credential is only sent to the origin the task was made for")
        }
        guard let authorization = challenge.authorization(for: request, credential: credential) else {
            return refuse("the challenge could not be answered with this credential")
        }
        state.authenticationAttempted = true
        request.setValue(authorization, forHTTPHeaderField: "Authorization")
        emit(.challenge(TaskChallengeEvent(response: response, scheme: challenge.scheme, answered: true, reason: nil)), state)
        state.metrics.endAttempt(.challenged)
        state.metrics.nextKind = .authentication
        return prepareFollowUp(request, &state)
    }

    private func prepareFollowUp(_ request: URLRequest, _ state: inout State) -> URLRequest {
        state.current = nil
        state.download.rejected = nil
        state.challengeRejected = false
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

    /// Decides a redirect URLSession proposes: `nil` stops at the 3xx response (refused, or
    /// re-issued by Courier itself when the body must be re-sent).
    func redirect(_ task: URLSessionTask, to proposed: URLRequest, response: HTTPURLResponse) -> URLRequest? {
        enum Step {
            case stop
            case follow(URLRequest)
            case ask(@Sendable (URLRequest, HTTPURLResponse) -> URLRequest?, URLRequest, resend: Bool, stripped: [String])
        }
        let step = state.withLock { state -> Step in
            guard state.current === task, state.lifecycle.state == .running else { return .stop }
            let policy = state.options.redirectPolicy
            if case .refuse = policy.action {
                noteRedirect(response, to: nil, next: nil, refusal: "the redirect policy refuses redirects", &state)
                return .stop
            }
            // The raw Location: URLSession on Linux rewrites `file://…` into a same-origin http
            // URL, so the proposed request cannot show what the server asked for (Docs/Platform.md §2.3).
            let location = response.value(forHTTPHeaderField: "Location")
            guard let location, let target = URL(string: location, relativeTo: response.url)?.absoluteURL,
                let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https"
            else {
                refuseRedirect(
                    "to \(location ?? "no Location"): only http and https redirects are followed", response,
                    to: location.flatMap { URL(string: $0, relativeTo: response.url)?.absoluteURL }, &state)
                return .stop
            }
            state.redirectCount += 1
            guard state.redirectCount <= policy.maximumHops else {
                refuseRedirect("after \(policy.maximumHops) redirects", response, to: target, &state)
                return .stop
            }
            let current = state.currentRequest ?? originalRequest
            if let from = current.url, state.visited[from.absoluteString] == nil { state.visited[from.absoluteString] = 1 }
            // A URL may come back once (A → B → A, as sign-in flows do); a third visit is a loop.
            guard state.visited[target.absoluteString, default: 0] < 2 else {
                refuseRedirect("to \(target.absoluteString): a redirect loop", response, to: target, &state)
                return .stop
            }
            state.visited[target.absoluteString, default: 0] += 1
            var next = proposed
            next.url = target
            let stripped = stripCredentials(from: &next, leaving: current, policy, state)
            let method = (current.httpMethod ?? "GET").uppercased()
            var resend = false
            switch response.statusCode {
            case 303 where method != "HEAD", 301 where method == "POST", 302 where method == "POST":
                // RFC 9110 §15.4: these become a GET without a body.
                next.httpMethod = "GET"
                next.httpBody = nil
                next.setValue(nil, forHTTPHeaderField: "Content-Type")
                next.setValue(nil, forHTTPHeaderField: "Content-Length")
            case 307, 308:
                next.httpMethod = method
                if hasBody(current) {
                    // URLSession drops the body here; Courier re-sends it with a new task.
                    next.httpBody = current.httpBody
                    resend = true
                }
            default:
                break
            }
            if case .modify(let decide) = policy.action { return .ask(decide, next, resend: resend, stripped: stripped) }
            return settle(next, resend: resend, response: response, stripped: stripped, &state).map(Step.follow) ?? .stop
        }
        switch step {
        case .stop:
            return nil
        case .follow(let request):
            return request
        case .ask(let decide, let request, let resend, let stripped):
            let decided = decide(request, response)  // user code: called outside the lock
            return state.withLock { state in
                guard state.current === task else { return nil }
                guard var decided else {
                    noteRedirect(response, to: request.url, next: nil, refusal: "the redirect policy's closure refused it", &state)
                    return nil
                }
                // What the closure returns gets the same checks as any redirect.
                let scheme = decided.url?.scheme?.lowercased()
                guard scheme == "http" || scheme == "https" else {
                    refuseRedirect(
                        "to \(decided.url?.absoluteString ?? "no URL"): only http and https are followed", response,
                        to: decided.url, &state)
                    return nil
                }
                let alsoStripped = stripCredentials(
                    from: &decided, leaving: state.currentRequest ?? originalRequest, state.options.redirectPolicy, state)
                return settle(decided, resend: resend, response: response, stripped: stripped + alsoStripped, &state)
            }
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

    /// Removes credentials and secret headers when `next` goes to another origin than `current`:
    /// URLSession on Linux forwards them all (Docs/Platform.md §2.3).
    /// Returns the names it removed.
    private func stripCredentials(
        from next: inout URLRequest, leaving current: URLRequest, _ policy: RedirectPolicy, _ state: State
    ) -> [String] {
        guard RedirectPolicy.origin(of: current.url) != RedirectPolicy.origin(of: next.url) else { return [] }
        let secret = RedirectPolicy.credentialHeaders.union(policy.sensitiveHeaders.map { $0.lowercased() })
            .union(state.options.sensitiveHeaders)
        var stripped: [String] = []
        for name in (next.allHTTPHeaderFields ?? [:]).keys where secret.contains(name.lowercased()) {
            next.setValue(nil, forHTTPHeaderField: name)
            stripped.append(name)
        }
        return stripped.sorted()
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

    /// Fails the attempt with a refused redirect, and records it.
    private func refuseRedirect(_ what: String, _ response: HTTPURLResponse, to target: URL?, _ state: inout State) {
        let error = refusal(what, response)
        state.failure = error
        noteRedirect(response, to: target, next: nil, refusal: error.message, &state)
    }

    private func refusal(_ what: String, _ response: HTTPURLResponse) -> CourierError {
        CourierError(code: .redirectRefused, message: "refused a redirect \(what)", url: originalRequest.url, response: response)
    }
}

