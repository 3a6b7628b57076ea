import Foundation

/// A mistake on the command line: printed as one line, exit code 2.
struct BenchUsageError: Error, Equatable {
    let message: String
}

/// What to measure.
enum Workload: String, CaseIterable, Sendable {
    /// Many small GETs with a sliding window of requests in flight.
    case small
    /// One large body streamed into a file.
    case download
    /// One large body held whole in memory.
    case memory
}

/// Which HTTP client runs the workload.
enum ClientKind: String, CaseIterable, Sendable {
    /// Courier's public API, as a user would write it.
    case courier
    /// A raw delegate-based `URLSession`: the baseline.
    case urlsession
}

/// `courier-bench`'s command line, parsed without side effects.
///
/// ```
/// courier-bench small    --url URL [--requests N] [--concurrency C] [--warmup W] [--max-conns K]
///                        [--expect-bytes B] [--timeout S] [--client courier|urlsession]
/// courier-bench download --url URL --out PATH [--expect-bytes B] [--timeout S] [--client …]
/// courier-bench memory   --url URL [--expect-bytes B] [--timeout S] [--client …]
/// ```
/// Options take `--name value` or `--name=value`, in any order, each at most once; an option
/// that does not belong to the workload is an error rather than silently ignored, so a typo
/// never produces a benchmark of something else.
struct BenchOptions: Equatable, Sendable {
    var workload: Workload
    var url: URL
    var client: ClientKind = .courier
    /// small: timed requests.
    var requests = 5000
    /// small: requests kept in flight.
    var concurrency = 1
    /// small: untimed requests before the timed ones.
    var warmup = 200
    /// small: `httpMaximumConnectionsPerHost` (and Courier's running-task cap); `nil` = defaults.
    var maxConnections: Int?
    /// The body length every response must have; `nil` = learn it (small) or do not check.
    var expectedBytes: Int64?
    /// The request timeout and the whole run's deadline, in seconds.
    var timeout: Double = 60
    /// download: where the file goes.
    var output: String?

    init(workload: Workload, url: URL) {
        self.workload = workload
        self.url = url
    }

    static let usage = """
        courier-bench: measures Courier against a raw delegate-based URLSession (build with -c release).

        Usage:
          courier-bench small    --url URL [--requests N] [--concurrency C] [--warmup W] [--max-conns K]
                                 [--expect-bytes B] [--timeout S] [--client courier|urlsession]
          courier-bench download --url URL --out PATH [--expect-bytes B] [--timeout S] [--client courier|urlsession]
          courier-bench memory   --url URL [--expect-bytes B] [--timeout S] [--client courier|urlsession]

          small      N GETs (default 5000) after W untimed warm-up GETs (default 200), keeping C in
                     flight (default 1); every response must be 200 with B bytes (B defaults to the
                     first warm-up response's length). --max-conns sets httpMaximumConnectionsPerHost.
          download   One GET streamed into the file PATH (replaced if it exists).
          memory     One GET held whole in memory.
          --timeout  The request timeout and the deadline for the whole run, in seconds (default 60).
          --client   courier (default): Courier's SessionManager; urlsession: one raw URLSession.

        Prints one line on stdout:
          RESULT client=… workload=… secs=… cpu_s=… rss_kib=… config=k:v,… then
          n=… c=… errors=… rps=… p50_ms=… p99_ms=… (small) or bytes=… mib_s=… (download, memory)
        Exit codes: 0 success, 1 failed requests or run, 2 usage error.
        """

    /// The options each workload accepts (all take a value).
    private static let common: Set<String> = ["--url", "--expect-bytes", "--timeout", "--client"]
    private static func accepted(by workload: Workload) -> Set<String> {
        switch workload {
        case .small: common.union(["--requests", "--concurrency", "--warmup", "--max-conns"])
        case .download: common.union(["--out"])
        case .memory: common
        }
    }

