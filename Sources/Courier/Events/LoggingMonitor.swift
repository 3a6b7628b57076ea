import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An ``EventMonitor`` that turns each event of a task's life into one structured ``Record``
/// and hands it to a sink: swift-log, OSLog, standard error, a test's array.
///
///     configuration.eventMonitors = [LoggingMonitor.standardError(level: .info)]
///     // level=info event=completed task=1 msg="GET https://example.com/a: 200 in 41.207 ms" …
///
/// **Levels.** The ``Level`` names and raw values are swift-log's, so
/// `Logger.Level(rawValue: record.level.rawValue)!` bridges. Each event has one level:
///
/// | Event | Level |
/// | --- | --- |
/// | `created`, `resumed`, `adapted`, `attempt`, `continue`, `response`, `pause-ended` | debug |
/// | `redirect` followed, `challenge` answered, `published`, `completed` without error, `invalidated` | info |
/// | `suspended`, `retry`, `pause`, `redirect` refused, `challenge` not answered, `completed` cancelled, `reconnect` (an event stream's) | notice |
/// | `invalidated` with an error, `attempt` under ``TLSPolicy/insecureWithoutVerification`` | warning |
/// | `completed` with any other error | error |
///
/// A monitor set to ``Level/trace`` also puts the headers of requests (`attempt`, `adapted`) and
/// responses (`response`, `redirect`, `challenge`) in the records' metadata, one
/// `header.<lower-cased name>` key each, redacted. A record below ``level`` is not built at all.
///
/// **Redaction.** Every URL and header value in a record, and every URL inside an error's or a
/// refusal's text, goes through ``redaction`` (``Redaction/default`` masks credentials, cookies,
/// URL user info and secret query parameters). Bodies are never logged.
///
/// **Where it runs.** On the manager's serial event queue, like every monitor, one event after
/// another and never under a Courier lock: the sink may call back into Courier (read a task's
/// `state` or `metrics`) and need not be fast, though a slow one delays the monitors after it. The monitor is a value
/// with no state of its own; whatever the sink shares is the sink's to protect.
public struct LoggingMonitor: EventMonitor {
    /// How much a record matters: swift-log's levels, with the same raw values.
    public enum Level: String, Sendable, Comparable, CaseIterable {
        /// Request and response headers (only the records of a `.trace` monitor carry them).
        case trace
        /// The steps of a request: created, attempt, response.
        case debug
        /// What a person watching a service wants to see: a task's outcome, redirects, downloads.
        case info
        /// Something slowed a task or changed its course: a retry, a pause, a refusal, a cancellation.
        case notice
        /// An attempt under ``TLSPolicy/insecureWithoutVerification``; the session was invalidated
        /// with an error.
        case warning
        /// A task failed.
        case error
        /// Not used by Courier; here so every swift-log level has its match.
        case critical

        private var severity: Int {
            switch self {
            case .trace: return 0
            case .debug: return 1
            case .info: return 2
            case .notice: return 3
            case .warning: return 4
            case .error: return 5
            case .critical: return 6
            }
        }

