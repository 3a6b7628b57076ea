import Foundation
import Courier
import CourierSupport

/// Exit codes; each failure class has its own so scripts can tell them apart.
enum ExitCode {
    static let success: Int32 = 0
    /// Anything without a class of its own.
    static let failure: Int32 = 1
    static let usage: Int32 = 2
    /// No usable answer: connection refused or reset, DNS, TLS, timeout, `--max-time`, a response
    /// that is not valid HTTP, a request that cannot be sent.
    static let network: Int32 = 3
    /// The server answered with an error status (or a content type the request did not accept).
    static let http: Int32 = 4
    /// The file did not match `--sha256` or its announced length; nothing was saved.
    static let integrity: Int32 = 5
    /// A local file problem: the output exists (no `--force`), a directory is missing, a write failed.
    static let fileSystem: Int32 = 6
    /// 128 + SIGINT, as shells report a process killed by Ctrl-C.
    static let interrupted: Int32 = 130
    /// 128 + SIGTERM.
    static let terminated: Int32 = 143

    /// The exit code for a download that failed with `error`.
    static func forError(_ error: CourierError) -> Int32 {
        forCode(error.code)
    }

    /// The exit code for a failure with `code`: the one table, for live errors and the queue's
    /// journaled failures alike.
    static func forCode(_ code: CourierError.Code) -> Int32 {
        // DNS, refused, lost, TLS, no response and other transport failures alike.
        if code.isTransport { return network }
        switch code {
        case .timedOut, .invalidRequest, .sessionInvalidated, .invalidResponse, .deadlineExceeded, .tlsPolicyUnenforceable:
            return network
        case .unacceptableStatusCode, .unacceptableContentType, .unacceptableResponse: return http
        case .integrityFailed: return integrity
        case .fileSystem, .destinationFailed, .invalidResumeData: return fileSystem
        default: return failure
        }
    }

    /// The exit code after stopping for `signal`: 130 for SIGINT, 143 for SIGTERM.
    static func forSignal(_ signal: Int32) -> Int32 { 128 + signal }
}

/// A mistake in the command line; printed as one line with a pointer to the help that covers it.
struct UsageError: Error {
    let message: String
    /// The command whose help explains the mistake.
    var help = "courier --help"

    init(message: String, help: String = "courier --help") {
        self.message = message
        self.help = help
    }

    /// A mistake in `courier get`'s options: points at `courier get --help`.
    init(get message: String) {
        self.init(message: message, help: "courier get --help")
    }
}

/// Dispatches the subcommands.
enum CourierCommand {
    /// What `courier` alone prints, on stderr (exit 2): the commands, and where the rest is.
    static let shortUsage = """
        usage: courier get <url> [-o <file> | -o -] [options]   download a file, like wget; resumable
               courier events <url> | ws <url> [options]        Server-Sent Events as JSON lines; a WebSocket
               courier doctor [<url>] [--json]                  libcurl, CA file, proxies, traps
               courier demo | serve                             a resumed download; the test server
        Run 'courier get --help' for the download options, 'courier --help' for everything.
        """

    /// `courier --help`.
    static let usage = """
        courier \(CourierInfo.version): HTTP downloads that survive Linux, and the Courier test server.

        Usage:
          courier get <url> [options]           Download <url> to a file, like wget. Stopped by
                                                Ctrl-C, kill or a crash? Run the same command again:
                                                it continues where it stopped. Options below.
          courier events <url> [options]        Print the Server-Sent Events of <url> as JSON lines,
                                                reconnecting with Last-Event-ID like Courier's event
                                                streams (courier events --help).
          courier ws <url> [options]            Send each line of stdin as a WebSocket message and
                                                print each message received, one per line, like
                                                websocat (courier ws --help).
          courier demo                          Download a generated 64 MiB file from an embedded
                                                server that drops the connection mid-body; Courier
                                                resumes by itself and verifies the SHA-256.
          courier serve [--port <n>] [--root <dir>]
                                                Run CourierTestServer on 127.0.0.1 until interrupted
                                                (port 0, the default, picks a free port).
          courier doctor [<url>] [--json]       Report libcurl, the CA file, the proxy for <url>,
                                                the temporary directory and the known traps; exit 1
                                                if a download would break (courier doctor --help).
          courier queue status --queue <postgres://…>
                                                Show a fleet's download list (get -i … --queue):
                                                its items by state, the leased ones by worker.
          courier --help                        Show this help (courier get --help, courier events
                                                --help: one command's alone).
          courier --version                     Show the version.

        """ + "\n" + GetCommand.help + "\n\n" + EventsCommand.help + "\n\n" + WebSocketCommand.help

    static let commands = ["get", "events", "ws", "demo", "serve", "doctor", "queue", "help", "--help", "--version"]

