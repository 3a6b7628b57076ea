import Foundation
import Courier
import CourierSupport

/// The lines only `courier` prints (its `courier:` prefix, its delay wording); the rest of the
/// progress text is the library's ``ProgressFormat``.
extension ProgressFormat {
    /// A delay for messages: `0.3 s`, `12 s`, `999999 s (11.6 days)` — with a larger unit
    /// when it helps.
    static func delay(_ delay: Duration) -> String {
        Backoff.describe(delay)  // the library's wording, so its messages and ours agree
    }

    /// The line printed once a download is saved:
    /// `courier: saved /tmp/x.bin (64.0 MiB in 1.2 s, 53.3 MiB/s; continued from 12.0 MiB; 1 retry)`,
    /// or with `path` `nil` (`-o -`): `courier: wrote 64.0 MiB to stdout (in 1.2 s, 53.3 MiB/s)`.
    /// The rate counts the bytes this run received, not those already on disk.
    static func summary(
        path: String?, size: Int64, seconds: Double, bytesReceived: Int64, resumedBytes: Int64, retries: Int
    ) -> String {
        var details = "in \(String(format: "%.1f", max(seconds, 0))) s"
        if seconds > 0, bytesReceived > 0 { details += ", \(rate(Double(bytesReceived) / seconds))" }
        if resumedBytes > 0 { details += "; continued from \(bytes(resumedBytes))" }
        if retries > 0 { details += "; \(retries) \(retries == 1 ? "retry" : "retries")" }
        guard let path else { return "courier: wrote \(bytes(size)) to stdout (\(details))" }
        return "courier: saved \(path) (\(bytes(size)) \(details))"
    }
}
