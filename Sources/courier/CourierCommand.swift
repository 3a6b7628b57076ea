import Foundation
import Courier

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
        switch error.code {
        case .network, .timedOut, .invalidRequest, .sessionInvalidated, .invalidResponse, .deadlineExceeded: return network
        case .unacceptableStatusCode, .unacceptableContentType: return http
        case .integrityFailed: return integrity
        case .fileSystem, .destinationFailed, .invalidResumeData: return fileSystem
        default: return failure
        }
    }

    /// The exit code after stopping for `signal`: 130 for SIGINT, 143 for SIGTERM.
    static func forSignal(_ signal: Int32) -> Int32 { 128 + signal }
}

/// A mistake in the command line; printed as one line with a pointer to `--help`.
struct UsageError: Error {
    let message: String
}

/// Dispatches the subcommands.
enum CourierCommand {
    static let usage = """
        courier \(Courier.version): HTTP downloads that survive Linux, and the Courier test server.

        Usage:
          courier get <url> [-o <file>] [--retries <n>] [--sha256 <hex>] [--max-time <s>]
                      [-H 'Name: value']... [--location-trusted] [--accept-unverified]
                      [--quiet] [--force]
                                                Download <url> to a file. Stopped by Ctrl-C, kill or a
                                                crash? Run the same command again: it continues where
                                                it stopped (if the server sends an ETag or Last-Modified).
                                                Progress goes to stderr; on success stdout gets only the
                                                saved file's absolute path.
            -o, --output <file>                 Save as <file> (relative to the current directory).
                                                Default: the Content-Disposition name, else the URL's
                                                last path segment, made safe, in the current directory.
            --retries <n>                       Continue by itself after up to <n> transient failures
                                                (connection lost, timeout, 408/429/5xx; default 3).
            --sha256 <hex>                      The file's expected SHA-256 (64 hex digits); on a
                                                mismatch nothing is saved.
            --max-time <s>                      Give up after <s> seconds in all (exit 3), keeping the
                                                bytes for the next run. Servers that trickle a byte at
                                                a time are never "silent", so no timeout ends them.
            -H, --header 'Name: value'          Add a request header (repeatable). Never written to
                                                disk, and not sent to another origin a redirect leads
                                                to, unless --location-trusted.
            --location-trusted                  Send the -H headers across redirects to other hosts.
            --accept-unverified                 Save a body nothing can prove complete (the server
                                                gzips although asked not to, or gives no length),
                                                with a warning; by default it is refused (exit 5).
            --force                             Replace an existing file (default: never overwrite).
            -q, --quiet                         No progress or summary on stderr; only errors.
          courier demo                          Download a generated 64 MiB file from an embedded
                                                server that drops the connection mid-body; Courier
                                                resumes by itself and verifies the SHA-256.
          courier serve [--port <n>] [--root <dir>]
                                                Run CourierTestServer on 127.0.0.1 until interrupted
                                                (port 0, the default, picks a free port).
          courier --help                        Show this help.
          courier --version                     Show the version.

        Exit codes: 0 success, 1 other failure, 2 usage error, 3 network error (connection,
        timeout, --max-time, invalid response), 4 HTTP error status, 5 integrity check failed (--sha256, length), 6 file error
        (output exists, cannot write), 130 interrupted by SIGINT (Ctrl-C), 143 stopped by SIGTERM
        (both keep the partial download for the next run).
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        guard let command = arguments.first else {
            print(usage)
            return ExitCode.success
        }
        let rest = Array(arguments.dropFirst())
        switch command {
        case "--help", "-h", "help":
            print(usage)
            return ExitCode.success
        case "--version":
            print("courier \(Courier.version)")
            return ExitCode.success
        case "get":
            // The download runs in a supervised child process that a FoundationNetworking trap
            // cannot take the command down with (GetSupervisor.swift, Docs/Platform.md).
            let isChild = GetSupervisor.enterChildMode()
            guard var options = try GetCommand.Options.parse(rest) else {
                print(usage)
                return ExitCode.success
            }
            guard isChild else { return GetSupervisor(arguments: arguments, options: options).run() }
            options.maxTime = GetSupervisor.childMaxTime(options.maxTime)
            return GetCommand(options).run()
        case "serve":
            return try ServeCommand(try OptionParser(rest, valued: ["--port", "--root"])).run()
        case "demo":
            return try DemoCommand(try OptionParser(rest, valued: [])).run()
        default:
            throw UsageError(message: "unknown command '\(command)'")
        }
    }
}

/// A small parser for `--name value` options; no positional arguments.
struct OptionParser {
    private var values: [String: String] = [:]

    init(_ arguments: [String], valued: Set<String>) throws {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            guard valued.contains(argument) else { throw UsageError(message: "unknown option '\(argument)'") }
            guard index + 1 < arguments.count else { throw UsageError(message: "\(argument) needs a value") }
            values[argument] = arguments[index + 1]
            index += 2
        }
    }

    func string(_ name: String) -> String? { values[name] }

    func port(_ name: String) throws -> UInt16 {
        guard let text = values[name] else { return 0 }
        guard let port = UInt16(text) else { throw UsageError(message: "\(name) takes a port number 0-65535, not '\(text)'") }
        return port
    }
}
