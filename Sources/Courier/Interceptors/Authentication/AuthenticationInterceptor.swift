import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
internal import CourierSupport

/// An adapter and retrier that authenticates requests with an ``Authenticator``'s credential and
/// refreshes it **once** however many requests need it: Courier's answer to Alamofire's
/// `AuthenticationInterceptor`.
///
/// Use it as both adapter and retrier:
///
///     let auth = AuthenticationInterceptor(authenticator: OAuth2Authenticator(), credential: stored)
///     configuration.interceptor = Interceptor(adapters: [auth], retriers: [auth])
///
/// - As an adapter it applies the credential. When the credential requires a refresh, or the
///   server refused it, the first request starts one refresh; every request that arrives while it
///   runs waits (held as its completion, no thread blocked) and then goes with the new credential.
/// - As a retrier it answers a failure ``Authenticator/didRequest(_:with:failDueToAuthenticationError:)``
///   calls an authentication failure with ``RetryDecision/retry``: when the request carried the
///   current credential, that credential is marked refused first, so the retry's adaptation
///   refreshes it (once); when it carried an older one, the retry simply gets the current one.
/// - Without a credential (none given, none set), the first request obtains one
///   (``Authenticator/obtainCredential()``) the way a refresh does: once, while the others wait.
/// - A refresh that throws, times out, or — answering a refusal — would exceed the
///   ``RefreshWindow`` fails every waiting request with the same ``AuthenticationError`` (the
///   task's error is ``CourierError/Code-swift.struct/adaptationFailed`` with it as
///   `underlyingError`). Refreshes of an expired credential never count toward the window.
///
/// Every waiting request is released exactly once: when the refresh succeeds, fails, or passes
/// `refreshTimeout`. A task cancelled while it waits completes at once as cancelled; the others
/// keep waiting. The credential is never written into a message, log or error.
public final class AuthenticationInterceptor<AuthenticatorType: Authenticator>: RequestAdapter, RequestRetrier {
    /// The credential type of the authenticator.
    public typealias Credential = AuthenticatorType.Credential

    /// A request waiting for the refresh, and where its answer goes.
    struct Waiter: Sendable {
        let request: URLRequest
        let completion: @Sendable (Result<URLRequest, any Error>) -> Void
    }

    /// The authenticator asked to apply, refresh and judge credentials.
    public let authenticator: AuthenticatorType
    /// The longest a refresh may take before its waiters fail with
    /// ``AuthenticationError/Code-swift.struct/refreshTimedOut``; `nil` waits for it however long.
    public let refreshTimeout: Duration?
    private let state: Locked<AuthenticationState<Credential, Waiter>>

    /// Authenticates with `credential` (`nil`: the first request obtains one with
    /// ``Authenticator/obtainCredential()``), allows at most `refreshWindow`'s refreshes answering
    /// refusals (`nil`: no limit), and gives each refresh `refreshTimeout`.
    public init(
        authenticator: AuthenticatorType, credential: Credential? = nil,
        refreshWindow: RefreshWindow? = RefreshWindow(), refreshTimeout: Duration? = .seconds(60)
    ) {
        self.authenticator = authenticator
        self.refreshTimeout = refreshTimeout
        self.state = Locked(AuthenticationState(credential: credential, window: refreshWindow))
    }

    /// The credential requests get now. Setting it replaces it for later requests (a refresh that
    /// is running still ends and installs its own); `nil` makes the next request obtain one.
    public var credential: Credential? {
        get { state.withLock { $0.credential } }
        set { state.withLock { $0.credentialReplaced(by: newValue) } }
    }

    /// How many requests wait for a refresh now.
    public var waitingRequestCount: Int { state.withLock { $0.waitingCount } }

    // MARK: - RequestAdapter

    /// Applies the current credential; when there is none, or it needs a refresh, the request waits for the one refresh
    /// and goes with its credential (or fails with its error).
    public func adapt(
        _ request: URLRequest, attempt: Int, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
    ) {
        let waiter = Waiter(request: request, completion: completion)
        var action = state.withLock { $0.requestArrived(waiter, now: .now) }
        while true {
            switch action {
            case .check(let credential, let generation):
                let expired = credential.requiresRefresh  // user code: outside the lock
                action = state.withLock {
                    $0.credentialChecked(waiter, generation: generation, expired: expired, now: .now)
                }
            case .apply(let credential):
                return release(waiter, with: .success(credential))
            case .wait:
                return
            case .startRefresh(let credential, let id):
                return startRefresh(from: credential, id: id)
            case .fail(let error):
                return completion(.failure(error))
            }
        }
    }

    // MARK: - RequestRetrier

    /// `true`: it retries only a request whose credential the server refused, unprocessed, so
    /// an event stream's connection asks it too (a `POST` stream included).
    public var retriesOnlyRefusals: Bool { true }

    /// Retries a failure the authenticator calls an authentication failure (when the request carried the current
    /// credential, it is marked refused so the retry refreshes it); does not retry any other failure.
    public func retry(
        _ request: URLRequest, failedWith error: CourierError, attempt: Int,
        completion: @escaping @Sendable (RetryDecision) -> Void
    ) {
        guard let response = error.response,
            authenticator.didRequest(request, with: response, failDueToAuthenticationError: error),
            let (credential, generation) = state.withLock({ state in state.credential.map { ($0, state.generation) } })
        else { return completion(.doNotRetry) }
        if authenticator.isRequest(request, authenticatedWith: credential) {
            state.withLock { $0.credentialRejected(generation: generation) }
        }
        // Either way the retry's adaptation decides: it refreshes a refused credential (once),
        // or applies the newer one this request did not carry.
        completion(.retry)
    }

    // MARK: - Refreshing

    /// Runs the refresh `id` (from `credential`, or obtaining a first one) and, when it or its
    /// timeout ends first, releases its waiters.
    private func startRefresh(from credential: Credential?, id: Int) {
        let authenticator = authenticator
        let timeout = refreshTimeout
        Task {
            await withTaskGroup(of: Result<Credential, AuthenticationError>.self) { group in
                group.addTask {
                    do {
                        guard let credential else { return .success(try await authenticator.obtainCredential()) }
                        return .success(try await authenticator.refresh(credential))
                    } catch let error as AuthenticationError where credential == nil {
                        // The default `obtainCredential()`'s missingCredential, said as itself.
                        return .failure(error)
                    } catch {
                        return .failure(.refreshFailed(error))
                    }
                }
                if let timeout {
                    group.addTask {
                        try? await Task.sleep(for: timeout)
                        return .failure(.refreshTimedOut(after: timeout))
                    }
                }
                guard let first = await group.next() else { return }
                // The waiters go now; the group still waits for a refresh that ignores cancellation,
                // and its late answer is dropped (`refreshEnded` knows the refresh is over).
                refreshEnded(id: id, with: first)
                group.cancelAll()
            }
        }
    }

    private func refreshEnded(id: Int, with result: Result<Credential, AuthenticationError>) {
        guard let release = state.withLock({ $0.refreshEnded(id: id, with: result) }) else { return }
        for waiter in release.waiters { self.release(waiter, with: release.result) }
    }

    /// Answers `waiter`: its request with `credential` applied (user code, outside the lock), or the error.
    private func release(_ waiter: Waiter, with result: Result<Credential, AuthenticationError>) {
        switch result {
        case .success(let credential):
            var request = waiter.request
            authenticator.apply(credential, to: &request)
            waiter.completion(.success(request))
        case .failure(let error):
            waiter.completion(.failure(error))
        }
    }
}
