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
        /// Indirect: a completion is over a kilobyte, and a follow-up is moved through several
        /// frames on its way to `perform(_:)`; boxing it once is cheaper (callgrind).
        indirect case finish(Completion)
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
            interceptor.retryWithOwner(request, failedWith: error, attempt: attempt) { [self] decision, owner in
                perform(retryDecided(decision, error: error, owner: owner))
            }
        }
    }

    // MARK: - Redirects

    /// A redirect status without `Location` (a 302 with nowhere to go): FoundationNetworking ends
    /// the task with no error and never announces the head (it is only `task.response`; a body is
    /// dropped), which read as a success with no response — 0 bytes under `Validation.none`. As
    /// curl does, Courier takes the 3xx as the final response: its head goes the way of every head
    /// (the caller's head rules, then validation), just before the ending. Docs/RedirectsAndAuthentication.md.
    func takeUnannouncedRedirectHead(_ task: URLSessionTask, error: (any Error)?) {
        // The state first: a task's `response` is read through URLSession's lock and a bridge
        // (~3k instructions), and nearly every attempt has had its head.
        guard error == nil, locked({ $0.phase.isCurrent(task) && !$0.metrics.attemptHasHead }),
            let http = task.response as? HTTPURLResponse, (300..<400).contains(http.statusCode)
        else { return }
        urlTask(task, didReceive: http)
    }

    /// Decides a redirect URLSession proposes (RedirectState.swift): `nil` stops at the 3xx
    /// response (refused, or re-issued by Courier itself when the body must be re-sent).
    func redirect(_ task: URLSessionTask, to proposed: URLRequest, response: HTTPURLResponse) -> URLRequest? {
        // The header diet's mark is FoundationNetworking's copy of it: decided and recorded without it.
        let proposed = HeadDiet.unmarked(proposed)
        let step = locked { $0.redirectProposed(proposed, response: response, task: task) }
        let next: URLRequest?
        switch step {
        case .done(let request):
            next = request
        case .ask(let decide, let request, let resend, let stripped):
            let decided = decide(request, response)  // user code: called outside the lock
            next = locked {
                $0.redirectDecided(decided, offered: request, resend: resend, stripped: stripped, response: response, task: task)
            }
        }
        return next.map(core.tls.handedOver)
    }
}