    static func run(_ arguments: [String]) throws -> Int32 {
        guard let command = arguments.first else {
            ProgressPrinter.writeToStandardError(shortUsage + "\n")
            return ExitCode.usage
        }
        let rest = Array(arguments.dropFirst())
        switch command {
        case "--help", "-h", "help":
            let helps = [
                "get": GetCommand.help, "events": EventsCommand.help, "ws": WebSocketCommand.help, "doctor": DoctorCommand.help,
                "queue": QueueStatusCommand.help,
            ]
            print(rest.first.flatMap { helps[$0] } ?? usage)
            return ExitCode.success
        case "--version":
            print("courier \(CourierInfo.version)")
            return ExitCode.success
        case "get":
            // The download runs in a supervised child process that a FoundationNetworking trap
            // cannot take the command down with (GetSupervisor.swift, Docs/Platform.md).
            let isChild = GetSupervisor.enterChildMode()
            switch try GetCommand.Invocation.parse(rest) {
            case .help:
                print(GetCommand.help)
                return ExitCode.success
            case .single(var options):
                OutputRedaction.use(options.redaction)
                guard isChild else { return GetSupervisor(arguments: arguments, options: options).run() }
                options.maxTime = GetSupervisor.childMaxTime(options.maxTime)
                return GetCommand(options).run()
            case .queue(let options):
                OutputRedaction.use(options.shared.redaction)
                // The whole queue runs in one supervised child; a trap restarts it, and the
                // journal makes the restart continue (QueueCommand.swift).
                guard isChild else { return GetSupervisor(arguments: arguments, options: options.shared, queue: options).run() }
                return QueueCommand(options).run()
            }
        // In this process, unsupervised (EventsCommand.swift and WebSocketCommand.swift say why).
        case "events": return runHere(try EventsCommand.Options.parse(rest), help: EventsCommand.help) { EventsCommand($0).run() }
        case "ws": return runHere(try WebSocketCommand.Options.parse(rest), help: WebSocketCommand.help) { WebSocketCommand($0).run() }
        case "doctor": return runHere(try DoctorCommand.parse(rest), help: DoctorCommand.help) { DoctorCommand($0).run() }
        case "queue":
            guard let connection = try QueueStatusCommand.parse(rest) else {
                print(QueueStatusCommand.help)
                return ExitCode.success
            }
            return QueueStatusCommand.run(connection: connection)
        case "serve":
            // `courier --help` has serve's options: it has no help of its own.
            return try ServeCommand(try ArgumentScanner(command: "serve", .serve, help: "courier --help").scan(rest)).run()
        case "demo":
            if let extra = rest.first { throw UsageError(message: "demo takes no arguments, not '\(extra)'") }
            return try DemoCommand().run()
        default:
            throw unknownCommand(command)
        }
    }

    /// A command run in this process: `nil` options (`--help`) print `help`; otherwise their
    /// redaction is made the process's before `run` runs.
    private static func runHere<Options: CommonOptions>(_ options: Options?, help: String, _ run: (Options) -> Int32) -> Int32 {
        guard let options else {
            print(help)
            return ExitCode.success
        }
        OutputRedaction.use(options.redaction)
        return run(options)
    }

    /// `await work()` from this synchronous command (a queue's `stop()`, a WebSocket's `send`).
    static func blocking<Result: Sendable>(_ work: sending @escaping () async -> Result) -> Result {
        let result = Locked<Result?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            result.set(await work())
            done.signal()
        }
        done.wait()
        return result.current!  // set before `done` is signalled
    }

    /// Says `line` on stderr as one line after `courier: ` and returns `status`.
    static func fail(_ line: String, _ status: Int32) -> Int32 {
        ProgressPrinter.writeToStandardError("courier: \(GetCommand.oneLine(line))\n")
        return status
    }

    /// Says a usage mistake (its line, then where the help is) and returns exit 2.
    static func usage(_ error: UsageError) -> Int32 {
        // Through the redaction too: a usage error may quote a URL argument, credentials and all.
        ProgressPrinter.writeToStandardError("courier: \(error.message)\nRun '\(error.help)' for usage.\n")
        return ExitCode.usage
    }

    static func unknownCommand(_ command: String) -> UsageError {
        if let scheme = command.split(separator: ":").first?.lowercased(), scheme == "ws" || scheme == "wss",
            command.contains("://")
        {
            return UsageError(message: "'\(command)' is not a command; did you mean 'courier ws \(command)'?")
        }
        if command.contains("://") {
            return UsageError(message: "'\(command)' is not a command; did you mean 'courier get \(command)'?")
        }
        if GetCommand.Options.valued.union(GetCommand.Options.flags).contains(command) {
            return UsageError(message: "\(command) is an option of get: courier get <url> \(command) …")
        }
        if EventsCommand.Options.valued.union(EventsCommand.Options.flags).contains(command) {
            return UsageError(message: "\(command) is an option of events: courier events <url> \(command) …")
        }
        var message = "unknown command '\(command)'"
        if let closest = Suggestion.closest(to: command, among: commands) { message += "; did you mean '\(closest)'?" }
        return UsageError(message: message)
    }
}
