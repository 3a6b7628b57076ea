import Foundation
import Courier
import CourierSupport

extension WebSocketCommand {
    /// `courier ws`'s command line: `<url> [options]`, in `get`'s grammar and with its header rules.
    /// Each field is the option of its name (OptionTable.swift).
    struct Options: CommonOptions {
        var url: URL
        var headers: [(name: String, value: String)] = []
        var protocols: [String] = []
        var binary = false
        var hex = false
        var count: Int?  // -n
        var ping: Double?
        var maximumMessageSize = 1 << 20  // --max-message
        var redaction = Redaction.default
        var tls = TLSOptions()

        init(url: URL) { self.url = url }

        static let help = "courier ws --help"

        /// What the handshake sets itself; `-H` must not pretend to (the library would drop them).
        static let reservedHeaders = [
            "sec-websocket-protocol": "use --protocol",
            "sec-websocket-key": "the handshake makes a fresh key itself",
            "sec-websocket-version": "the handshake sends version 13 itself",
            "sec-websocket-extensions": "courier ws offers no extension",
            "upgrade": "the handshake sets it itself", "connection": "the handshake sets it itself",
        ]

        /// The options in `arguments` (those after `ws`); `nil` when `--help` was asked for.
        static func parse(_ arguments: [String]) throws(UsageError) -> Options? {
            let scanned = try ArgumentScanner(command: "ws", .ws).scan(arguments)
            if scanned.wantsHelp { return nil }
            var options = Options(url: try url(try scanned.url(for: "ws")))
            try options.read(scanned, .ws, help: help, flags: ["--binary": \.binary, "--hex": \.hex]) {
                options, option throws(UsageError) in
                let (name, value) = (option.name, option.value)
                switch option.key {
                case "--header":
                    options.headers.append(try GetCommand.Options.header(value, reserved: reservedHeaders, help: help))
                case "--protocol":
                    // A token (RFC 6455 §4.1), offered once: the library refuses the rest as
                    // invalidRequest, which would be a network-looking failure for a typo.
                    guard HTTPToken.isToken(value) else {
                        throw UsageError(message: "--protocol takes a subprotocol name (a token), not '\(value)'", help: help)
                    }
                    guard !options.protocols.contains(value) else {
                        throw UsageError(message: "--protocol \(value) is given twice", help: help)
                    }
                    options.protocols.append(value)
                case "--count": options.count = try UsageError.count(name, value, minimum: 1, help: help)
                case "--ping": options.ping = try UsageError.seconds(name, value, maximum: 86_400, help: help)
                default: options.maximumMessageSize = try UsageError.count(name, value, minimum: 1, help: help)  // --max-message
                }
            }
            options.tls = try options.tls.validated(help: help)
            return options
        }

        /// An absolute `ws`, `wss`, `http` or `https` URL with a host (the schemes the library
        /// takes, as `URLSession` does).
        static func url(_ text: String) throws(UsageError) -> URL {
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(),
                ["ws", "wss", "http", "https"].contains(scheme), let host = url.host, !host.isEmpty
            else {
                throw UsageError(message: "'\(text)' is not a ws:// or wss:// URL", help: help)
            }
            return url
        }
    }

    /// `courier ws --help`.
    static let help = """
        courier ws <url> [options]

        A WebSocket client in websocat's habits: each line of stdin is sent as a text message
        (without its newline), and each message received is printed on stdout followed by a
        newline, written as soon as it arrives, so it works in a pipe:
          echo hello | courier ws wss://echo.example/ws
        A binary message is printed as its bytes (--hex: as hex). End of stdin closes the
        WebSocket with 1000 and waits for the server's Close frame; the server may close first.

        Options:
        \(OptionTable.help(for: [.ws], in: .ws))
        \(OptionTable.help(for: [.ws], in: .tls))

        Exit codes: 0 closed with 1000, 1001 or no code (1005), or -n messages received; 1 a line
        of stdin that is not UTF-8 (use --binary) or is longer than --max-message, a message over
        --max-message, a redirect (never followed); 2 usage error; 3 network error (connection,
        TLS, timeout, a dead peer with --ping, a server that breaks the protocol); 4 the handshake
        was answered with another status than 101, or the server closed with another code (said
        on stderr); 6 stdout cannot be written; 130 SIGINT (Ctrl-C), 143 SIGTERM (both close
        with 1001 first).
        """
}
