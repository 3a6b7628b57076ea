import Foundation
import Courier

/// Exit codes; each failure class has its own so scripts can tell them apart.
enum ExitCode {
    static let success: Int32 = 0
    static let failure: Int32 = 1
    static let usage: Int32 = 2
    static let interrupted: Int32 = 130
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
          courier demo                          Download a generated 64 MiB file from an embedded
                                                server that drops the connection mid-body; Courier
                                                resumes by itself and verifies the SHA-256.
          courier serve [--port <n>] [--root <dir>]
                                                Run CourierTestServer on 127.0.0.1 until interrupted
                                                (port 0, the default, picks a free port).
          courier --help                        Show this help.
          courier --version                     Show the version.

        Exit codes: 0 success, 1 failure, 2 usage error, 130 interrupted.
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