    /// The options in `arguments` (everything after the program name); `nil` when help was asked for.
    static func parse(_ arguments: [String]) throws(BenchUsageError) -> BenchOptions? {
        let helpWords: Set<String> = ["-h", "--help", "help"]
        guard let name = arguments.first else { throw BenchUsageError(message: "missing workload (small, download or memory)") }
        if helpWords.contains(name) { return nil }
        guard let workload = Workload(rawValue: name) else {
            throw BenchUsageError(message: "unknown workload '\(name)' (small, download or memory)")
        }
        let allowed = accepted(by: workload)
        var values: [String: String] = [:]
        var index = 1
        while index < arguments.count {
            var option = arguments[index]
            var value: String?
            index += 1
            if option.hasPrefix("--"), let equals = option.firstIndex(of: "=") {
                value = String(option[option.index(after: equals)...])
                option = String(option[..<equals])
            }
            guard option.hasPrefix("-") else { throw BenchUsageError(message: "unexpected argument '\(option)'") }
            if value == nil, helpWords.contains(option) { return nil }
            guard allowed.contains(option) else {
                throw BenchUsageError(message: "unknown option '\(option)' for \(workload.rawValue)")
            }
            if value == nil {
                guard index < arguments.count else { throw BenchUsageError(message: "\(option) needs a value") }
                value = arguments[index]
                index += 1
            }
            guard values[option] == nil else { throw BenchUsageError(message: "\(option) is given more than once") }
            values[option] = value
        }

        guard let urlText = values["--url"] else { throw BenchUsageError(message: "\(workload.rawValue) needs --url") }
        var options = BenchOptions(workload: workload, url: try url(urlText))
        if let text = values["--client"] {
            guard let client = ClientKind(rawValue: text) else {
                throw BenchUsageError(message: "--client takes courier or urlsession, not '\(text)'")
            }
            options.client = client
        }
        if let text = values["--requests"] { options.requests = try integer("--requests", text, atLeast: 1) }
        if let text = values["--concurrency"] { options.concurrency = try integer("--concurrency", text, atLeast: 1) }
        if let text = values["--warmup"] { options.warmup = try integer("--warmup", text, atLeast: 0) }
        if let text = values["--max-conns"] { options.maxConnections = try integer("--max-conns", text, atLeast: 1) }
        if let text = values["--expect-bytes"] {
            options.expectedBytes = Int64(try integer("--expect-bytes", text, atLeast: 0))
        }
        if let text = values["--timeout"] {
            guard let seconds = Double(text), seconds.isFinite, seconds > 0 else {
                throw BenchUsageError(message: "--timeout takes a number of seconds above 0, not '\(text)'")
            }
            options.timeout = seconds
        }
        if workload == .download {
            guard let path = values["--out"] else { throw BenchUsageError(message: "download needs --out PATH") }
            guard !path.isEmpty, !path.hasSuffix("/") else {
                throw BenchUsageError(message: "--out needs a file path, not '\(path)'")
            }
            options.output = path
        }
        return options
    }

    /// An absolute http or https URL with a host.
    static func url(_ text: String) throws(BenchUsageError) -> URL {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host, !host.isEmpty
        else {
            throw BenchUsageError(message: "--url takes an http:// or https:// URL, not '\(text)'")
        }
        return url
    }

    private static func integer(_ option: String, _ text: String, atLeast minimum: Int) throws(BenchUsageError) -> Int {
        guard let value = Int(text), value >= minimum else {
            throw BenchUsageError(message: "\(option) takes a whole number \(minimum) or more, not '\(text)'")
        }
        return value
    }

    /// The settings that shape the run, for the RESULT line's `config=` field, in a fixed order.
    var configuration: [(key: String, value: String)] {
        let timeout = (key: "timeout", value: ResultLine.seconds(timeout))
        switch workload {
        case .small:
            return [
                ("max_conns", maxConnections.map(String.init) ?? "default"),
                timeout,
                ("warmup", String(warmup)),
            ]
        case .download, .memory:
            return [timeout]
        }
    }
}
