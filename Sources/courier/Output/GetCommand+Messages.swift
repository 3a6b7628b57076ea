import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier
import CourierSupport

/// The lines `courier get` says on stderr (the queue, `events` and `ws` say theirs with them):
/// an error is one line, in the command's words, its URL through the one redaction.
extension GetCommand {
    static func existsMessage(_ file: URL) -> String {
        "\(file.path) already exists (use --force to replace it, or -o to save under another name)"
    }

    /// `--accept-unverified` let `what` through: said even with `--quiet` (asked for, but not to be forgotten).
    static func warnUnverified(_ what: String) {
        ProgressPrinter.writeToStandardError(
            "courier: warning: \(what) unverified: the server's body could not be proven complete "
                + "(content-encoded, or ended only by the connection closing)\n")
    }

    /// What a failure leaves: with `-o -`, nothing on stdout; otherwise the bytes kept and how to
    /// continue them (`; 12.3 MiB kept — run the same command again to resume`), if any.
    static func keptSuffix(_ resumeData: ResumeData?, toStandardOutput: Bool) -> String {
        if toStandardOutput { return "; nothing was written to stdout" }
        guard let resumeData, resumeData.bytesOnDisk > 0 else { return "" }
        return "; \(ProgressFormat.bytes(resumeData.bytesOnDisk)) kept — run the same command again to resume"
    }

    /// The error line after `courier: `. An HTTP failure leads with its status:
    /// `HTTP 404 Not Found from http://…`; others give the library's message and the URL.
    /// `retryPolicy` is the policy the command ran with (`nil`: it retries no status, as
    /// `courier events`), so what the line says about retrying is what was done.
    static func errorLine(_ error: CourierError, requestURL: URL, retryPolicy: RetryPolicy?) -> String {
        let url = Self.displayURL(error.response?.url ?? requestURL)
        switch error.code {
        case .unacceptableStatusCode where error.statusCode != nil:
            let refusal = retryPolicy.flatMap { retryAfterRefusal(error, policy: $0) }
            return "\(describe(error)) from \(url)" + (refusal.map { ": " + $0 } ?? "")
        case .deadlineExceeded: return "the download did not finish within --max-time (\(url))"
        default: return "\(describe(error)) (\(url))"
        }
    }

    /// What failed, without the URL: `HTTP 503 Service Unavailable`, `network error: …`.
    static func describe(_ error: CourierError) -> String {
        if error.code == .unacceptableStatusCode, let status = error.statusCode {
            let phrase = HTTPReasonPhrase.phrase(for: status).map { " " + $0 } ?? ""
            return "HTTP \(status)\(phrase)"
        }
        switch error.code {
        // Already says "the network is unreachable", and that no server was at fault.
        case .networkUnreachable:
            return error.message + (error.message.contains("waited") ? "" : " (--wait-for-network SECONDS waits for one)")
        case _ where error.code.isTLS: return "TLS error: \(error.message)"
        case _ where error.isTransport: return "network error: \(error.message)"
        case .timedOut: return "timed out: \(error.message)"
        case .integrityFailed: return "integrity check failed: \(error.message)"
        case .invalidResponse: return "the server's response is not valid HTTP: \(error.message)"
        case .deadlineExceeded: return "the download did not finish within --max-time"
        default: return error.message
        }
    }

    /// Why a retryable status was not retried when its `Retry-After` asks for longer than `policy`
    /// (the one in force) waits, by the library's rule (``RetryPolicy/refusedRetryAfter(for:method:now:)``),
    /// else `nil`; also `nil` when `policy` retries nothing (`--retries 0`): the Retry-After was not why.
    static func retryAfterRefusal(_ error: CourierError, policy: RetryPolicy) -> String? {
        guard let requested = policy.refusedRetryAfter(for: error) else { return nil }
        return "the server asked to be retried after \(ProgressFormat.delay(requested)), and courier waits at most "
            + "\(ProgressFormat.delay(policy.maximumRetryAfter)), so it stopped instead of retrying"
    }

    /// A retry, announced on stderr: what failed, how far the download had come, when the next
    /// attempt starts and from where, and which retry it is:
    /// `courier: network error: … (97.7 KiB received); retrying in 0.3 s, continuing from there (retry 1 of 3)`.
    static func retryLine(_ event: TaskRetryEvent) -> String {
        var line = "courier: " + oneLine(describe(event.error))
        if event.bytesReceived > 0 { line += " (\(ProgressFormat.bytes(event.bytesReceived)) received)" }
        line += "; retrying in \(ProgressFormat.delay(event.delay))"
        if event.bytesReceived > 0 { line += event.continuesFrom > 0 ? ", continuing from there" : ", starting over" }
        line += event.retryLimit.map { " (retry \(event.retry) of \($0))" } ?? " (retry \(event.retry))"
        return line
    }

    /// What to say after stopping for a signal.
    static func interruptedLine(keeping resumeData: ResumeData?, toStandardOutput: Bool = false) -> String {
        if toStandardOutput {
            return "courier: interrupted; nothing was written to stdout (a download to stdout is not kept: the next run starts over)"
        }
        guard let resumeData, resumeData.bytesOnDisk > 0 else {
            return "courier: interrupted; nothing was kept, so the next run starts from the beginning"
        }
        return "courier: interrupted; \(ProgressFormat.bytes(resumeData.bytesOnDisk)) kept — run the same command again to resume"
    }

    /// `url` for messages: through the process's one redaction (OutputRedaction.swift), user
    /// info and secret query parameters masked.
    static func displayURL(_ url: URL) -> String {
        OutputRedaction.current.url(url)
    }

    /// Messages from servers and libcurl may hold line breaks; an error is always one line.
    static func oneLine(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { $0 == "\n" || $0 == "\r" ? " " : $0 }))
    }
}
