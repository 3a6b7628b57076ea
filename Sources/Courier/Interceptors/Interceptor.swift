import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Changes a request before it is sent — on the first attempt and again on every retry (for
/// example to add a fresh token). May fail: the task then completes with
/// ``CourierError/Code-swift.struct/adaptationFailed``, and the retriers are not asked about it
/// (nothing was sent; Docs/Interceptors.md says why). For a token that expires, use
/// ``AuthenticationInterceptor``: it refreshes once for all the requests that need it.
public protocol RequestAdapter: Sendable {
    /// Calls `completion` once with the request to send, or the reason not to send it.
    /// `attempt` is 0 for the first attempt and counts retries after that.
    func adapt(_ request: URLRequest, attempt: Int, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void)
}

/// What a retrier decided after a failure.
public enum RetryDecision: Sendable, Equatable {
    /// Send the request again now.
    case retry
    /// Send the request again after this delay.
    case retryAfter(Duration)
    /// Give up: the task completes with the error.
    case doNotRetry
}

/// Decides, after a failed attempt, whether to try again. Asked for every task kind, with the
/// error the attempt ended with (a transport error, or an HTTP status the validation refused).
/// Never asked about an adapter's refusal, nor about a serializer's error (`decodingFailed`,
/// `emptyResponse`): those happen before anything is sent or after the exchange is over.
///
/// An event stream's connection asks only the retriers whose ``retriesOnlyRefusals`` is `true`:
/// its other retries are the stream's reconnections (Docs/Retries.md).
public protocol RequestRetrier: Sendable {
    /// Calls `completion` once with the decision. `attempt` is the number of the attempt that
    /// failed (0 for the first).
    func retry(
        _ request: URLRequest, failedWith error: CourierError, attempt: Int,
        completion: @escaping @Sendable (RetryDecision) -> Void)

    /// Whether this retrier retries only requests the server refused without processing them:
    /// an authentication challenge answered with a new credential, as ``AuthenticationInterceptor``
    /// does. Such a retrier is asked for every task, an event stream's connection included (a
    /// `POST` stream too: a refused request was not processed, so sending it again repeats
    /// nothing). `false` by default: a retrier that retries anything else must not multiply a
    /// stream's reconnections.
    var retriesOnlyRefusals: Bool { get }
}

extension RequestRetrier {
    /// `false`: a retrier may retry any failure unless it says otherwise.
    public var retriesOnlyRefusals: Bool { false }
}

/// Adapters and retriers composed: adapters run in order, each on the previous one's output;
/// retriers are asked in order and the first that does not say ``RetryDecision/doNotRetry`` wins.
public struct Interceptor: RequestAdapter, RequestRetrier {
    /// The adapters, applied in order.
    public var adapters: [any RequestAdapter]
    /// The retriers, asked in order.
    public var retriers: [any RequestRetrier]

    /// Composes `adapters` and `retriers`.
    public init(adapters: [any RequestAdapter] = [], retriers: [any RequestRetrier] = []) {
        self.adapters = adapters
        self.retriers = retriers
    }

    /// This interceptor's adapters and retriers followed by `other`'s.
    public func then(_ other: Interceptor) -> Interceptor {
        Interceptor(adapters: adapters + other.adapters, retriers: retriers + other.retriers)
    }

    /// `true` when it has retriers and each retries only refusals.
    public var retriesOnlyRefusals: Bool {
        !retriers.isEmpty && retriers.allSatisfy(\.retriesOnlyRefusals)
    }

    /// The same adapters, and of the retriers only those that retry only refusals (looking
    /// inside nested interceptors): what an event stream's connection keeps.
    var keepingOnlyRefusalRetriers: Interceptor {
        Interceptor(adapters: adapters, retriers: Self.refusalRetriers(in: retriers))
    }

    private static func refusalRetriers(in retriers: [any RequestRetrier]) -> [any RequestRetrier] {
        retriers.flatMap { retrier -> [any RequestRetrier] in
            if let nested = retrier as? Interceptor { return refusalRetriers(in: nested.retriers) }
            return retrier.retriesOnlyRefusals ? [retrier] : []
        }
    }

    /// Runs the adapters in order, each on the previous one's request; the first failure ends it.
    public func adapt(
        _ request: URLRequest, attempt: Int, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
    ) {
        Self.adapt(request, attempt: attempt, with: adapters[...], completion: completion)
    }

    private static func adapt(
        _ request: URLRequest, attempt: Int, with adapters: ArraySlice<any RequestAdapter>,
        completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
    ) {
        guard let first = adapters.first else { return completion(.success(request)) }
        let rest = adapters.dropFirst()
        first.adapt(request, attempt: attempt) { result in
            switch result {
            case .success(let adapted): adapt(adapted, attempt: attempt, with: rest, completion: completion)
            case .failure: completion(result)
            }
        }
    }

    /// Asks the retriers in order; the first answer other than `.doNotRetry` wins (none: `.doNotRetry`).
    public func retry(
        _ request: URLRequest, failedWith error: CourierError, attempt: Int,
        completion: @escaping @Sendable (RetryDecision) -> Void
    ) {
        Self.ask(retriers[...], request, error, attempt, completion)
    }

    private static func ask(
        _ retriers: ArraySlice<any RequestRetrier>, _ request: URLRequest, _ error: CourierError, _ attempt: Int,
        _ completion: @escaping @Sendable (RetryDecision) -> Void
    ) {
        guard let first = retriers.first else { return completion(.doNotRetry) }
        let rest = retriers.dropFirst()
        first.retry(request, failedWith: error, attempt: attempt) { decision in
            if decision == .doNotRetry { ask(rest, request, error, attempt, completion) } else { completion(decision) }
        }
    }

    /// The same question as ``retry(_:failedWith:attempt:completion:)``, answered with the owner
    /// of a retry (Docs/Retries.md): ``RetryOwner/refresh`` when the retrier that decided retries
    /// only refusals, ``RetryOwner/attempt`` otherwise. Nested interceptors are looked into, so
    /// the retrier that decided is the one named.
    func retryWithOwner(
        _ request: URLRequest, failedWith error: CourierError, attempt: Int,
        completion: @escaping @Sendable (RetryDecision, RetryOwner) -> Void
    ) {
        Self.askNamingOwner(Self.flattened(retriers)[...], request, error, attempt, completion)
    }

    private static func flattened(_ retriers: [any RequestRetrier]) -> [any RequestRetrier] {
        retriers.flatMap { retrier -> [any RequestRetrier] in
            if let nested = retrier as? Interceptor { return flattened(nested.retriers) }
            return [retrier]
        }
    }

    private static func askNamingOwner(
        _ retriers: ArraySlice<any RequestRetrier>, _ request: URLRequest, _ error: CourierError, _ attempt: Int,
        _ completion: @escaping @Sendable (RetryDecision, RetryOwner) -> Void
    ) {
        guard let first = retriers.first else { return completion(.doNotRetry, .attempt) }
        let rest = retriers.dropFirst()
        let owner: RetryOwner = first.retriesOnlyRefusals ? .refresh : .attempt
        first.retry(request, failedWith: error, attempt: attempt) { decision in
            if decision == .doNotRetry {
                askNamingOwner(rest, request, error, attempt, completion)
            } else {
                completion(decision, owner)
            }
        }
    }
}

/// A ``RequestAdapter`` from a closure that changes the request (throw to refuse it).
public struct Adapter: RequestAdapter {
    private let body: @Sendable (URLRequest, Int, @escaping @Sendable (Result<URLRequest, any Error>) -> Void) -> Void

    /// An adapter that calls back when it is ready (for work that waits, like refreshing a token).
    public init(_ body: @escaping @Sendable (URLRequest, Int, @escaping @Sendable (Result<URLRequest, any Error>) -> Void) -> Void) {
        self.body = body
    }

    /// An adapter that changes the request directly.
    public init(_ transform: @escaping @Sendable (URLRequest) throws -> URLRequest) {
        self.body = { request, _, completion in completion(Result { try transform(request) }) }
    }

    /// Calls the closure given.
    public func adapt(
        _ request: URLRequest, attempt: Int, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
    ) {
        body(request, attempt, completion)
    }
}

extension Adapter {
    /// An adapter that adds each of `headers` to every request (`addValue`: a name given twice is
    /// sent twice), at every attempt: how a program sends fixed headers, a token among them,
    /// without putting them in what it keeps (a ``DownloadQueue`` journals its items' own headers
    /// in the clear). The manager's ``SessionManager/Configuration/sensitiveHeaders`` rule still
    /// applies to them on a redirect.
    public static func addingHeaders(_ headers: [(name: String, value: String)]) -> Adapter {
        Adapter { request in
            var request = request
            for header in headers { request.addValue(header.value, forHTTPHeaderField: header.name) }
            return request
        }
    }
}

/// A ``RequestRetrier`` from a closure.
public struct Retrier: RequestRetrier {
    private let body: @Sendable (URLRequest, CourierError, Int) -> RetryDecision

    /// A retrier that decides at once.
    public init(_ decide: @escaping @Sendable (URLRequest, CourierError, Int) -> RetryDecision) {
        self.body = decide
    }

    /// Calls the closure given and answers with its decision.
    public func retry(
        _ request: URLRequest, failedWith error: CourierError, attempt: Int,
        completion: @escaping @Sendable (RetryDecision) -> Void
    ) {
        completion(body(request, error, attempt))
    }
}
