import Foundation

extension TaskMetrics: CustomStringConvertible {
    /// ``timeline(redaction:)`` with the default redaction.
    public var description: String { timeline() }

    /// The timeline for people: one line per attempt with its marks in milliseconds since the
    /// task was created, then the retries, pauses and redirects, then the totals. Every URL,
    /// and every URL inside an error or a retry's reason, goes through `redaction` (user info and
    /// secret query parameters masked). What Linux does not
    /// report (DNS, connect, TLS) is said to be unknown, not shown as zero.
    ///
    ///     #  kind          method status  start queued  sent  head first  last   end    bytes  ending      url
    ///     0  initial       GET       302    0.2      -     -   1.9     -     -   2.0        0  redirected  http://127.0.0.1:8080/redirect/1
    ///     1  redirect      GET       200    2.0      -     -   3.1   3.2   3.2   3.3      312  completed   http://127.0.0.1:8080/get
    ///     total 3.3 ms · 2 attempts · 0 retries · sent 0 B · received 312 B · DNS, connect, TLS: not reported on Linux
    public func timeline(redaction: Redaction = .default) -> String {
        var lines = [
            Self.row(["#", "kind", "method", "status", "start", "queued", "sent", "head", "first", "last", "end", "bytes", "ending", "url"])
        ]
        for attempt in attempts {
            lines.append(
                Self.row([
                    String(attempt.number), attempt.kind.rawValue, attempt.method, attempt.statusCode.map(String.init) ?? "-",
                    Self.ms(attempt.start), Self.ms(attempt.queuedBehindHostCap), Self.ms(attempt.requestBodySent),
                    Self.ms(attempt.responseHeaders), Self.ms(attempt.firstBodyByte), Self.ms(attempt.lastBodyByte),
                    Self.ms(attempt.end), String(attempt.bytesReceived), attempt.ending?.rawValue ?? "running",
                    attempt.url.map(redaction.url) ?? "-",
                ]))
            if let offset = attempt.continuesFrom { lines.append("   continues from byte \(offset)") }
            if let error = attempt.error {
                lines.append("   error: \(LoggingMonitor.Record.escapingControls(redaction.redactingURLs(in: error)))")
            }
        }
        for request in segmentRequests ?? [] {
            let lasted = request.end.map { Self.ms($0) } ?? "-"
            lines.append(
                "connection \(request.connection): bytes \(request.range.lowerBound)-\(request.range.upperBound - 1), "
                    + "\(request.statusCode.map(String.init) ?? "no answer"), \(Self.ms(request.start)) → \(lasted) ms, "
                    + "\(request.bytesWritten) B written, \(request.ending?.rawValue ?? "running")")
        }
        for retry in retries {
            lines.append(
                "retry after attempt \(retry.afterAttempt), at \(Self.ms(retry.at)) ms, waiting \(Self.ms(retry.delay)) ms: "
                    + LoggingMonitor.Record.escapingControls(redaction.redactingURLs(in: retry.reason)))
        }
        for pause in pauses {
            let lasted = pause.end.map { "for \(Self.ms($0 - pause.start)) ms" } ?? "not ended"
            lines.append("pause (\(pause.reason.rawValue)) at \(Self.ms(pause.start)) ms, \(lasted), holding \(pause.bytesHeld) B")
        }
        for redirect in redirects {
            let target = redirect.to.map(redaction.url) ?? "no usable Location"
            var line = "redirect \(redirect.statusCode) → \(target)\(redirect.followed ? "" : " (refused)")"
            if !redirect.strippedHeaders.isEmpty { line += ", stripped \(redirect.strippedHeaders.joined(separator: ", "))" }
            lines.append(line)
        }
        if let cacheOutcome { lines.append("cache: \(cacheOutcome.rawValue)") }
        let total = completedAt.map { "total \(Self.ms($0)) ms" } ?? "running"
        lines.append(
            "\(total) · \(attempts.count) attempt\(attempts.count == 1 ? "" : "s") · \(retryCount) retr\(retryCount == 1 ? "y" : "ies")"
                + " · sent \(bytesSent) B · received \(bytesReceived) B · DNS, connect, TLS: not reported on Linux")
        return lines.joined(separator: "\n")
    }

    /// Milliseconds with one decimal, or `-`.
    static func ms(_ duration: Duration?) -> String {
        guard let duration else { return "-" }
        let (seconds, attoseconds) = duration.components
        let milliseconds = Double(seconds) * 1000 + Double(attoseconds) / 1e15
        return String(format: "%.1f", milliseconds)
    }

    private static let widths = [2, 12, 6, 6, 7, 7, 7, 7, 7, 7, 7, 9, 12, 0]

    /// Right-aligned numbers, left-aligned words, in fixed columns.
    private static func row(_ cells: [String]) -> String {
        var line = ""
        for (index, cell) in cells.enumerated() {
            let width = widths[min(index, widths.count - 1)]
            let padding = String(repeating: " ", count: max(0, width - cell.count))
            let leftAligned = [1, 2, 12, 13].contains(index) || index == 0
            line += (leftAligned ? cell + padding : padding + cell) + (index == cells.count - 1 ? "" : " ")
        }
        return line
    }
}
