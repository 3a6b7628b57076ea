import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `courier get -v`: the request and response heads and the timeline on stderr, curl's way
/// (`>` request, `<` response, `*` what Courier did), with secrets masked by the process's one
/// redaction (OutputRedaction.swift: `Redaction.default` plus `--redact-header` and `--redact-param`).
///
/// The request headers are the ones Courier hands to URLSession; libcurl adds its own (`Host`,
/// and `Accept` or `User-Agent` when they are missing), which are not reported to Courier.
final class VerboseMonitor: EventMonitor {
    private let printer: ProgressPrinter
    private let redaction: Redaction
    /// Signalled once the completion and its timeline are printed.
    private let printed = DispatchSemaphore(value: 0)

    init(printer: ProgressPrinter, redaction: Redaction = OutputRedaction.current) {
        self.printer = printer
        self.redaction = redaction
    }

    /// Waits (at most `seconds`) until the timeline is printed: monitors run on the manager's
    /// event queue, after the completion handler may already have run.
    func waitUntilPrinted(seconds: Double = 2) {
        _ = printed.wait(timeout: .now() + seconds)
    }

    func taskDidStartAttempt(_ task: any SessionTask, event: TaskAttemptEvent) {
        let request = event.request
        var lines = ["* attempt \(event.number) (\(event.kind.rawValue))"]
        lines.append("> \(request.httpMethod ?? "GET") \(request.url.map(redaction.url) ?? "-")")
        for (name, value) in redaction.headers(request.allHTTPHeaderFields ?? [:]) {
            lines.append("> \(name): \(GetCommand.oneLine(value))")
        }
        print(lines)
    }

    func taskWillContinue(_ task: any SessionTask, event: TaskContinuationEvent) {
        print(["* continues from byte \(event.offset)" + (event.validator.map { " if unchanged since \($0)" } ?? "")])
    }

    func taskDidReceiveResponse(_ task: any SessionTask, response: HTTPURLResponse) {
        print(head(of: response))
    }

    func taskDidRedirect(_ task: any SessionTask, event: TaskRedirectEvent) {
        let target = event.target.map(redaction.url) ?? "no usable Location"
        var line = "* redirect \(event.response.statusCode) to \(target)"
        if let refusal = event.refusal { line += ": refused, \(GetCommand.oneLine(refusal))" }
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
            lines.append("< \(name): \(GetCommand.oneLine(value))")
        }
        return lines
    }

    func taskDidAnswerChallenge(_ task: any SessionTask, event: TaskChallengeEvent) {
        let scheme = event.scheme ?? "unknown"
        print([event.answered ? "* answering the \(scheme) challenge" : "* not answering the 401: \(event.reason ?? scheme)"])
    }

    func taskDidPause(_ task: any SessionTask, event: TaskPauseEvent) {
        print(["* paused: the \(event.reason.rawValue) fell behind, holding \(event.bytesHeld) bytes"])
    }

    func taskDidPublishDownload(_ task: any SessionTask, file: URL) {
        print(["* saved \(file.path)"])
    }

    func taskDidComplete(_ task: any SessionTask, event: TaskCompletionEvent) {
        let outcome = event.error.map { "* failed: \(GetCommand.oneLine($0.message))" } ?? "* completed"
        print(
            [outcome, "* timeline (ms since the task was created):"]
                + event.metrics.timeline(redaction: redaction).split(separator: "\n").map { "*   " + $0 })
        printed.signal()
    }

    private func print(_ lines: [String]) {
        printer.message(lines.joined(separator: "\n"))
    }
}