        /// Whether `lhs` is less severe than `rhs`.
        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.severity < rhs.severity }
    }

    /// One event, written down: what a sink receives.
    ///
    /// ``message`` and ``metadata`` hold text with control characters escaped (`\n`, `\r`, `\t`,
    /// `\u{1B}`…), so no value can start a new line in any log; ``line`` is all of it in one
    /// `key=value` line.
    public struct Record: Sendable {
        /// The event's level.
        public let level: Level
        /// The event's name: ``TaskEvent/name`` (`created`, `attempt`, `completed`…),
        /// `invalidated` for ``EventMonitor/sessionDidInvalidate(error:)``, or `reconnect` for
        /// ``EventMonitor/eventStreamWillReconnect(_:)``.
        public let event: String
        /// The task's ``SessionTask/taskIdentifier``; `nil` for `invalidated` and `reconnect`.
        public let taskIdentifier: Int?
        /// A sentence for people, e.g. `GET https://example.com/a: 200 in 41.207 ms`.
        public let message: String
        /// The event's facts as key/value pairs (`task`, `event`, `method`, `url`, `status`,
        /// `attempt`, `kind`, `total_ms`…; Docs/Observability.md lists them). Durations are
        /// milliseconds with three decimals, sizes are bytes.
        public let metadata: [String: String]
        /// The whole record on one line: `level=… event=… task=… msg="…"` then the other
        /// metadata keys in alphabetical order. A value is double-quoted when it is empty or
        /// holds a space, `"`, `=` or `\`, with `"` and `\` escaped inside the quotes. Never
        /// contains a line break.
        public let line: String

        /// Creates a record; ``line`` is written from the rest. Courier creates them, tests of
        /// sinks may too.
        public init(level: Level, event: String, taskIdentifier: Int?, message: String, metadata: [String: String]) {
            self.level = level
            self.event = event
            self.taskIdentifier = taskIdentifier
            self.message = Self.escapingControls(message)
            self.metadata = metadata.mapValues(Self.escapingControls)
            self.line = Self.line(
                level: level, event: event, taskIdentifier: taskIdentifier, message: self.message, metadata: self.metadata)
        }
    }

    /// The least severe level written; records below it are not built.
    public let level: Level
    /// What is masked in every record.
    public let redaction: Redaction
    private let sink: @Sendable (Record) -> Void

    /// Creates a monitor that hands `sink` one ``Record`` per event at `level` or above, on the
    /// manager's event queue.
    public init(level: Level = .info, redaction: Redaction = .default, sink: @escaping @Sendable (Record) -> Void) {
        self.level = level
        self.redaction = redaction
        self.sink = sink
    }

    /// A monitor that writes each record's ``Record/line`` and a line feed to standard error, in
    /// one `write(2)` per line so that lines from several threads or processes are not cut into
    /// each other (on a pipe, for lines up to `PIPE_BUF`). No timestamp is added.
    public static func standardError(level: Level = .info, redaction: Redaction = .default) -> LoggingMonitor {
        LoggingMonitor(level: level, redaction: redaction) { record in
            var bytes = Array((record.line + "\n").utf8)
            bytes.withUnsafeMutableBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let written = write(2, buffer.baseAddress! + offset, buffer.count - offset)
                    if written > 0 {
                        offset += written
                    } else if written < 0 && errno == EINTR {
                        continue
                    } else {
                        return  // Standard error is gone or full: a log line is not worth blocking for.
                    }
                }
            }
        }
    }

    // MARK: Events

    /// Logs ``TaskEvent/created`` (debug).
    public func taskDidCreate(_ task: any SessionTask) { log(.created, task) }
    /// Logs ``TaskEvent/resumed`` (debug).
    public func taskDidResume(_ task: any SessionTask) { log(.resumed, task) }
    /// Logs ``TaskEvent/suspended`` (notice).
    public func taskDidSuspend(_ task: any SessionTask) { log(.suspended, task) }
    /// Logs ``TaskEvent/adapted(_:)`` (debug).
    public func taskDidAdaptRequest(_ task: any SessionTask, event: TaskAdaptationEvent) { log(.adapted(event), task) }
    /// Logs ``TaskEvent/attemptStarted(_:)`` (debug).
    public func taskDidStartAttempt(_ task: any SessionTask, event: TaskAttemptEvent) {
        log(.attemptStarted(event), task)
    }
    /// Logs ``TaskEvent/continuing(_:)`` (debug).
    public func taskWillContinue(_ task: any SessionTask, event: TaskContinuationEvent) { log(.continuing(event), task) }
    /// Logs ``TaskEvent/redirected(_:)`` (info when followed, notice when refused).
    public func taskDidRedirect(_ task: any SessionTask, event: TaskRedirectEvent) { log(.redirected(event), task) }
    /// Logs ``TaskEvent/challenge(_:)`` (info when answered, notice when not).
    public func taskDidAnswerChallenge(_ task: any SessionTask, event: TaskChallengeEvent) {
        log(.challenge(event), task)
    }
    /// Logs ``TaskEvent/response(_:)`` (debug).
    public func taskDidReceiveResponse(_ task: any SessionTask, response: HTTPURLResponse) {
        log(.response(response), task)
    }
    /// Logs ``TaskEvent/retrying(_:)`` (notice).
    public func taskWillRetry(_ task: any SessionTask, event: TaskRetryEvent) { log(.retrying(event), task) }
    /// Logs ``TaskEvent/paused(_:)`` (notice).
    public func taskDidPause(_ task: any SessionTask, event: TaskPauseEvent) { log(.paused(event), task) }
    /// Logs ``TaskEvent/pauseEnded(_:)`` (debug).
    public func taskDidEndPause(_ task: any SessionTask, event: TaskPauseEvent) { log(.pauseEnded(event), task) }
    /// Logs ``TaskEvent/connections(_:)`` (debug).
    public func taskDidUpdateConnections(_ task: any SessionTask, event: TaskConnectionsEvent) {
        log(.connections(event), task)
    }
    /// Logs ``TaskEvent/published(_:)`` (info).
    public func taskDidPublishDownload(_ task: any SessionTask, file: URL) { log(.published(file), task) }
    /// Logs ``TaskEvent/completed(_:)`` (info; notice when cancelled; error when it failed).
    public func taskDidComplete(_ task: any SessionTask, event: TaskCompletionEvent) { log(.completed(event), task) }

    /// Logs `invalidated` (info; warning with an error).
    public func sessionDidInvalidate(error: (any Error)?) {
        let recordLevel: Level = error == nil ? .info : .warning
        guard recordLevel >= level else { return }
        var metadata = ["event": "invalidated"]
        var message = "the session was invalidated"
        if let error {
            let text = redaction.redactingURLs(in: String(describing: error))
            metadata["error"] = text
            message += ": " + text
        }
        sink(Record(level: recordLevel, event: "invalidated", taskIdentifier: nil, message: message, metadata: metadata))
    }

    /// Logs `reconnect` (notice, as a retry is): an event stream about to reconnect.
    public func eventStreamWillReconnect(_ event: EventStreamReconnectEvent) {
        guard Level.notice >= level else { return }
        var metadata = [
            "event": "reconnect", "reconnection": String(event.reconnection), "failures": String(event.failuresInARow),
            "delay_ms": Self.milliseconds(event.delay),
        ]
        if let url = event.url { metadata["url"] = redaction.url(url) }
        if let id = event.lastEventID { metadata["last_event_id"] = id }
        let why: String
        if let reason = event.reason {
            put(reason, into: &metadata)
            why = "\(reason.code): \(metadata["error_message"] ?? "")"
        } else {
            why = "the server ended the response"
        }
        let message =
            "event stream \(metadata["url"] ?? "?"): reconnection \(event.reconnection) in "
            + "\(Self.milliseconds(event.delay)) ms after \(why)"
        sink(Record(level: .notice, event: "reconnect", taskIdentifier: nil, message: message, metadata: metadata))
    }

    /// The level of `event`: the table in the type's documentation.
    static func level(of event: TaskEvent) -> Level {
        switch event {
        // Verification turned off is never quiet.
        case .attemptStarted(let attempt) where attempt.tlsPolicy?.isInsecure == true: return .warning
        case .created, .resumed, .adapted, .attemptStarted, .continuing, .response, .pauseEnded, .connections: return .debug
        case .redirected(let redirect): return redirect.followed ? .info : .notice
        case .challenge(let challenge): return challenge.answered ? .info : .notice
        case .published: return .info
        case .suspended, .retrying, .paused: return .notice
        case .completed(let completion):
            guard let error = completion.error else { return .info }
            return error.isCancellation ? .notice : .error
        }
    }

    private func log(_ event: TaskEvent, _ task: any SessionTask) {
        let recordLevel = Self.level(of: event)
        // Filtered records cost a switch: nothing below is built.
        guard recordLevel >= level else { return }
        sink(record(event, task: task, level: recordLevel))
    }
}

