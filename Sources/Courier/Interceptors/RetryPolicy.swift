import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The built-in retrier: exponential backoff with jitter, a retry limit, idempotent methods only
/// by default, statuses 408/429/500/502/503/504 and transient transport failures (refused, lost,
/// no response, timed out; not DNS or TLS), `Retry-After` honoured up to a cap.
public struct RetryPolicy: RequestRetrier, Codable, Equatable {
    /// Retries after the first attempt. Default 2.
    public var retryLimit: Int = 2
    /// Methods that are retried; the idempotent ones by default (RFC 9110 §9.2.2). Add `POST`
    /// only for endpoints where sending twice is harmless.
    public var retryableMethods: Set<String> = ["GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"]
    /// Statuses that are retried.
    public var retryableStatusCodes: Set<Int> = [408, 429, 500, 502, 503, 504]
    /// Whether transient transport failures are retried: ``CourierError/Code-swift.struct/timedOut``,
    /// ``CourierError/Code-swift.struct/connectionRefused``, ``CourierError/Code-swift.struct/connectionLost``,
    /// ``CourierError/Code-swift.struct/noResponse``, and ``CourierError/Code-swift.struct/network``
    /// errors of the kinds that used to be retried. Never ``CourierError/Code-swift.struct/dnsFailed``
    /// or ``CourierError/Code-swift.struct/tlsFailed``, which would fail the same way again.
    public var retriesTransientErrors = true
    /// The first delay; doubled for each retry, with jitter. Default 250 ms.
    public var initialDelay: Duration = .milliseconds(250)
    /// The longest computed delay. Default 30 s.
    public var maximumDelay: Duration = .seconds(30)
    /// The longest `Retry-After` honoured. A server that asks for longer is not retried: the task
    /// fails now with its status rather than waiting a delay the server did not ask for — as a
    /// download does (``DownloadPolicy/maximumRetryAfter``). Default 120 s.
    public var maximumRetryAfter: Duration = .seconds(120)

    /// The defaults.
    public init() {}

    /// The defaults.
    public static let `default` = RetryPolicy()

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
        guard attempt < retryLimit, !error.isCancellation,
            retryableMethods.contains((request.httpMethod ?? "GET").uppercased())
        else { return .doNotRetry }
        let statusRetryable = error.code == .unacceptableStatusCode && error.statusCode.map(retryableStatusCodes.contains) == true
        let transient = retriesTransientErrors && DownloadPolicy.isTransient(error)
        guard statusRetryable || transient else { return .doNotRetry }
        if let response = error.response, let asked = DownloadPolicy.requestedRetryDelay(of: response), asked > maximumRetryAfter {
            return .doNotRetry
        }
        let backoff = Backoff(initial: initialDelay, maximum: maximumDelay, maximumRetryAfter: maximumRetryAfter)
        return .retryAfter(backoff.delay(attempt: attempt + 1, retryAfter: error.response?.value(forHTTPHeaderField: "Retry-After")))
    }
}

/// Exponential backoff with "equal jitter", and `Retry-After` (RFC 9110 §10.2.3) with a cap.
package struct Backoff {
    let initial: Duration
    let maximum: Duration
    let maximumRetryAfter: Duration

    /// The delay before retry number `attempt` (1, 2, …).
    func delay(attempt: Int, retryAfter: String?, now: Date = Date()) -> Duration {
        if let retryAfter, let seconds = Self.seconds(fromRetryAfter: retryAfter, now: now) {
            return min(.milliseconds(Int64(seconds * 1000)), maximumRetryAfter)
        }
        let exponent = min(max(attempt - 1, 0), 30)
        let backoff = min(initial * (1 << exponent), maximum)
        // Half fixed, half random, so that many clients do not retry in lockstep.
        let half = backoff / 2
        return half + half * Double.random(in: 0...1)
    }

    /// `12 s`, `999999 s (11.6 days)`: a delay for messages, with a larger unit when it helps.
    package static func describe(_ delay: Duration) -> String {
        let seconds = delay.seconds
        let text = seconds < 10 && seconds != seconds.rounded() ? String(format: "%.1f s", seconds) : "\(Int(seconds.rounded())) s"
        let larger: (Double, String)? =
            seconds >= 2 * 86_400 ? (seconds / 86_400, "days") : seconds >= 2 * 3600 ? (seconds / 3600, "hours")
            : seconds >= 3 * 60 ? (seconds / 60, "minutes") : nil
        guard let (value, unit) = larger else { return text }
        return text + " (" + String(format: "%.1f", value) + " \(unit))"
    }

    /// `Retry-After` as seconds from now: a delay in seconds, or an HTTP date.
    static func seconds(fromRetryAfter value: String, now: Date) -> Double? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if !trimmed.isEmpty, trimmed.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) {
            return trimmed.count > 9 ? 1e9 : Double(trimmed)
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: trimmed) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }
}

extension Duration {
    /// The duration in seconds, for timers and messages.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// Whole milliseconds, for configuration files.
    var milliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }
}
