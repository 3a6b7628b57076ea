import Foundation
import Courier
import CourierSupport

extension GetCommand {
    /// `courier get`'s command line: `<url> [options]`, in ``ArgumentScanner``'s grammar. Each field
    /// is the option of its name; what it means is its line in OptionTable.swift.
    struct Options: CommonOptions {
        var url: URL
        var output: String?  // -o: a file name, or - for stdout
        var retries = 3
        var expectedSHA256: [UInt8]?  // --sha256
        var headers: [(name: String, value: String)] = []
        var quiet = false
        var force = false
        var maxTime: Double?  // seconds, as timeout and waitForNetwork
        var timeout: Double?
        var waitForNetwork: Double?
        var locationTrusted = false
        var acceptUnverified = false
        var whole = false
        var verbose = false
        var redaction = Redaction.default  // plus --redact-header and --redact-param
        var tls = TLSOptions()
        var split = DownloadSplit.off
        var timeCondition: String?  // -z
        var etagCompare: String?
        var etagSave: String?
        var cacheDirectory: String?  // --cache

        init(url: URL) { self.url = url }

        /// `-o -`: the body goes to stdout (as it arrives, or with `--whole` once complete and verified).
        var writesToStandardOutput: Bool { output == "-" }
        /// `-o -` without `--whole` or `--cache`: each byte goes to stdout as it arrives
        /// (GetCommand+Streaming.swift). A cached body is a file download's, copied once complete.
        var streamsToStandardOutput: Bool { writesToStandardOutput && !whole && cacheDirectory == nil }

        static let valued = OptionTable.valued(for: [.get, .queue])
        static let flags = OptionTable.flags(for: [.get, .queue])
        /// The long names, for "did you mean": the TLS options last, so that a tie (`--retry` is as
        /// far from `--cert` as from `--retries`) goes to the command's own option.
        static var longNames: [String] { TLSOptions.afterOwn(valued.union(flags)) }

        /// The options in `arguments` (those after `get`) for one URL; `nil` when `--help` was
        /// asked for. With `-i`, ``GetCommand/Invocation/parse(_:)`` is the entry point.
        static func parse(_ arguments: [String]) throws(UsageError) -> Options? {
            switch try Invocation.parse(arguments) {
            case .help: return nil
            case .single(let options): return options
            case .queue: throw UsageError(get: "-i reads its URLs from a file; this parser is for one URL")
            }
        }

        /// `get`'s arguments scanned (the grammar of ``ArgumentScanner``).
        static func scan(_ arguments: [String]) throws(UsageError) -> ArgumentScanner.Scanned {
            let scanner = ArgumentScanner(valued: valued, flags: flags, help: "courier get --help", unknown: unknown) {
                flag, next throws(UsageError) in
                if flag == "-O" || flag == "--remote-name", let next { try checkNoFileName(after: flag, next) }
            }
            return try scanner.scan(arguments)
        }

        /// The options of a single download (no `-i`), from scanned arguments.
        static func parseSingle(_ scanned: ArgumentScanner.Scanned) throws(UsageError) -> Options {
            if let queueOnly = scanned.values.first(where: { QueueOptions.valued.contains($0.name) }) {
                throw UsageError(get: "\(queueOnly.name) is for -i (downloading the URLs listed in a file)")
            }
            var options = Options(url: try url(try scanned.url(for: "get", missing: "get needs a URL (or -i FILE)")))
            try options.apply(scanned)
            if options.whole, !options.writesToStandardOutput {
                throw UsageError(get: "--whole is for -o - (a file is always written whole: it appears only once complete)")
            }
            if options.split.isSplit, options.streamsToStandardOutput { throw UsageError(get: Self.splitToStandardOutput) }
            if options.cacheDirectory != nil, options.split.isSplit {
                throw UsageError(get: "--cache and --split do not go together: the cache keeps whole bodies fetched over one connection")
            }
            if options.output != nil, !scanned.flags.isDisjoint(with: ["-O", "--remote-name"]) {
                throw UsageError(get: "-O (save under the remote name) and -o (save as) contradict each other; give one")
            }
            return options
        }