// MARK: - Building records

extension LoggingMonitor {
    /// The record of `event`: its metadata, then a sentence made of the same facts.
    private func record(_ event: TaskEvent, task: any SessionTask, level recordLevel: Level) -> Record {
        let id = task.taskIdentifier
        var metadata = ["event": event.name, "task": String(id)]
        let message: String
        switch event {
        case .created:
            let request = task.originalRequest
            put(request, into: &metadata, headers: false)
            message = "task \(id) created: \(describe(request))"
        case .resumed:
            message = "task \(id) resumed"
        case .suspended:
            message = "task \(id) suspended"
        case .adapted(let adaptation):
            metadata["attempt"] = String(adaptation.attempt)
            put(adaptation.adapted, into: &metadata, headers: true)
            if adaptation.original.url != adaptation.adapted.url, let original = adaptation.original.url {
                metadata["original_url"] = redaction.url(original)
            }
            message = "task \(id): adapters changed attempt \(adaptation.attempt): \(describe(adaptation.adapted))"
        case .attemptStarted(let attempt):
            metadata["attempt"] = String(attempt.number)
            metadata["kind"] = attempt.kind.rawValue
            put(attempt.request, into: &metadata, headers: true)
            let policy = attempt.tlsPolicy
            if let policy { metadata["tls"] = policy.description }
            message =
                "task \(id): attempt \(attempt.number) (\(attempt.kind.rawValue)): \(describe(attempt.request))"
                + (policy.map { " [TLS policy: \($0)]" } ?? "")
        case .continuing(let continuation):
            metadata["offset"] = String(continuation.offset)
            metadata["kind"] = continuation.kind.rawValue
            if let validator = continuation.validator { metadata["validator"] = validator }
            message = "task \(id): continuing from byte \(continuation.offset) (\(continuation.kind.rawValue))"
        case .redirected(let redirect):
            put(redirect.response, into: &metadata)
            metadata["followed"] = String(redirect.followed)
            if let target = redirect.target { metadata["target"] = redaction.url(target) }
            if let method = redirect.method { metadata["method"] = method }
            if !redirect.strippedHeaders.isEmpty { metadata["stripped"] = redirect.strippedHeaders.joined(separator: ",") }
            let to = redirect.target.map { " to " + redaction.url($0) } ?? ""
            if let refusal = redirect.refusal.map(redaction.redactingURLs(in:)) {
                metadata["refusal"] = refusal
                message = "task \(id): \(redirect.response.statusCode) redirect\(to) refused: \(refusal)"
            } else {
                message = "task \(id): \(redirect.response.statusCode) redirect\(to) \(redirect.followed ? "followed" : "not followed")"
            }
        case .challenge(let challenge):
            put(challenge.response, into: &metadata)
            metadata["answered"] = String(challenge.answered)
            if let scheme = challenge.scheme { metadata["scheme"] = scheme }
            let what = "task \(id): \(challenge.response.statusCode) \(challenge.scheme.map { $0 + " " } ?? "")challenge"
            if let reason = challenge.reason.map(redaction.redactingURLs(in:)) {
                metadata["reason"] = reason
                message = what + (challenge.answered ? " answered" : " not answered: " + reason)
            } else {
                message = what + (challenge.answered ? " answered" : " not answered")
            }
        case .response(let response):
            put(response, into: &metadata)
            if response.expectedContentLength >= 0 { metadata["length"] = String(response.expectedContentLength) }
            message = "task \(id): \(response.statusCode) from \(metadata["url"] ?? "?")"
        case .retrying(let retry):
            metadata["retry"] = String(retry.retry)
            if let limit = retry.retryLimit { metadata["retry_limit"] = String(limit) }
            metadata["delay_ms"] = Self.milliseconds(retry.delay)
            metadata["bytes"] = String(retry.bytesReceived)
            metadata["continues_from"] = String(retry.continuesFrom)
            // Named only when it is not the attempt retry (whose lines stay as they were).
            if retry.owner != .attempt { metadata["owner"] = retry.owner.name }
            put(retry.error, into: &metadata)
            let of = retry.retryLimit.map { " of \($0)" } ?? ""
            message =
                "task \(id): retry \(retry.retry)\(of) in \(Self.milliseconds(retry.delay)) ms after \(metadata["error"] ?? ""): "
                + (metadata["error_message"] ?? "")
        case .paused(let pause):
            metadata["reason"] = pause.reason.rawValue
            metadata["bytes"] = String(pause.bytesHeld)
            message = "task \(id): paused (\(pause.reason.rawValue)) holding \(pause.bytesHeld) bytes"
        case .pauseEnded(let pause):
            metadata["reason"] = pause.reason.rawValue
            metadata["bytes"] = String(pause.bytesHeld)
            let lasted = pause.duration.map { " after \(Self.milliseconds($0)) ms" } ?? ""
            if let duration = pause.duration { metadata["duration_ms"] = Self.milliseconds(duration) }
            message = "task \(id): pause (\(pause.reason.rawValue)) ended\(lasted)"
        case .connections(let crew):
            metadata["connections"] = String(crew.connections.count)
            metadata["wanted"] = String(crew.wanted)
            metadata["bytes"] = String(crew.bytesWritten)
            metadata["length"] = String(crew.length)
            metadata["ranges"] = crew.connections.map { "\($0.id):\($0.range.lowerBound)-\($0.range.upperBound)" }
                .joined(separator: ",")
            message =
                "task \(id): \(crew.connections.count) connections (\(crew.wanted) wanted), "
                + "\(crew.bytesWritten) of \(crew.length) bytes"
        case .published(let file):
            metadata["file"] = file.path
            message = "task \(id): published \(file.path)"
        case .completed(let completion):
            message = completed(completion, task: task, into: &metadata)
        }
        return Record(level: recordLevel, event: event.name, taskIdentifier: id, message: message, metadata: metadata)
    }

