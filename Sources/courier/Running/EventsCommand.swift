import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
import Courier
import CourierSupport

/// `courier events <url>`: a Server-Sent Events debugging tool. Each event is one JSON line on
/// stdout (`{"id":…,"event":…,"data":…}`), written as it arrives, so it works in a pipe
/// (`courier events URL | jq .data`); reconnections are one line each on stderr, as the library
/// announces them (``EventMonitor/eventStreamWillReconnect(_:)``), said before the wait.
///
/// It is the library's `manager.events(for:policy:reconnection:)`, reconnecting as the library
/// does (the server's `retry:`, `Last-Event-ID`, a 204 to stop), so what it shows is what an app
/// built on Courier would see.
///
/// It runs in this process, not in a supervised child as `courier get` does (GetSupervisor.swift).
/// A FoundationNetworking trap (Docs/Platform.md §7: a response head cut short, a `Content-Length`
/// near 2^63) ends it with the signal, and what that costs is small and recoverable: every event
/// printed is a whole line already (one write each), and the last line's `id` is all the state a
/// new run needs (`--last-event-id`) — exactly what the library's reconnection carries, too.
/// Containing the trap would take a supervisor that records that id after every event and starts
/// a child with it: the library's reconnection again, one process up. `get -o -` needs its
/// supervisor because a body cut in the middle, or written twice, is silently wrong; a stream of
/// whole JSON lines that stops is visibly stopped.
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
        let stops = StopSignals()
        let watcher = stops.watch()
        defer { watcher.cancel() }

        let connections = ConnectionLog(silent: options.silent)
        let manager = SessionManager(configuration: configuration(connections))
        defer { manager.invalidate(cancelingTasks: true) }
        let stream = manager.events(for: request(), policy: policy(), reconnection: reconnection())

        let ending = Locked<Ending?>(nil)
        let finished = DispatchSemaphore(value: 0)
        let task = Task { [options] in
            let end = await Self.consume(stream, maximum: options.maxEvents)
            ending.set(end)
            finished.signal()
        }
        // Cancelling the consuming task cancels the connection (or the wait before the next one).
        stops.onStop { task.cancel() }
        finished.wait()
        // `finished` is signalled only after `ending` is set.
        switch ending.current ?? .failed(CourierError(code: .network, message: "the stream ended without a result")) {
        case .reachedLimit:
            return ExitCode.success
        case .ended:
            // A 204, or the end of the response with reconnecting off: the library throws when
            // it gives up on a server that keeps ending its response without an event.
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
            report(line)
            return ExitCode.forError(error)
        case .writeFailed(let reason, let events):
            report("cannot write to stdout (\(reason)) after \(events) \(events == 1 ? "event" : "events")")
            return ExitCode.fileSystem
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

    private func report(_ line: String) {
        ProgressPrinter.writeToStandardError("courier: \(GetCommand.oneLine(line))\n")
    }

    // MARK: - Setting up

    private func configuration(_ connections: ConnectionLog) -> SessionManager.Configuration {
        var configuration = SessionManager.Configuration()
        configuration.tls = options.tls.announced()
        // An event stream may rightly be silent for long stretches: silence is --idle-timeout's
        // business (the stream's policy, measured by the library to the millisecond), and the
        // library keeps URLSession's request timeout out of a stream's way.
        // -H headers often carry tokens: not to another origin a redirect leads to, unless trusted.
        if !options.locationTrusted { configuration.sensitiveHeaders = Set(options.headers.map { $0.name.lowercased() }) }
        // The library announces each reconnection (why, how long it waits, the id it sends).
        configuration.eventMonitors = [ClosureEventMonitor(onStreamReconnect: { event in connections.reconnecting(event) })]
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

/// Says each reconnection the library announces (``EventMonitor/eventStreamWillReconnect(_:)``)
/// on stderr: why the last connection ended, how long the stream waits, and the `Last-Event-ID`
/// it sends.
final class ConnectionLog: Sendable {
    private let silent: Bool

    init(silent: Bool) { self.silent = silent }

    /// The stream is about to reconnect.
    func reconnecting(_ event: EventStreamReconnectEvent) {
        guard !silent else { return }
        let line = Self.reconnectionLine(
            reason: event.reason, waited: Double(event.delay.components.seconds) + Double(event.delay.components.attoseconds) / 1e18,
            lastEventID: event.lastEventID,
            reconnection: event.reconnection)
        ProgressPrinter.writeToStandardError(line + "\n")
    }

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