        /// Sets the options `scanned` holds that a single download and `-i` share (the queue's
        /// own are skipped here: ``QueueOptions`` reads them). Given more than once, the last
        /// counts, as in curl (but `-o`).
        mutating func apply(_ scanned: ArgumentScanner.Scanned) throws(UsageError) {
            let help = "courier get --help"
            let fields: [String: WritableKeyPath<Options, Bool>] = [
                "--quiet": \.quiet, "--force": \.force, "--location-trusted": \.locationTrusted,
                "--accept-unverified": \.acceptUnverified, "--whole": \.whole, "--verbose": \.verbose,
            ]
            try read(scanned, [.get, .queue], help: help, flags: fields, skipping: QueueOptions.valued) {
                options, option throws(UsageError) in
                let (name, value) = (option.name, option.value)
                switch option.key {
                case "--output":
                    guard options.output == nil else { throw UsageError(get: "-o is given more than once") }
                    options.output = try Self.output(value)
                case "--retries": options.retries = try UsageError.count(name, value, minimum: 0, help: help)
                case "--max-time": options.maxTime = try UsageError.seconds(name, value, help: help)
                case "--timeout": options.timeout = try UsageError.seconds(name, value, help: help)
                case "--wait-for-network": options.waitForNetwork = try UsageError.seconds(name, value, help: help)
                case "--split": options.split = try Self.split(value)
                case "--time-cond":
                    guard !value.isEmpty, value != "-", value != "+" else {
                        throw UsageError(get: "\(name) takes a date or a file name (- first for If-Unmodified-Since)")
                    }
                    options.timeCondition = value
                case "--etag-compare", "--etag-save":
                    guard !value.isEmpty else { throw UsageError(get: "\(name) takes a file name") }
                    if value == "-" {
                        throw UsageError(get: "\(name) takes a file name, not - (stdout carries the saved file's path or the body)")
                    }
                    if name == "--etag-save" { options.etagSave = value } else { options.etagCompare = value }
                case "--cache":
                    guard !value.isEmpty else { throw UsageError(get: "--cache takes a directory") }
                    options.cacheDirectory = value
                case "--sha256":
                    guard let digest = DownloadPolicy.sha256(hex: value) else {
                        throw UsageError(get: "--sha256 takes 64 hexadecimal digits, not '\(value)'")
                    }
                    options.expectedSHA256 = digest
                case "--continue-at":
                    // curl's `-C -`: continue where the file stopped, which courier always does.
                    guard value == "-" else {
                        throw UsageError(
                            get: "\(name) takes only '-' (continue where the download stopped, which courier always does: "
                                + "it finds the offset in its own partial file and resume record), not '\(value)'")
                    }
                default: options.headers.append(try Self.header(value, reserved: Self.reservedHeaders))  // --header
                }
            }
            tls = try tls.validated(help: help)
        }

        /// wget's `-O <file>` is curl's `-o <file>`; courier's `-O` is curl's and takes no value.
        /// A file name after it would otherwise read as a second URL.
        private static func checkNoFileName(after flag: String, _ next: String) throws(UsageError) {
            guard next == "-" || !next.hasPrefix("-"), (try? url(next)) == nil else { return }
            let instead = next == "-" ? "to write to stdout, use -o -" : "to name the file, use -o \(next)"
            throw UsageError(
                get: "\(flag) takes no file name: it saves under the remote name, as curl's -O does (the default); \(instead)")
        }

        /// The error for an option `get` does not know, with the closest one it does.
        static func unknown(_ name: String) -> UsageError {
            if name == "--connect-timeout" {
                return UsageError(
                    get: "--connect-timeout is not available: FoundationNetworking on Linux sets no connect timeout and "
                        + "gives no way to set one; connecting counts as silence, so --timeout bounds it (default 60 s), "
                        + "and --max-time bounds the whole download")
            }
            return UsageError(unknown: name, for: "get", among: longNames, help: "courier get --help")
        }

        /// An absolute http or https URL with a host; a mistake points at `help`.
        static func url(_ text: String, help: String = "courier get --help") throws(UsageError) -> URL {
            // The rule of a list's lines (`-i`), so a URL is taken alike on the command line and in a list.
            guard let url = DownloadList.url(text) else {
                throw UsageError(message: "'\(text)' is not an http:// or https:// URL", help: help)
            }
            return url
        }

        /// A file name, or `-` for stdout.
        static func output(_ path: String) throws(UsageError) -> String {
            guard !path.isEmpty else { throw UsageError(get: "-o needs a file name (or - for stdout)") }
            guard !path.hasSuffix("/") else { throw UsageError(get: "-o needs a file name, not a directory ('\(path)')") }
            return path
        }

        /// The headers courier sets itself to resume downloads, which `-H` must not replace.
        static let reservedHeaders = [
            "range": "courier sets it itself to resume downloads", "if-range": "courier sets it itself to resume downloads",
        ]

        /// `Name: value`, with a token for a name and no line breaks or other control characters
        /// (they would let a value smuggle in more header lines). The names in `reserved` (lower
        /// case, with why) are refused: the command sets them itself. Mistakes point at `help`.
        static func header(
            _ text: String, reserved: [String: String] = reservedHeaders, help: String = "courier get --help"
        ) throws(UsageError) -> (name: String, value: String) {
            let isControl = { (scalar: Unicode.Scalar) in (scalar.value < 0x20 && scalar != "\t") || scalar.value == 0x7F }
            guard !text.unicodeScalars.contains(where: isControl) else {
                throw UsageError(message: "a header must be one line without control characters: \(text.debugDescription)", help: help)
            }
            guard let colon = text.firstIndex(of: ":") else {
                throw UsageError(message: "-H takes 'Name: value', not '\(text)'", help: help)
            }
            let name = String(text[..<colon])
            guard HTTPToken.isToken(name) else {
                throw UsageError(message: "'\(name)' is not a valid header name", help: help)
            }
            if let why = reserved[name.lowercased()] {
                throw UsageError(message: "-H \(name) is not allowed: \(why)", help: help)
            }
            let value = text[text.index(after: colon)...].trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
            return (name, value)
        }
    }
}

extension Duration {
    /// `seconds` (an option's value) as a duration, rounded up to the millisecond.
    static func seconds(roundingUp seconds: Double) -> Duration {
        .milliseconds(Int64((seconds * 1000).rounded(.up)))
    }
}