    /// The completed record's metadata (outcome and timeline summary) and its sentence.
    private func completed(
        _ completion: TaskCompletionEvent, task: any SessionTask, into metadata: inout [String: String]
    )
        -> String
    {
        let metrics = completion.metrics
        let method = metrics.attempts.last?.method ?? task.originalRequest.httpMethod ?? "GET"
        let url = completion.response?.url ?? metrics.attempts.last?.url ?? task.originalRequest.url
        metadata["method"] = method
        if let url { metadata["url"] = redaction.url(url) }
        if let status = completion.response?.statusCode ?? completion.error?.statusCode { metadata["status"] = String(status) }
        metadata["attempts"] = String(metrics.attempts.count)
        metadata["retries"] = String(metrics.retryCount)
        metadata["redirects"] = String(metrics.redirects.filter(\.followed).count)
        metadata["bytes"] = String(metrics.bytesReceived)
        metadata["bytes_sent"] = String(metrics.bytesSent)
        if let total = metrics.completedAt { metadata["total_ms"] = Self.milliseconds(total) }
        if let headers = metrics.attempts.last(where: { $0.responseHeaders != nil })?.timeToHeaders {
            metadata["headers_ms"] = Self.milliseconds(headers)
        }
        if let file = completion.fileURL { metadata["file"] = file.path }
        if let cache = metrics.cacheOutcome { metadata["cache"] = cache.rawValue }
        if let error = completion.error { put(error, into: &metadata) }

        var text = "task \(metadata["task"] ?? ""): \(method) \(metadata["url"] ?? "(no URL)")"
        if let error = completion.error {
            text += error.isCancellation ? " cancelled" : " failed"
            if let status = metadata["status"] { text += " with \(status)" }
        } else {
            text += ": " + (metadata["status"] ?? "done")
        }
        if let total = metadata["total_ms"] { text += " in \(total) ms" }
        let attempts = metrics.attempts.count
        text += " (\(attempts) attempt\(attempts == 1 ? "" : "s"), \(metrics.bytesReceived) bytes"
        if let cache = metadata["cache"] { text += ", cache \(cache)" }
        text += ")"
        if completion.error != nil, !(completion.error?.isCancellation ?? false) {
            text += ": \(metadata["error"] ?? ""): \(metadata["error_message"] ?? "")"
        }
        return text
    }

