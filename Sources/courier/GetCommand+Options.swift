import Foundation
import Courier

extension GetCommand {
    /// `courier get`'s command line:
    /// `<url> [-o <file>] [--retries <n>] [--sha256 <hex>] [--max-time <s>] [-H 'Name: value']...
    /// [--location-trusted] [--accept-unverified] [--quiet] [--force]`.
    ///
    /// Options may come before or after the URL; long options also take `--name=value`, and
    /// `--` ends the options.
    struct Options {
        var url: URL
        var output: String?
        var retries = 3
        var expectedSHA256: [UInt8]?
        var headers: [(name: String, value: String)] = []
        var quiet = false
        var force = false
        /// `--max-time`: the whole download's deadline, in seconds.
        var maxTime: Double?
        /// `--location-trusted`: send the `-H` headers to other origins a redirect leads to too.
        var locationTrusted = false
        /// `--accept-unverified`: save a body nothing can prove complete, with a warning.
        var acceptUnverified = false

        init(url: URL) { self.url = url }

        private static let valued: Set<String> = ["-o", "--output", "--retries", "--sha256", "-H", "--header", "--max-time"]
        private static let flags: Set<String> = [
            "-q", "--quiet", "--force", "-h", "--help", "--location-trusted", "--accept-unverified",
        ]

        /// The options in `arguments` (those after `get`); `nil` when `--help` was asked for.
        static func parse(_ arguments: [String]) throws(UsageError) -> Options? {
            var positionals: [String] = []
            var values: [(name: String, value: String)] = []
            var flagsSeen: Set<String> = []
            var index = 0
            var optionsEnded = false
            while index < arguments.count {
                let argument = arguments[index]
                index += 1
                if optionsEnded || argument == "-" || !argument.hasPrefix("-") {
                    positionals.append(argument)
                    continue
                }
                if argument == "--" {
                    optionsEnded = true
                    continue
                }
                // `--name=value` for long options.
                if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                    let name = String(argument[..<equals])
                    if flags.contains(name) { throw UsageError(message: "\(name) takes no value") }
                    guard valued.contains(name) else { throw UsageError(message: "unknown option '\(name)' for get") }
                    values.append((name, String(argument[argument.index(after: equals)...])))
                    continue
                }
                if flags.contains(argument) {
                    flagsSeen.insert(argument)
                    continue
                }
                guard valued.contains(argument) else { throw UsageError(message: "unknown option '\(argument)' for get") }
                guard index < arguments.count else { throw UsageError(message: "\(argument) needs a value") }
                values.append((argument, arguments[index]))
                index += 1
            }
            if flagsSeen.contains("-h") || flagsSeen.contains("--help") { return nil }

            guard let text = positionals.first else { throw UsageError(message: "get needs a URL") }
            guard positionals.count == 1 else {
                throw UsageError(message: "get takes one URL; unexpected '\(positionals[1])'")
            }
            var options = Options(url: try url(text))
            options.quiet = flagsSeen.contains("-q") || flagsSeen.contains("--quiet")
            options.force = flagsSeen.contains("--force")
            options.locationTrusted = flagsSeen.contains("--location-trusted")
            options.acceptUnverified = flagsSeen.contains("--accept-unverified")
            for (name, value) in values {
                switch name {
                case "-o", "--output":
                    guard options.output == nil else { throw UsageError(message: "-o is given more than once") }
                    options.output = try output(value)
                case "--retries":
                    guard let count = Int(value), count >= 0 else {
                        throw UsageError(message: "--retries takes a whole number 0 or more, not '\(value)'")
                    }
                    options.retries = count
                case "--max-time":
                    guard let seconds = Double(value), seconds.isFinite, seconds > 0, seconds <= 1e9 else {
                        throw UsageError(message: "--max-time takes a number of seconds above 0, not '\(value)'")
                    }
                    options.maxTime = seconds
                case "--sha256":
                    guard let digest = SHA256.parseHex(value) else {
                        throw UsageError(message: "--sha256 takes 64 hexadecimal digits, not '\(value)'")
                    }
                    options.expectedSHA256 = digest
                default:  // -H, --header
                    options.headers.append(try header(value))
                }
            }
            return options
        }

        /// An absolute http or https URL with a host.
        static func url(_ text: String) throws(UsageError) -> URL {
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
                let host = url.host, !host.isEmpty
            else {
                throw UsageError(message: "'\(text)' is not an http:// or https:// URL")
            }
            return url
        }

        static func output(_ path: String) throws(UsageError) -> String {
            guard !path.isEmpty else { throw UsageError(message: "-o needs a file name") }
            guard !path.hasSuffix("/") else { throw UsageError(message: "-o needs a file name, not a directory ('\(path)')") }
            return path
        }

        /// `Name: value`, with a token for a name and no line breaks or other control characters
        /// (they would let a value smuggle in more header lines). Range and If-Range are refused:
        /// resuming depends on them being Courier's own.
        static func header(_ text: String) throws(UsageError) -> (name: String, value: String) {
            let isControl = { (scalar: Unicode.Scalar) in (scalar.value < 0x20 && scalar != "\t") || scalar.value == 0x7F }
            guard !text.unicodeScalars.contains(where: isControl) else {
                throw UsageError(message: "a header must be one line without control characters: \(text.debugDescription)")
            }
            guard let colon = text.firstIndex(of: ":") else {
                throw UsageError(message: "-H takes 'Name: value', not '\(text)'")
            }
            let name = String(text[..<colon])
            let tokenSymbols = Set("!#$%&'*+-.^_`|~".unicodeScalars)
            guard !name.isEmpty,
                name.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || tokenSymbols.contains($0)) })
            else {
                throw UsageError(message: "'\(name)' is not a valid header name")
            }
            guard !["range", "if-range"].contains(name.lowercased()) else {
                throw UsageError(message: "-H \(name) is not allowed: courier sets it itself to resume downloads")
            }
            let value = text[text.index(after: colon)...].trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
            return (name, value)
        }
    }
}
