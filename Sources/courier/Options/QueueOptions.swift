import Foundation
import Courier

extension GetCommand {
    /// What `courier get` was asked to do.
    enum Invocation {
        /// `--help`.
        case help
        /// One URL (``GetCommand``).
        case single(Options)
        /// `-i FILE`: the URLs listed in a file, through a durable queue (``QueueCommand``).
        case queue(QueueOptions)

        /// `get`'s arguments (those after `get`).
        static func parse(_ arguments: [String]) throws(UsageError) -> Invocation {
            let scanned = try Options.scan(arguments)
            if scanned.flags.contains("-h") || scanned.flags.contains("--help") { return .help }
            guard scanned.values.contains(where: { $0.name == "-i" || $0.name == "--input-file" }) else {
                return .single(try Options.parseSingle(scanned))
            }
            return .queue(try QueueOptions.parse(scanned))
        }
    }

    /// `courier get -i FILE [options]`: the options of the whole queue, and those every item
    /// shares (``shared``).
    struct QueueOptions {
        /// The options only `-i` takes.
        static let valued = OptionTable.valued(for: .queue)

        // The options of their names (OptionTable.swift).
        var input: String  // -i: a path, or - for stdin
        var state: String?
        var directory: String?  // -P
        var store: String?  // --queue: never printed (it may hold a password)
        var parallel = 4
        var perHost = 2
        /// The options every item runs with; its `url` is ``placeholderURL``, never fetched.
        var shared: Options

        /// The name of the default state directory, beside the outputs.
        static let defaultStateName = ".courier-queue"
        /// Stands in for `shared.url`, which a queue does not have (RFC 2606 reserves `.invalid`).
        static let placeholderURL = URL(string: "http://input-file.invalid/")!

        static func parse(_ scanned: ArgumentScanner.Scanned) throws(UsageError) -> QueueOptions {
            if let url = scanned.positionals.first {
                throw UsageError(get: "-i reads the URLs from its file; give no URL on the command line ('\(url)')")
            }
            for (name, value) in scanned.values where name == "-o" || name == "--output" {
                let what = value == "-" ? "-o - (stdout) cannot take several files" : "-o names one file"
                throw UsageError(get: "\(what); with -i, name a file with out=<name> after its URL, and the directory with -P")
            }
            if scanned.flags.contains("--whole") { throw UsageError(get: "--whole is for -o -, which -i does not take") }
            if let conditional = scanned.values.first(where: {
                ["-z", "--time-cond", "--etag-compare", "--etag-save", "--cache"].contains($0.name)
            }) {
                // curl's rule for its ETag options: one URL only (a file per URL would be needed).
                throw UsageError(get: "\(conditional.name) is for one URL; -i does not take it")
            }
            if scanned.values.contains(where: { $0.name == "--sha256" }) {
                throw UsageError(get: "--sha256 is for one URL; with -i, put sha256=<hex> after each URL in the file")
            }
            var shared = Options(url: placeholderURL)
            try shared.apply(scanned)
            var options = QueueOptions(input: "", shared: shared)
            var inputs: [String] = []
            for (name, value) in scanned.values where valued.contains(name) {
                switch OptionTable.key(name, for: .queue) {
                case "--input-file":
                    guard !value.isEmpty else { throw UsageError(get: "-i needs a file name (or - for stdin)") }
                    inputs.append(value)
                case "--state":
                    guard !value.isEmpty else { throw UsageError(get: "--state needs a directory") }
                    options.state = value
                case "--queue":
                    // Never quoted back: the value may hold a password.
                    guard !value.isEmpty else { throw UsageError(get: "--queue needs a PostgreSQL connection string (postgres://…)") }
                    options.store = value
                case "--directory-prefix":
                    guard !value.isEmpty else { throw UsageError(get: "\(name) needs a directory") }
                    options.directory = value
                default:  // --parallel, --per-host
                    guard let count = Int(value), count >= 1, count <= 1000 else {
                        throw UsageError(get: "\(name) takes a whole number from 1 to 1000, not '\(value)'")
                    }
                    if name == "--parallel" { options.parallel = count } else { options.perHost = count }
                }
            }
            guard inputs.count == 1 else { throw UsageError(get: "-i is given more than once") }
            options.input = inputs[0]
            return options
        }

        /// The directory files are saved in, absolute.
        func outputDirectory(in cwd: URL) -> URL {
            GetCommand.outputURL(directory ?? ".", in: cwd)
        }

        /// The queue's directory, absolute.
        func stateDirectory(in cwd: URL) -> URL {
            state.map { GetCommand.outputURL($0, in: cwd) }
                ?? outputDirectory(in: cwd).appendingPathComponent(Self.defaultStateName, isDirectory: true)
        }
    }
}
