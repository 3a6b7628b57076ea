import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The built-in retrier, and the one retry policy: exponential backoff with jitter (`Backoff`),
/// a retry limit, idempotent methods only by default, statuses 408/429/500/502/503/504 and
/// transient failures (``CourierError/Code-swift.struct/isTransient``: refused, lost, no response,
/// timed out, other transport failures; not DNS or TLS), `Retry-After` honoured up to a cap.
///
/// Data, upload and stream tasks use it through the manager's
/// ``SessionManager/Configuration/retryPolicy`` or an ``Interceptor``; a download has its own in
/// ``DownloadPolicy/retry`` (3 retries by default), asked first, through the same decision.
public struct RetryPolicy: RequestRetrier, Codable, Equatable {
    /// Retries after the first attempt. Default 2.
    public var retryLimit: Int = 2
    /// Methods that are retried; the idempotent ones by default (RFC 9110 §9.2.2). Add `POST`
    /// only for endpoints where sending twice is harmless.
    public var retryableMethods: Set<String> = ["GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"]
    /// Statuses that are retried.
    public var retryableStatusCodes: Set<Int> = [408, 429, 500, 502, 503, 504]
    /// Whether failures that may pass are retried: those whose code is
    /// ``CourierError/Code-swift.struct/isTransient`` (timed out, refused, lost, no response, and
    /// other transport failures). Never ``CourierError/Code-swift.struct/dnsFailed`` or
    /// ``CourierError/Code-swift.struct/tlsFailed``, which would fail the same way again.
    public var retriesTransientErrors = true
    /// The first delay; doubled for each retry, with jitter. Default 250 ms.
    public var initialDelay: Duration = .milliseconds(250)
    /// The longest computed delay. Default 30 s.
    public var maximumDelay: Duration = .seconds(30)
    /// The longest `Retry-After` honoured. A server that asks for longer is not retried: the task
    /// fails now with its status rather than after a capped wait the server has already said is
    /// too short (`503` with `Retry-After: 86400` means "not today"). A download says so in its
    /// error's message. Default 120 s.
    public var maximumRetryAfter: Duration = .seconds(120)

    /// The defaults.
    public init() {}

    /// The defaults.
    public static let `default` = RetryPolicy()

    /// Answers with `decision(for:error:attempt:)`, at once.
    public func retry(
        _ request: URLRequest, failedWith error: CourierError, attempt: Int,
        completion: @escaping @Sendable (RetryDecision) -> Void
    ) {
        completion(decision(for: request, error: error, attempt: attempt))
    }

    // A configuration-file form: delays in milliseconds, every key optional (defaults apply).
    private enum CodingKeys: String, CodingKey {
        case retryLimit, retryableMethods, retryableStatusCodes, retriesTransientErrors
        case initialDelayMilliseconds, maximumDelayMilliseconds, maximumRetryAfterMilliseconds
    }

    /// Reads the configuration-file form; missing keys keep their defaults, negative values throw.
    public init(from decoder: any Decoder) throws {
        let values = try decoder.container(keyedBy: CodingKeys.self)
        func milliseconds(_ key: CodingKeys, _ fallback: Duration) throws -> Duration {
            guard let value = try values.decodeIfPresent(Int64.self, forKey: key) else { return fallback }
            guard value >= 0 else {
                throw DecodingError.dataCorruptedError(forKey: key, in: values, debugDescription: "must be ≥ 0 milliseconds")
            }
            return .milliseconds(value)
        }
        retryLimit = try values.decodeIfPresent(Int.self, forKey: .retryLimit) ?? retryLimit
        guard retryLimit >= 0 else {
            throw DecodingError.dataCorruptedError(forKey: .retryLimit, in: values, debugDescription: "must be ≥ 0")
        }
        retryableMethods = Set(
            (try values.decodeIfPresent([String].self, forKey: .retryableMethods) ?? Array(retryableMethods)).map { $0.uppercased() })
        retryableStatusCodes = try values.decodeIfPresent(Set<Int>.self, forKey: .retryableStatusCodes) ?? retryableStatusCodes
        retriesTransientErrors = try values.decodeIfPresent(Bool.self, forKey: .retriesTransientErrors) ?? retriesTransientErrors
        initialDelay = try milliseconds(.initialDelayMilliseconds, initialDelay)
        maximumDelay = try milliseconds(.maximumDelayMilliseconds, maximumDelay)
        maximumRetryAfter = try milliseconds(.maximumRetryAfterMilliseconds, maximumRetryAfter)
    }

