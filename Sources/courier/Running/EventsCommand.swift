import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
import Courier
import CourierSupport

/// `courier events <url>`: each Server-Sent Event as one JSON line on stdout, reconnections on
/// stderr, through the library's `manager.events(for:policy:reconnection:)`. It runs in this process,
/// unsupervised: Docs/CommandLine.md, "`courier events`", says why.
struct EventsCommand {
    let options: Options

    init(_ options: Options) { self.options = options }

    /// How the consuming loop ended.
    enum Ending: Sendable {
        /// The sequence ended: the server answered 204, or stopped sending and reconnecting was over.
        case ended
        /// `-n` events were printed.
        case reachedLimit
        /// The sequence failed (a refused response, reconnections exhausted, cancelled).
        case failed(CourierError)
        /// stdout could not be written.
        case writeFailed(reason: String, events: Int)
    }

    /// Prints events until the stream ends, fails, `-n` is reached or a signal stops it; returns
    /// the exit code (every message is already printed).
    func run() -> Int32 {
        // A reader that goes away (`| head -n 3`) is a failed write said on stderr, not a silent
        // death, as for `courier get -o -`.
        signal(SIGPIPE, SIG_IGN)
        let (stops, watcher) = StopSignals.watching()
        defer { watcher.cancel() }

        let manager = SessionManager(configuration: configuration())
        defer { manager.invalidate(cancelingTasks: true) }
        let stream = manager.events(for: request(), policy: policy(), reconnection: reconnection())
        // Cancelling the consuming task cancels the connection (or the wait before the next one).
        let maximum = options.maxEvents
        switch stops.wait({ await Self.consume(stream, maximum: maximum) })
            ?? .failed(CourierError(code: .network, message: "the stream ended without a result"))
        {
        case .reachedLimit, .ended:
            // `.ended`: a 204, or the end of the response with reconnecting off (the library
            // throws when it gives up on a server that keeps ending its response without an event).
            return ExitCode.success
        case .failed(let error):
            if error.isCancellation, let signal = stops.signal {
                // Quietly: every event printed is a whole line already, and the user asked to stop.
                return ExitCode.forSignal(signal)
            }
            // No policy: an event stream never retries a status (the WHATWG rules end it there).
            var line = GetCommand.errorLine(error, requestURL: options.url, retryPolicy: nil)
            if error.isTransport || error.code == .timedOut {
                line +=
                    options.maxReconnects == 0
                    ? "; not reconnecting (--max-reconnects 0)"
                    : "; gave up after \(options.maxReconnects) failed reconnections in a row"
            }
            return CourierCommand.fail(line, ExitCode.forError(error))
        case .writeFailed(let reason, let events):
            return CourierCommand.fail(
                "cannot write to stdout (\(reason)) after \(events) \(events == 1 ? "event" : "events")", ExitCode.fileSystem)
        }
    }

    /// Prints events as JSON lines until the sequence ends or `maximum` were printed.
    private static func consume(_ stream: EventStream, maximum: Int?) async -> Ending {
        var count = 0
        do {
            for try await event in stream {
                // One write per line: a reader sees whole lines, each as soon as its event is parsed.
                let sent = GetCommand.writeToStandardOutput(Data(JSONLine.event(event).utf8))
                if let reason = sent.failure { return .writeFailed(reason: reason, events: count) }
                count += 1
                if let maximum, count >= maximum { return .reachedLimit }
            }
            return .ended
        } catch {
            return .failed(error)
        }
    }

    // MARK: - Setting up

    private func configuration() -> SessionManager.Configuration {
        var configuration = SessionManager.Configuration()
        configuration.tls = options.tls.announced()
        // An event stream may rightly be silent for long stretches: silence is --idle-timeout's
        // business (the stream's policy, measured by the library to the millisecond), and the
        // library keeps URLSession's request timeout out of a stream's way.
        // -H headers often carry tokens: not to another origin a redirect leads to, unless trusted.
        if !options.locationTrusted { configuration.sensitiveHeaders = Set(options.headers.map { $0.name.lowercased() }) }
        // The library announces each reconnection (why, how long it waits, the id it sends).
        let silent = options.silent
        configuration.eventMonitors = [
            ClosureEventMonitor(onStreamReconnect: { event in
                guard !silent else { return }
                let waited = Double(event.delay.components.seconds) + Double(event.delay.components.attoseconds) / 1e18
                let line = ConnectionLog.reconnectionLine(
                    reason: event.reason, waited: waited, lastEventID: event.lastEventID, reconnection: event.reconnection)
                ProgressPrinter.writeToStandardError(line + "\n")
            })
        ]
        return configuration
    }

    private func request() -> URLRequest {
        var request = URLRequest(url: options.url)
        for header in options.headers { request.addValue(header.value, forHTTPHeaderField: header.name) }
        // The first connection's; the library replaces it with the last id seen on every reconnection.
        if let id = options.lastEventID { request.setValue(id, forHTTPHeaderField: "Last-Event-ID") }
        return request
    }

    private func policy() -> StreamPolicy {
        // `.pause`: a slow reader of stdout makes the stream drop the connection, hand over the
        // events held and reconnect with Last-Event-ID, rather than fail or grow without bound.
        // No head timeout of its own: --idle-timeout bounds the wait for the head too.
        StreamPolicy(overflow: .pause, idleTimeout: options.idleTimeout.map { .seconds(roundingUp: $0) })
    }

    private func reconnection() -> ReconnectPolicy {
        // The library's minimum delay (0.5 s) and rate (60 a minute) bound a server that asks for
        // `retry: 0` and closes after every event; --retry-delay below the minimum is raised to it.
        ReconnectPolicy(
            delay: .milliseconds(Int64((options.retryDelay * 1000).rounded())), maximumAttempts: options.maxReconnects)
    }
}

/// The line each reconnection the library announces (``EventMonitor/eventStreamWillReconnect(_:)``)
/// is said with on stderr: why the last connection ended, the wait, the `Last-Event-ID` sent.
enum ConnectionLog {
    /// `courier: network error: …; reconnecting with Last-Event-ID: 4 after waiting 0.1 s (reconnection 2)`.
    static func reconnectionLine(reason: CourierError?, waited: Double, lastEventID: String?, reconnection: Int) -> String {
        let why = reason.map { GetCommand.oneLine(GetCommand.describe($0)) } ?? "the server ended the response"
        let id = lastEventID.map { "with Last-Event-ID: \(GetCommand.oneLine($0))" } ?? "without Last-Event-ID (no event id yet)"
        let wait = ProgressFormat.delay(.milliseconds(Int64((waited * 1000).rounded())))
        return "courier: \(why); reconnecting \(id) after waiting \(wait) (reconnection \(reconnection))"
    }
}

/// One event as one line of JSON: `{"id":…,"event":…,"data":…}` in that order (which
/// `JSONSerialization` does not promise), `id` `null` when the stream has no last event ID.
enum JSONLine {
    static func event(_ event: ServerSentEvent) -> String {
        let id = event.lastEventID.isEmpty ? "null" : JSONString.quoted(event.lastEventID)
        return "{\"id\":\(id),\"event\":\(JSONString.quoted(event.event)),\"data\":\(JSONString.quoted(event.data))}\n"
    }
}
