import Foundation

/// `courier-bench autobahn`'s command line, parsed without side effects.
///
/// ```
/// courier-bench autobahn --url ws://…|wss://… [--ca FILE] [--cases LIST] [--agent NAME]
///                        [--max-message-size B] [--case-timeout S] [--deflate | --no-deflate]
/// ```
struct AutobahnOptions: Equatable, Sendable {
    /// The fuzzing server's base URL (`ws://127.0.0.1:9001`); its path is ignored.
    var url: URL
    /// A PEM file of CA certificates the wss connections trust (and nothing else); `nil`: the system's.
    var caFile: String?
    /// The case numbers to run (1-based, as the server counts them); `nil`: every case it offers.
    var cases: [ClosedRange<Int>]?
    /// The agent name the server files the results under.
    var agent = "courier"
    /// `WebSocketTask.maximumMessageSize` (group 9 sends messages of up to 16 MiB).
    var maximumMessageSize = 64 << 20
    /// The longest one case may take before its connection is cancelled, in seconds.
    var caseTimeout: Double = 120
    /// Offers `permessage-deflate` (`WebSocketOptions.compression`, on by default as in the
    /// library; `--no-deflate` turns it off).
    var deflate = true

    static let usage = """
          courier-bench autobahn --url ws://HOST:PORT|wss://HOST:PORT [--ca FILE] [--cases LIST] [--agent NAME]
                                 [--max-message-size B] [--case-timeout S] [--deflate | --no-deflate]

          autobahn   Courier's WebSocketTask as an Autobahn|Testsuite client (Docs/bench/autobahn.sh runs
                     the fuzzing server): asks URL/getCaseCount, runs each case as an echo client
                     (URL/runCase?case=N&agent=NAME: every message sent back until the server closes),
                     then URL/updateReports?agent=NAME. The manager's defaults, but maximumMessageSize
                     --max-message-size (default 64M: group 9 sends 16 MiB). --ca FILE: wss connections
                     trust only FILE's CAs (TLSPolicy.only). --cases takes case numbers and ranges
                     (1,3,10-20; default: all). --agent defaults to courier. A case that outlasts
                     --case-timeout (default 120 s) is cancelled. permessage-deflate is offered
                     (WebSocketOptions.compression, as the library does by default); --no-deflate
                     offers none (--deflate, the default, is accepted). Prints one line per case that ended
                     with an error on stderr, a summary on stdout; exits 1 when the server could not be
                     reached or the report not updated.
        """

    private static let accepted: Set<String> = [
        "--url", "--ca", "--cases", "--agent", "--max-message-size", "--case-timeout", "--deflate", "--no-deflate",
    ]

    /// The options after the word `autobahn`; `nil` when help was asked for.
    static func parse(_ arguments: [String]) throws(BenchUsageError) -> AutobahnOptions? {
        guard let values = try scanOptions(arguments[...], accepted: accepted, flags: ["--deflate", "--no-deflate"], command: "autobahn")
        else {
            return nil
        }
        guard let text = values["--url"] else { throw BenchUsageError(message: "autobahn needs --url ws://HOST:PORT") }
        guard let url = URL(string: text), url.scheme == "ws" || url.scheme == "wss", url.host?.isEmpty == false,
            url.query == nil
        else {
            throw BenchUsageError(message: "--url takes a ws:// or wss:// URL without a query, not '\(text)'")
        }
        var options = AutobahnOptions(url: url)
        options.caFile = values["--ca"]
        if values["--deflate"] != nil, values["--no-deflate"] != nil {
            throw BenchUsageError(message: "--deflate and --no-deflate cannot both be given")
        }
        options.deflate = values["--no-deflate"] == nil
        if let text = values["--cases"] { options.cases = try cases(text) }
        if let agent = values["--agent"] {
            guard !agent.isEmpty, agent.allSatisfy({ $0.isLetter || $0.isNumber || "-_.".contains($0) }) else {
                throw BenchUsageError(message: "--agent takes letters, digits, '-', '_' and '.', not '\(agent)'")
            }
            options.agent = agent
        }
        if let text = values["--max-message-size"] {
            options.maximumMessageSize = try SegmentedOptions.amount("--max-message-size", text)
        }
        if let text = values["--case-timeout"] {
            guard let seconds = Double(text), seconds.isFinite, seconds > 0 else {
                throw BenchUsageError(message: "--case-timeout takes a number of seconds above 0, not '\(text)'")
            }
            options.caseTimeout = seconds
        }
        return options
    }

    /// `1,3,10-20` as ranges of case numbers (each at least 1).
    static func cases(_ text: String) throws(BenchUsageError) -> [ClosedRange<Int>] {
        var ranges: [ClosedRange<Int>] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let ends = part.split(separator: "-", omittingEmptySubsequences: false).map { Int($0) }
            guard (1...2).contains(ends.count), let low = ends.first ?? nil, let high = ends.last ?? nil, low >= 1,
                low <= high
            else {
                throw BenchUsageError(message: "--cases takes case numbers and ranges such as 1,3,10-20, not '\(text)'")
            }
            ranges.append(low...high)
        }
        return ranges
    }

    /// Whether case `number` is to run.
    func includes(_ number: Int) -> Bool {
        cases.map { $0.contains { $0.contains(number) } } ?? true
    }
}
