import Foundation
import Courier

extension EventsCommand {
    /// `courier events`'s command line: `<url> [options]`, in `get`'s grammar and with its header
    /// rules. Each field is the option of its name (OptionTable.swift).
    struct Options: CommonOptions {
        var url: URL
        var headers: [(name: String, value: String)] = []
        var lastEventID: String?
        var maxReconnects = ReconnectPolicy.default.maximumAttempts
        var retryDelay = Options.seconds(ReconnectPolicy.default.delay)
        var idleTimeout: Double?
        var maxEvents: Int?  // -n
        var silent = false
        var locationTrusted = false
        var redaction = Redaction.default
        var tls = TLSOptions()

        init(url: URL) { self.url = url }

        private static func seconds(_ duration: Duration) -> Double {
            Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        }

        static let help = "courier events --help"
        static let valued = OptionTable.valued(for: .events)
        static let flags = OptionTable.flags(for: .events)

        /// What the event stream sets itself on every connection; `-H` must not pretend to.
        static let reservedHeaders = [
            "last-event-id": "use --last-event-id (courier sends the last id it saw on every reconnection itself)",
            "accept": "courier events always asks for text/event-stream",
            "cache-control": "courier events sends Cache-Control: no-cache itself, as the standard says",
        ]

        /// The options in `arguments` (those after `events`); `nil` when `--help` was asked for.
        static func parse(_ arguments: [String]) throws(UsageError) -> Options? {
            let scanned = try ArgumentScanner(command: "events", .events).scan(arguments)
            if scanned.wantsHelp { return nil }
            var options = Options(url: try GetCommand.Options.url(try scanned.url(for: "events"), help: help))
            try options.read(scanned, .events, help: help, flags: ["--silent": \.silent, "--location-trusted": \.locationTrusted]) {
                options, option throws(UsageError) in
                let (name, value) = (option.name, option.value)
                switch option.key {
                case "--header":
                    options.headers.append(try GetCommand.Options.header(value, reserved: reservedHeaders, help: help))
                case "--last-event-id":
                    // Sent as a header: one line, no control characters (and an id with NULL is
                    // one the standard says to ignore).
                    guard !value.isEmpty, !value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                        throw UsageError(
                            message: "--last-event-id takes an event id without control characters, not \(value.debugDescription)",
                            help: help)
                    }
                    options.lastEventID = value
                case "--max-reconnects": options.maxReconnects = try UsageError.count(name, value, minimum: 0, help: help)
                case "--max-events": options.maxEvents = try UsageError.count(name, value, minimum: 1, help: help)
                case "--retry-delay":
                    options.retryDelay = try UsageError.seconds(name, value, zero: true, maximum: 86_400, help: help)
                default: options.idleTimeout = try UsageError.seconds(name, value, help: help)  // --idle-timeout
                }
            }
            options.tls = try options.tls.validated(help: help)
            return options
        }
    }

    /// `courier events --help`.
    static let help = """
        courier events <url> [options]

        Prints the Server-Sent Events of <url> as they arrive, one JSON line per event on stdout:
          {"id":"7","event":"message","data":"first line\\nsecond line"}
        (id: the stream's last event ID, null when there is none yet; data: the event's data lines
        joined with \\n). Each line is written whole as soon as its event is in, so it works in a
        pipe: courier events URL | jq -r .data

        When the connection drops, ends or goes silent, it reconnects as Courier's event streams
        do: after the server's retry: time (else --retry-delay), with Last-Event-ID set to the last
        id seen, doubling the wait after each failed attempt (at most 60 s). It never waits less
        than 0.5 s and reconnects at most 60 times a minute, whatever the connections delivered,
        so a server that sends retry: 0 and closes after every event cannot make it spin. Each
        reconnection is one line on stderr: why, how long it waited, the Last-Event-ID sent. A 204
        No Content from the server ends the stream (exit 0).

        Options:
        \(OptionTable.help(for: [.events], in: .events))
        \(OptionTable.help(for: [.events], in: .tls))

        Exit codes: 0 the server ended the stream with 204, or -n events were printed (also a
        response that ended with --max-reconnects 0), 2 usage error, 3 network error after the
        reconnections are exhausted (connection, timeout), 4 HTTP error status or a type other than
        text/event-stream, 6 stdout cannot be written, 130 interrupted by SIGINT (Ctrl-C), 143
        stopped by SIGTERM (what is on stdout is whole lines).
        """
}