    /// `method` and redacted `url`, and the redacted headers of a trace monitor.
    private func put(_ request: URLRequest, into metadata: inout [String: String], headers: Bool) {
        metadata["method"] = request.httpMethod ?? "GET"
        if let url = request.url { metadata["url"] = redaction.url(url) }
        if headers, level == .trace { put(headers: request.allHTTPHeaderFields ?? [:], into: &metadata) }
    }

    /// `status` and redacted `url`, and the redacted headers of a trace monitor.
    private func put(_ response: HTTPURLResponse, into metadata: inout [String: String]) {
        metadata["status"] = String(response.statusCode)
        if let url = response.url { metadata["url"] = redaction.url(url) }
        guard level == .trace else { return }
        var fields: [String: String] = [:]
        for (name, value) in response.allHeaderFields {
            let name = "\(name)"
            // Two spellings of one name (FoundationNetworking keeps them apart) share a key.
            fields[name] = fields[name].map { $0 + ", \(value)" } ?? "\(value)"
        }
        put(headers: fields, into: &metadata)
    }

    /// One `header.<lower-cased name>` key per header, its value redacted.
    private func put(headers fields: [String: String], into metadata: inout [String: String]) {
        for (name, value) in redaction.headers(fields) {
            let key = "header." + Record.key(name.lowercased())
            metadata[key] = metadata[key].map { $0 + ", " + value } ?? value
        }
    }

