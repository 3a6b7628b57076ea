import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An event monitor that prints a task's request and response heads and its timeline curl's way
/// (`>` request, `<` response, `*` what Courier did), through a ``ProgressPrinter`` (so a progress
/// line is blanked first), with secrets masked by a ``Redaction``: `courier get -v`.
///
/// The request headers are the ones Courier hands to URLSession; libcurl adds its own (`Host`,
/// and `Accept` or `User-Agent` when they are missing), which are not reported to Courier.
public final class VerboseMonitor: EventMonitor {
    private let printer: ProgressPrinter
    private let redaction: Redaction
    /// Signalled once the completion and its timeline are printed.
    private let printed = DispatchSemaphore(value: 0)

    /// A monitor printing through `printer`, masking what `redaction` names (`courier` passes the
    /// process's one redaction, with `--redact-header` and `--redact-param`).
    public init(printer: ProgressPrinter, redaction: Redaction = .default) {
        self.printer = printer
        self.redaction = redaction
    }

    /// Waits (at most `seconds`) until the timeline is printed: monitors run on the manager's
    /// event queue, after the completion handler may already have run.
    public func waitUntilPrinted(seconds: Double = 2) {
        _ = printed.wait(timeout: .now() + seconds)
    }

    /// Prints what the event says.
    public func taskDidStartAttempt(_ task: any SessionTask, event: TaskAttemptEvent) {
        let request = event.request
        var lines = ["* attempt \(event.number) (\(event.kind.rawValue))"]
        lines.append("> \(request.httpMethod ?? "GET") \(request.url.map(redaction.url) ?? "-")")
        for (name, value) in redaction.headers(request.allHTTPHeaderFields ?? [:]) {
            lines.append("> \(name): \(Self.oneLine(value))")
        }
        print(lines)
    }

    /// Prints what the event says.
    public func taskWillContinue(_ task: any SessionTask, event: TaskContinuationEvent) {
        print(["* continues from byte \(event.offset)" + (event.validator.map { " if unchanged since \($0)" } ?? "")])
    }

    /// Prints what the event says.
    public func taskDidReceiveResponse(_ task: any SessionTask, response: HTTPURLResponse) {
        print(head(of: response))
    }

    /// Prints what the event says.
    public func taskDidRedirect(_ task: any SessionTask, event: TaskRedirectEvent) {
        let target = event.target.map(redaction.url) ?? "no usable Location"
        var line = "* redirect \(event.response.statusCode) to \(target)"
        if let refusal = event.refusal { line += ": refused, \(Self.oneLine(refusal))" }
        if !event.strippedHeaders.isEmpty { line += " (removed \(event.strippedHeaders.joined(separator: ", ")))" }
        // A redirect URLSession follows has no response callback of its own: its head is shown here.
        print(head(of: event.response) + [line])
    }

    /// `< status reason` and each header, masked.
    private func head(of response: HTTPURLResponse) -> [String] {
        var lines = ["< \(response.statusCode) \(HTTPURLResponse.localizedString(forStatusCode: response.statusCode))"]
        let fields = response.allHeaderFields.reduce(into: [String: String]()) { fields, pair in
            if let name = pair.key as? String { fields[name] = "\(pair.value)" }
        }
        for (name, value) in redaction.headers(fields) {
            lines.append("< \(name): \(Self.oneLine(value))")
        }
        return lines
    }

    /// Prints what the event says.
    public func taskDidAnswerChallenge(_ task: any SessionTask, event: TaskChallengeEvent) {
        let scheme = event.scheme ?? "unknown"
        print([event.answered ? "* answering the \(scheme) challenge" : "* not answering the 401: \(event.reason ?? scheme)"])
    }

    /// Prints what the event says.
    public func taskDidPause(_ task: any SessionTask, event: TaskPauseEvent) {
        print(["* paused: the \(event.reason.rawValue) fell behind, holding \(event.bytesHeld) bytes"])
    }

    /// Prints what the event says.
    public func taskDidPublishDownload(_ task: any SessionTask, file: URL) {
        print(["* saved \(file.path)"])
    }

    /// Prints what the event says.
    public func taskDidComplete(_ task: any SessionTask, event: TaskCompletionEvent) {
        let outcome = event.error.map { "* failed: \(Self.oneLine($0.message))" } ?? "* completed"
        print(
            [outcome, "* timeline (ms since the task was created):"]
                + event.metrics.timeline(redaction: redaction).split(separator: "\n").map { "*   " + $0 })
        printed.signal()
    }

    /// `text` on one line: a line break in a header value or an error would otherwise start a
    /// line of its own.
    private static func oneLine(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { $0 == "\n" || $0 == "\r" ? " " : $0 }))
    }

    private func print(_ lines: [String]) {
        printer.message(lines.joined(separator: "\n"))
    }
}