    /// Writes the configuration-file form.
    public func encode(to encoder: any Encoder) throws {
        var values = encoder.container(keyedBy: CodingKeys.self)
        try values.encode(retryLimit, forKey: .retryLimit)
        try values.encode(retryableMethods.sorted(), forKey: .retryableMethods)
        try values.encode(retryableStatusCodes.sorted(), forKey: .retryableStatusCodes)
        try values.encode(retriesTransientErrors, forKey: .retriesTransientErrors)
        try values.encode(initialDelay.milliseconds, forKey: .initialDelayMilliseconds)
        try values.encode(maximumDelay.milliseconds, forKey: .maximumDelayMilliseconds)
        try values.encode(maximumRetryAfter.milliseconds, forKey: .maximumRetryAfterMilliseconds)
    }

    /// The decision, without a callback.
    public func decision(for request: URLRequest, error: CourierError, attempt: Int) -> RetryDecision {
        switch verdict(for: request, error: error, attempt: attempt) {
        case .retry(let delay): return .retryAfter(delay)
        case .giveUp, .retryAfterTooLong: return .doNotRetry
        }
    }

    /// What ``decision(for:error:attempt:)`` decides, and why it does not retry when the reason
    /// matters to the task (a download names the delay the server asked for in its error).
    enum Verdict: Equatable {
        case retry(Duration)
        case giveUp
        /// The failure would be retried, but its `Retry-After` asks for longer than ``maximumRetryAfter``.
        case retryAfterTooLong(requested: Duration)
    }

    func verdict(for request: URLRequest, error: CourierError, attempt: Int, now: Date = Date()) -> Verdict {
        verdict(method: request.httpMethod ?? "GET", error: error, attempt: attempt, now: now)
    }

    func verdict(method: String, error: CourierError, attempt: Int, now: Date = Date()) -> Verdict {
        guard attempt < retryLimit, !error.isCancellation, retryableMethods.contains(method.uppercased()) else { return .giveUp }
        let statusRetryable = error.code == .unacceptableStatusCode && error.statusCode.map(retryableStatusCodes.contains) == true
        let transient = retriesTransientErrors && error.code.isTransient
        guard statusRetryable || transient else { return .giveUp }
        if let response = error.response, let asked = Backoff.requestedDelay(of: response, now: now), asked > maximumRetryAfter {
            return .retryAfterTooLong(requested: asked)
        }
        return .retry(backoff.delay(attempt: attempt + 1, retryAfter: error.response?.value(forHTTPHeaderField: "Retry-After"), now: now))
    }

    /// The backoff this policy's delays come from.
    var backoff: Backoff {
        Backoff(initial: initialDelay, maximum: maximumDelay, maximumRetryAfter: maximumRetryAfter)
    }

    /// The delay before retry number `attempt` (1, 2, …): `Retry-After` when the server sent one
    /// (seconds or an HTTP date, at most ``maximumRetryAfter``), otherwise exponential backoff from
    /// ``initialDelay`` capped at ``maximumDelay``, with "equal jitter" (see `Backoff`).
    public func retryDelay(attempt: Int, retryAfter: String?, now: Date = Date()) -> Duration {
        backoff.delay(attempt: attempt, retryAfter: retryAfter, now: now)
    }

    /// Why this policy did not retry `error` when the reason is the server's `Retry-After`: the
    /// delay it asked for, which is longer than ``maximumRetryAfter`` although the failure is one
    /// the policy retries (a status in ``retryableStatusCodes``, or a transient error, of a
    /// `method` it retries, with retries left). `nil` when the policy would retry it, or would not
    /// for another reason. The same rule as the retries themselves, for a program that explains a
    /// failure (`courier get`'s error line).
    public func refusedRetryAfter(for error: CourierError, method: String = "GET", now: Date = Date()) -> Duration? {
        guard case .retryAfterTooLong(let requested) = verdict(method: method, error: error, attempt: 0, now: now) else { return nil }
        return requested
    }

    /// The delay a response's `Retry-After` asks for (a number of seconds, or an HTTP date),
    /// uncapped; `nil` when it has none or it cannot be read. Compared with ``maximumRetryAfter``.
    public static func requestedRetryDelay(of response: HTTPURLResponse, now: Date = Date()) -> Duration? {
        Backoff.requestedDelay(of: response, now: now)
    }
}
