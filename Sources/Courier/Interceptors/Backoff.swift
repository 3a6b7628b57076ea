import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
internal import CourierSupport

/// The one backoff: how long to wait before the next attempt. Request retries (``RetryPolicy``),
/// download retries (``DownloadPolicy/retry``) and event-stream reconnection
/// (``ReconnectPolicy``) all ask it.
///
/// Attempt *n* (1, 2, …) waits the base *b* = min(`initial` × 2<sup>*n*−1</sup>, `maximum`),
/// then, with ``Jitter/equal``, a random time between *b*/2 and *b* (half fixed, half random, so
/// that many clients that failed together do not come back together). With a `Retry-After` the
/// server's delay replaces the backoff, capped by `maximumRetryAfter`, without jitter: the server
/// said when.
///
/// The delays with ``RetryPolicy``'s defaults (`initial` 250 ms, `maximum` 30 s, equal jitter):
///
/// | attempt | base | waits |
/// | --- | --- | --- |
/// | 1 | 250 ms | 125–250 ms |
/// | 2 | 500 ms | 250–500 ms |
/// | 3 | 1 s | 0.5–1 s |
/// | 4 | 2 s | 1–2 s |
/// | 5 | 4 s | 2–4 s |
/// | 6 | 8 s | 4–8 s |
/// | 7 | 16 s | 8–16 s |
/// | 8 and on | 30 s | 15–30 s |
///
/// With ``ReconnectPolicy``'s defaults (`initial` the server's `retry:` or 3 s, at least 0.5 s,
/// `maximum` 60 s, no jitter) reconnection *n* after *n*−1 failures in a row waits 3 s, 6 s, 12 s,
/// 24 s, 48 s, then 60 s.
///
/// Never traps: the doubling stops at `maximum` (and after 64 doublings, for a zero `initial`),
/// and a `Retry-After` of any size is read as at most 10⁹ seconds.
package struct Backoff: Sendable, Equatable {
    /// How the base delay is spread.
    package enum Jitter: Sendable, Equatable {
        /// A random time between half the base and the base.
        case equal
        /// The base itself (event-stream reconnection: its waits are the server's `retry:` and
        /// a rate limit, which must hold exactly).
        case none
    }

    package let initial: Duration
    package let maximum: Duration
    package let maximumRetryAfter: Duration
    package let jitter: Jitter

    package init(initial: Duration, maximum: Duration, maximumRetryAfter: Duration = .zero, jitter: Jitter = .equal) {
        self.initial = max(.zero, initial)
        self.maximum = max(.zero, maximum)
        self.maximumRetryAfter = max(.zero, maximumRetryAfter)
        self.jitter = jitter
    }

    /// The base delay of attempt `attempt` (1, 2, …; anything below 1 counts as 1), before jitter.
    package func base(attempt: Int) -> Duration {
        var delay = initial
        // Doubling stops at the maximum, so it cannot overflow whatever the attempt number.
        var doublings = min(max(attempt - 1, 0), 64)
        while doublings > 0, delay < maximum {
            delay = delay * 2
            doublings -= 1
        }
        return min(delay, maximum)
    }

    /// The delay before attempt `attempt` (1, 2, …): `retryAfter` (seconds or an HTTP date) up to
    /// `maximumRetryAfter` when it can be read, otherwise the jittered backoff. `random` is
    /// called with the range 0...1 (tests pass a fixed one).
    package func delay(
        attempt: Int, retryAfter: String? = nil, now: Date = Date(),
        random: (ClosedRange<Double>) -> Double = { Double.random(in: $0) }
    ) -> Duration {
        if let retryAfter, let seconds = Self.seconds(fromRetryAfter: retryAfter, now: now) {
            return min(Self.duration(seconds: seconds), maximumRetryAfter)
        }
        let base = base(attempt: attempt)
        switch jitter {
        case .none:
            return base
        case .equal:
            let half = base / 2
            // Within the bounds whatever the rounding of a huge base times a fraction.
            return min(max(half + half * min(max(random(0...1), 0), 1), half), base)
        }
    }

    /// The delay a response's `Retry-After` asks for, uncapped and rounded up to the millisecond;
    /// `nil` when it has none or it cannot be read.
    package static func requestedDelay(of response: HTTPURLResponse, now: Date = Date()) -> Duration? {
        guard let value = response.value(forHTTPHeaderField: "Retry-After"),
            let seconds = seconds(fromRetryAfter: value, now: now)
        else { return nil }
        return duration(seconds: seconds, roundingUp: true)
    }

    /// `12 s`, `999999 s (11.6 days)`: a delay for messages, with a larger unit when it helps.
    package static func describe(_ delay: Duration) -> String {
        let seconds = delay.seconds
        let text = seconds < 10 && seconds != seconds.rounded() ? String(format: "%.1f s", seconds) : "\(Int(seconds.rounded())) s"
        let larger: (Double, String)? =
            seconds >= 2 * 86_400
            ? (seconds / 86_400, "days")
            : seconds >= 2 * 3600
                ? (seconds / 3600, "hours")
                : seconds >= 3 * 60 ? (seconds / 60, "minutes") : nil
        guard let (value, unit) = larger else { return text }
        return text + " (" + String(format: "%.1f", value) + " \(unit))"
    }

    /// The longest `Retry-After` read, in seconds (about 31 years): anything longer means the same.
    static let longestRetryAfter: Double = 1e9

    /// `Retry-After` (RFC 9110 §10.2.3) as seconds from now: a delay in seconds, or an HTTP date;
    /// at most ``longestRetryAfter``.
    static func seconds(fromRetryAfter value: String, now: Date) -> Double? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if !trimmed.isEmpty, trimmed.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) {
            return trimmed.count > 9 ? longestRetryAfter : Double(trimmed)
        }
        // The package's one HTTP-date reader: the IMF-fixdate and the two obsolete forms RFC 9110
        // §5.6.7 says a recipient must accept.
        guard let date = HTTPDate.parse(trimmed) else { return nil }
        let seconds = date.timeIntervalSince(now)
        guard seconds.isFinite else { return nil }
        return min(max(0, seconds), longestRetryAfter)
    }

    private static func duration(seconds: Double, roundingUp: Bool = false) -> Duration {
        let milliseconds = seconds * 1000
        return .milliseconds(Int64(roundingUp ? milliseconds.rounded(.up) : milliseconds))
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