    /// `error` (the code), `error_message` (URLs in it redacted) and `status` when it has one.
    private func put(_ error: CourierError, into metadata: inout [String: String]) {
        metadata["error"] = error.code.description
        metadata["error_message"] = redaction.redactingURLs(in: error.message)
        if let status = error.statusCode { metadata["status"] = String(status) }
    }

    /// `GET https://…` with the URL redacted.
    private func describe(_ request: URLRequest) -> String {
        "\(request.httpMethod ?? "GET") \(request.url.map(redaction.url) ?? "(no URL)")"
    }

    /// Milliseconds with three decimals (`41.207`), from integer microseconds so that no
    /// locale or rounding of a `Double` shows.
    static func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let (microseconds, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000)
        guard !overflow else { return seconds < 0 ? "-inf" : "inf" }
        let total = microseconds.addingReportingOverflow(attoseconds / 1_000_000_000_000).partialValue
        let magnitude = total.magnitude
        let fraction = String(magnitude % 1000)
        return (total < 0 ? "-" : "") + "\(magnitude / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }
}

// MARK: - Writing records

extension LoggingMonitor.Record {
    /// `text` with every control character (and the Unicode line separators) written as an
    /// escape, so that no value can start a new line in a log.
    static func escapingControls(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var output = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            guard needsEscape(scalar) else {
                output.append(scalar)
                continue
            }
            let escape: String
            switch scalar {
            case "\n": escape = "\\n"
            case "\r": escape = "\\r"
            case "\t": escape = "\\t"
            default: escape = "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            }
            output.append(contentsOf: escape.unicodeScalars)
        }
        return String(output)
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.generalCategory == .control || scalar == "\u{2028}" || scalar == "\u{2029}"
    }

    /// A metadata key made safe for `key=value`: anything but letters, digits and `._-` becomes `_`.
    static func key(_ name: String) -> String {
        let scalars = name.unicodeScalars.map { scalar -> Unicode.Scalar in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "._-".unicodeScalars.contains(scalar))
                ? scalar : "_"
        }
        return scalars.isEmpty ? "_" : String(String.UnicodeScalarView(scalars))
    }

    /// `value` as written after `=`: bare when it is safe, else double-quoted with `"` and `\`
    /// escaped.
    static func value(_ value: String) -> String {
        let needsQuotes =
            value.isEmpty
            || value.unicodeScalars.contains {
                $0 == " " || $0 == "\"" || $0 == "=" || $0 == "\\" || $0.properties.isWhitespace || needsEscape($0)
            }
        guard needsQuotes else { return value }
        let escaped = escapingControls(value)
            .replacingOccurrences(of: "\\", with: "\\\\")
            .replacingOccurrences(of: "\"", with: "\\\"")
        return "\"" + escaped + "\""
    }

    /// `level=… event=… task=… msg=…` then the other metadata keys in order.
    static func line(
        level: LoggingMonitor.Level, event: String, taskIdentifier: Int?, message: String, metadata: [String: String]
    )
        -> String
    {
        var fields = ["level=" + level.rawValue, "event=" + value(event)]
        if let taskIdentifier { fields.append("task=\(taskIdentifier)") }
        fields.append("msg=" + value(message))
        for (name, text) in metadata.sorted(by: { $0.key < $1.key }) {
            // `event` and `task` are already at the front.
            if name == "event" && text == event { continue }
            if name == "task" && text == taskIdentifier.map(String.init) { continue }
            fields.append(key(name) + "=" + value(text))
        }
        return fields.joined(separator: " ")
    }
}
