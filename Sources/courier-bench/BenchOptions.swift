import Courier
import Foundation

/// A mistake on the command line: printed as one line, exit code 2.
struct BenchUsageError: Error, Equatable {
    let message: String
}

/// What to measure.
enum Workload: String, CaseIterable, Sendable {
    /// Many small GETs with a sliding window of requests in flight.
    case small
    /// `small` through a manager with an in-memory `ResponseCache`, against a URL whose answer
    /// stays fresh in it: what a fresh hit costs (Courier only).
    case cached
    /// One large body streamed into a file.
    case download
    /// One large body held whole in memory.
    case memory
    /// One large body consumed chunk by chunk as it arrives, never held whole.
    case stream
    /// Server-Sent Events counted as they arrive.
    case sse
    /// Many small files through a `DownloadQueue`, or through plain download tasks (the baseline).
    case queue
    /// Transfers that wait (a delayed head, slow event streams): CPU seconds per wall second.
    case idle
    /// One large file from an in-process server that caps each connection, split over several
    /// connections, against aria2c (its own options: ``SegmentedOptions``).
    case segmented
    /// WebSocket echo: the latency of small messages one at a time, then 1 MiB messages echoed
    /// one at a time (Courier's `WebSocketTask`; the peers are Docs/bench/ws-peers.py).
    case websocket
}

/// The response cache Courier's client uses in `small` and `cached` (`--cache`).
enum BenchCache: String, CaseIterable, Sendable {
    /// No cache (the default for `small`).
    case off
    /// `ResponseCache.memory(maximumBytes: 64 MiB)` (the default for `cached`).
    case memory
}

/// The TLS policy Courier's client puts on the `small` workload's requests (`--tls-policy`).
enum BenchTLSPolicy: String, CaseIterable, Sendable {
    /// No policy: the system's certificate authorities, as libcurl finds them.
    case none
    /// `TLSPolicy(trust: .only([.file(caFile)]))`.
    case only
    /// `TLSPolicy(trust: .system(adding: [.file(caFile)]))`: the system's authorities and the CA.
    case system
}

/// How the `queue` workload runs its downloads.
enum QueueMode: String, CaseIterable, Sendable {
    /// Through a `DownloadQueue`: one `add(contentsOf:)`, completions from an observer.
    case queue
    /// Plain `downloadTask(with:to:)` calls, `--concurrency` in flight: the baseline.
    case tasks
}

/// What a Courier stream does when its consumer falls `--buffer-limit` bytes behind
/// (`StreamPolicy.Overflow`).
enum StreamOverflow: String, CaseIterable, Sendable {
    /// Fail the stream (the library's default).
    case fail
    /// Stop receiving and continue with `Range` once the consumer has caught up.
    case pause
}

/// Which HTTP client runs the workload.
enum ClientKind: String, CaseIterable, Sendable {
    /// Courier's public API, as a user would write it.
    case courier
    /// A raw delegate-based `URLSession`: the baseline.
    case urlsession
    /// The same raw client on a `URLSession` set up as Courier sets up its own: no cache, no
    /// cookies, 4 connections per host, callbacks on a serial dispatch queue, tasks created and
    /// resumed off the callback thread, the platform kit installed. What URLSession itself can do
    /// once configured well, without Courier's per-task work: the ceiling any client built on it meets.
    case urlsessionLean = "urlsession-lean"

    /// Either raw `URLSession` client: no stream buffer, no queue, no Courier API.
    var isRaw: Bool { self != .courier }
}

/// `courier-bench`'s command line, parsed without side effects.
///
/// ```
/// courier-bench small    --url URL [--requests N] [--concurrency C] [--warmup W] [--max-conns K]
///                        [--expect-bytes B] [--timeout S] [--client courier|urlsession]
///                        [--new-connections] [--tls-policy none|only|system --cacert FILE]
/// courier-bench download --url URL --out PATH [--expect-bytes B] [--timeout S] [--client …]
/// courier-bench memory   --url URL [--expect-bytes B] [--timeout S] [--client …]
/// courier-bench stream   --url URL [--expect-bytes B] [--sha256 HEX] [--buffer-limit L] [--overflow fail|pause]
///                        [--consume-mib-s R] [--timeout S] [--client …]
/// courier-bench sse      --url URL --expect-events N [--timeout S] [--client …]
/// courier-bench queue    --url URL --files N --concurrency C --dir DIR [--mode queue|tasks] [--expect-bytes B]
///                        [--timeout S]
/// courier-bench queue    --url URL --files N --dir DIR --items-only [--timeout S]
/// courier-bench idle     --url BASE [--shape head|sse|sse16] [--seconds S] [--timeout S] [--client …]
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
    /// stream: the SHA-256 the body must have (also makes the consumer hash every chunk).
    var expectedSHA256: [UInt8]?
    /// stream, courier only: `StreamPolicy.bufferLimit`; `nil` = the library's default.
    var bufferLimit: Int?
    /// stream, courier only: `StreamPolicy.overflow`.
    var overflow: StreamOverflow = .fail
    /// stream, courier only: the pace of the consumer in MiB/s; `nil` = as fast as it can.
    var consumeMiBPerSecond: Double?
    /// sse: how many events the response must deliver (required).
    var expectedEvents: Int?
    /// queue: how many files (or, with `--items-only`, items) there are (required).
    var files = 0
    /// queue: where the queue's directory (`queue/`) and the files (`out/`) go (required).
    var directory: String?
    /// queue: through a `DownloadQueue` or plain download tasks.
    var mode: QueueMode = .queue
    /// queue: only add the items to a queue that runs none of them, and measure memory.
    var itemsOnly = false
    /// small, Courier only: a `LoggingMonitor` at this level whose lines are written to /dev/null
    /// (`nil`: no monitor), to measure what logging costs.
    var logLevel: LoggingMonitor.Level?
    /// small, https: a PEM file of CA certificates (`--cacert`) for `--tls-policy`.
    var caFile: String?
    /// small, Courier only: the TLS policy the manager puts on every request (`--tls-policy`).
    var tlsPolicy: BenchTLSPolicy = .none
    /// small and cached, Courier only: the manager's response cache (`--cache`).
    var cache: BenchCache = .off
    /// small: every request asks for its connection to be closed (`Connection: close`), so each
    /// one pays for a new connection (and, over https, a full TLS handshake).
    var newConnections = false
    /// idle: what waits (`--shape`).
    var shape: IdleShape = .head
    /// idle: how long the transfers wait, in seconds (`--seconds`, at most ``IdleShape/longestWait``).
    var seconds: Double = 10
    /// websocket: timed small messages (`--messages`), their size in bytes (`--size`), and the
    /// 1 MiB messages echoed after them (`--big-mib`).
    var messages = 10_000
    var messageSize = 32
    var bigMessages = 64
    /// websocket: after the echoes, how long the connection stays open with nothing sent (`--idle`,
    /// seconds; 0: not at all), and its ping interval (`--ping`, seconds; `nil`: no pings).
    var idleSeconds: Double = 0
    var pingSeconds: Double?
    /// websocket: new connections opened one after another after the echoes (`--connects`), each
    /// for one small echo and a close, to measure what a connect costs.
    var connects = 0

    init(workload: Workload, url: URL) {
        self.workload = workload
        self.url = url
    }

    static let usage = """
        courier-bench: measures Courier against a raw delegate-based URLSession (build with -c release).

        Usage:
          courier-bench small    --url URL [--requests N] [--concurrency C] [--warmup W] [--max-conns K]
                                 [--expect-bytes B] [--timeout S] [--client courier|urlsession] [--log LEVEL]
                                 [--new-connections] [--tls-policy none|only|system --cacert FILE] [--cache off|memory]
          courier-bench cached   (the options of small; Courier only)
          courier-bench download --url URL --out PATH [--expect-bytes B] [--timeout S] [--client courier|urlsession]
          courier-bench memory   --url URL [--expect-bytes B] [--timeout S] [--client courier|urlsession]
          courier-bench stream   --url URL [--expect-bytes B] [--sha256 HEX] [--buffer-limit L] [--overflow fail|pause]
                                 [--consume-mib-s R] [--timeout S] [--client courier|urlsession]
          courier-bench sse      --url URL --expect-events N [--timeout S] [--client courier|urlsession]
          courier-bench queue    --url URL --files N --concurrency C --dir DIR [--mode queue|tasks] [--expect-bytes B]
                                 [--timeout S]
          courier-bench queue    --url URL --files N --dir DIR --items-only [--timeout S]
          courier-bench idle     --url BASE [--shape head|sse|sse16] [--seconds S] [--timeout S]
                                 [--client courier|urlsession]
          courier-bench websocket --url ws://…|wss://… [--ca FILE] [--messages N] [--size B] [--big-mib M]
                                 [--connects K] [--warmup W] [--idle S] [--ping P] [--timeout S]
          courier-bench segmented [options]   (courier-bench segmented --help)
          courier-bench autobahn --url ws://…|wss://… [options]   (courier-bench autobahn --help)
          courier-bench cache-proxy --upstream URL [options]   (courier-bench cache-proxy --help)

          small      N GETs (default 5000) after W untimed warm-up GETs (default 200), keeping C in
                     flight (default 1); every response must be 200 with B bytes (B defaults to the
                     first warm-up response's length). --max-conns sets httpMaximumConnectionsPerHost.
                     --log LEVEL (Courier only) attaches a LoggingMonitor at LEVEL (trace … critical)
                     writing each line to /dev/null. --new-connections sends Connection: close, so every
                     request opens a new connection (over https: a full handshake). --tls-policy (Courier
                     only) puts a TLSPolicy on every request: only (trust only the CA file --cacert) or
                     system (the system's authorities and --cacert); none (default) trusts the system's.
                     --cache memory (Courier only) gives the manager an in-memory ResponseCache.
          cached     small with --cache memory: against a URL whose answer stays fresh, every timed
                     request after the first is a cache hit.
          download   One GET streamed into the file PATH (replaced if it exists).
          memory     One GET held whole in memory.
          stream     One GET consumed chunk by chunk (Courier: bytes(for:) and .chunks), never held whole;
                     --sha256 hashes every chunk and checks the digest. Courier only: --buffer-limit
                     (StreamPolicy.bufferLimit, default \(StreamPolicy.default.bufferLimit)), --overflow (default
                     fail), --consume-mib-s (the consumer paces itself to R MiB/s by sleeping).
          sse        One GET of Server-Sent Events, counted until event N (Courier: events(for:), the
                     last event's id must be N; urlsession: blank lines ending a block, N in all).
          queue      N files, URL?i=1 … URL?i=N, into DIR/out/1 … DIR/out/N with C downloads running (Courier
                     only; DIR/queue and DIR/out are deleted first). --mode queue (default): a DownloadQueue in
                     DIR/queue (maximumRunning and maximumRunningPerHost C), all N added with one
                     add(contentsOf:), timed until an observer has seen every item finish; --mode tasks: plain
                     downloadTask(with:to:) calls, C in flight. Every file must be complete, with B bytes
                     when --expect-bytes is given. --items-only: adds the N items to a queue whose one slot
                     is held by an item waiting for its URL refresher (which answers only after the run), so
                     all N stay queued and no request is sent: times the add and reports the peak memory.
          idle       Transfers that wait, against a CourierTestServer at BASE (courier serve): CPU seconds per
                     wall second from the moment they are started until they complete. --shape head (default):
                     one GET of BASE/delay/S*1000 (a head delayed S s); sse: one event stream with an event every
                     ~2 s for S s (BASE/sse?count=…&interval_ms=…); sse16: 16 such streams at once (both
                     clients then allow 16 connections per host). --seconds S (default 10, at most 10).
          websocket  Against a WebSocket echo server (Docs/bench/ws-peers.py server, or courier serve's
                     /ws/echo): W untimed messages (default 200), then N text messages of B bytes (default
                     10000 of 32) one in flight, each timed from send to its echo, then M binary messages
                     of 1 MiB (default 64) echoed one at a time. Courier only. --ca: a CA file (PEM) the
                     wss:// server's certificate chains to, trusted beside the system's. --idle S: then
                     S seconds open with nothing sent (the CPU they cost: idle_cpu_core), --ping P: a
                     ping every P seconds (WebSocketOptions.pingInterval).
          --timeout  The request timeout and the deadline for the whole run, in seconds (default 60).
          --client   courier (default): Courier's SessionManager; urlsession: one raw URLSession;
                     urlsession-lean: the same raw client on a URLSession set up as Courier sets up its
                     own (no cache or cookies, 4 connections per host, callbacks on a serial dispatch
                     queue, tasks started off the callback thread, the platform kit installed).

        Prints one line on stdout:
          RESULT client=… workload=… secs=… cpu_s=… rss_kib=… config=k:v,… then
          n=… c=… errors=… rps=… p50_ms=… p99_ms=… (small), bytes=… mib_s=… (download, memory),
          bytes=… mib_s=… high_water_kib=… pauses=… (stream), events=… events_s=… (sse),
          files=… c=… files_s=… (queue) or items=… items_s=… base_rss_kib=… journal_kib=… (queue --items-only),
          transfers=… cpu_per_wall=… kit=active|disabled|notInstalled|inert (idle),
          n=… p50_us=… p99_us=… cpu_us_per_msg=… big_mib=… mib_s=… (websocket)
        Exit codes: 0 success, 1 failed requests or run, 2 usage error.
        """

    /// The options that take no value.
    private static let flags: Set<String> = ["--items-only", "--new-connections"]
    /// The options each workload accepts (all but ``flags`` take a value).
    private static let common: Set<String> = ["--url", "--expect-bytes", "--timeout", "--client"]
    private static func accepted(by workload: Workload) -> Set<String> {
        switch workload {
        case .small, .cached:
            common.union([
                "--requests", "--concurrency", "--warmup", "--max-conns", "--log", "--new-connections", "--tls-policy", "--cacert",
                "--cache",
            ])
        case .download: common.union(["--out"])
        case .memory: common
        case .stream: common.union(["--sha256", "--buffer-limit", "--overflow", "--consume-mib-s"])
        case .sse: ["--url", "--expect-events", "--timeout", "--client"]
        case .queue: common.union(["--files", "--concurrency", "--dir", "--mode", "--items-only"])
        case .idle: ["--url", "--shape", "--seconds", "--timeout", "--client"]
        case .websocket:
            ["--url", "--ca", "--messages", "--size", "--big-mib", "--connects", "--warmup", "--idle", "--ping", "--timeout", "--client"]
        // Parsed by SegmentedOptions: it starts its own server and runs several clients.
        case .segmented: []
        }
    }

    /// The options in `arguments` (everything after the program name); `nil` when help was asked for.
    static func parse(_ arguments: [String]) throws(BenchUsageError) -> BenchOptions? {
        let helpWords: Set<String> = ["-h", "--help", "help"]
        guard let name = arguments.first else { throw BenchUsageError(message: "missing workload (\(workloadNames))") }
        if helpWords.contains(name) { return nil }
        guard let workload = Workload(rawValue: name) else {
            throw BenchUsageError(message: "unknown workload '\(name)' (\(workloadNames))")
        }
        guard workload != .segmented else {
            throw BenchUsageError(message: "segmented takes its own options: SegmentedOptions.parse reads them")
        }
        let allowed = accepted(by: workload)
        guard
            let values = try scanOptions(
                arguments.dropFirst(), accepted: allowed, flags: flags, helpWords: ["-h", "--help"], command: workload.rawValue)
        else { return nil }

        guard let urlText = values["--url"] else { throw BenchUsageError(message: "\(workload.rawValue) needs --url") }
        var options = BenchOptions(workload: workload, url: try url(urlText, webSocket: workload == .websocket))
        if let text = values["--client"] {
            guard let client = ClientKind(rawValue: text) else {
                throw BenchUsageError(message: "--client takes courier, urlsession or urlsession-lean, not '\(text)'")
            }
            options.client = client
        }
        if let text = values["--requests"] { options.requests = try integer("--requests", text, atLeast: 1) }
        if let text = values["--concurrency"] { options.concurrency = try integer("--concurrency", text, atLeast: 1) }
        if let text = values["--warmup"] { options.warmup = try integer("--warmup", text, atLeast: 0) }
        if let text = values["--max-conns"] { options.maxConnections = try integer("--max-conns", text, atLeast: 1) }
        if let text = values["--log"] {
            guard let level = LoggingMonitor.Level(rawValue: text) else {
                throw BenchUsageError(message: "--log takes trace, debug, info, notice, warning, error or critical, not '\(text)'")
            }
            options.logLevel = level
        }
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
        if let text = values["--sha256"] {
            guard let digest = DownloadPolicy.sha256(hex: text), digest.count == 32 else {
                throw BenchUsageError(message: "--sha256 takes 64 hexadecimal digits, not '\(text)'")
            }
            options.expectedSHA256 = digest
        }
        if let text = values["--buffer-limit"] { options.bufferLimit = try integer("--buffer-limit", text, atLeast: 1) }
        if let text = values["--overflow"] {
            guard let overflow = StreamOverflow(rawValue: text) else {
                throw BenchUsageError(message: "--overflow takes fail or pause, not '\(text)'")
            }
            options.overflow = overflow
        }
        if let text = values["--consume-mib-s"] {
            guard let rate = Double(text), rate.isFinite, rate > 0 else {
                throw BenchUsageError(message: "--consume-mib-s takes a number of MiB per second above 0, not '\(text)'")
            }
            options.consumeMiBPerSecond = rate
        }
        if options.client.isRaw {
            // The baseline has no stream buffer to bound or pause, and it cannot slow the network
            // down: a paced consumer could only buffer without bound, which is the point of the
            // comparison. Refused rather than ignored, so no run measures something else.
            for option in ["--consume-mib-s", "--buffer-limit", "--overflow"] where values[option] != nil {
                throw BenchUsageError(
                    message: "\(option) needs --client courier: a raw URLSession has no stream buffer and cannot pace its consumer")
            }
        }
        if workload == .small || workload == .cached {
            try parseTLS(values, into: &options)
            try parseCache(values, into: &options)
        }
        if workload == .sse {
            guard let text = values["--expect-events"] else { throw BenchUsageError(message: "sse needs --expect-events N") }
            options.expectedEvents = try integer("--expect-events", text, atLeast: 1)
        }
        if workload == .queue { try parseQueue(values, into: &options) }
        if workload == .idle { try parseIdle(values, into: &options) }
        if workload == .websocket { try parseWebSocket(values, into: &options) }
        return options
    }

    /// The `websocket` workload's options: Courier only (URLSession's WebSocket task fails at
    /// `resume()` on Linux, Docs/WebSocket.md), `--ca` for a `wss://` server's throwaway CA.
    private static func parseWebSocket(_ values: [String: String], into options: inout BenchOptions) throws(BenchUsageError) {
        guard options.client == .courier else {
            throw BenchUsageError(message: "websocket needs --client courier: URLSession's WebSocket task does not work on Linux")
        }
        if let text = values["--messages"] { options.messages = try integer("--messages", text, atLeast: 1) }
        if let text = values["--size"] { options.messageSize = try integer("--size", text, atLeast: 1) }
        if let text = values["--big-mib"] { options.bigMessages = try integer("--big-mib", text, atLeast: 0) }
        for (flag, minimum) in [("--idle", 0.0), ("--ping", 0.001)] {
            guard let text = values[flag] else { continue }
            guard let seconds = Double(text), seconds.isFinite, seconds >= minimum else {
                throw BenchUsageError(message: "\(flag) takes a number of seconds of at least \(minimum), not '\(text)'")
            }
            if flag == "--idle" { options.idleSeconds = seconds } else { options.pingSeconds = seconds }
        }
        if let text = values["--connects"] { options.connects = try integer("--connects", text, atLeast: 0) }
        if let path = values["--ca"] {
            guard !path.isEmpty else { throw BenchUsageError(message: "--ca needs a file path") }
            guard options.url.scheme?.lowercased() == "wss" else { throw BenchUsageError(message: "--ca needs a wss:// URL") }
            options.caFile = path
        }
    }

    /// `--cache` (small, cached): Courier only; `cached` always has one.
    private static func parseCache(_ values: [String: String], into options: inout BenchOptions) throws(BenchUsageError) {
        if options.workload == .cached { options.cache = .memory }
        if let text = values["--cache"] {
            guard let cache = BenchCache(rawValue: text) else {
                throw BenchUsageError(message: "--cache takes off or memory, not '\(text)'")
            }
            guard options.workload == .small || cache != .off else {
                throw BenchUsageError(message: "cached needs a cache: --cache memory")
            }
            options.cache = cache
        }
        if options.cache != .off, options.client != .courier {
            throw BenchUsageError(
                message: "\(options.workload == .cached ? "cached" : "--cache") needs --client courier: URLSession on Linux has no cache")
        }
    }

    /// `small`'s connection and TLS options.
    private static func parseTLS(_ values: [String: String], into options: inout BenchOptions) throws(BenchUsageError) {
        options.newConnections = values["--new-connections"] != nil
        if let text = values["--tls-policy"] {
            guard let policy = BenchTLSPolicy(rawValue: text) else {
                throw BenchUsageError(message: "--tls-policy takes none, only or system, not '\(text)'")
            }
            options.tlsPolicy = policy
        }
        if let path = values["--cacert"] {
            guard !path.isEmpty else { throw BenchUsageError(message: "--cacert needs a file path") }
            options.caFile = path
        }
        if options.tlsPolicy != .none {
            guard options.client == .courier else {
                throw BenchUsageError(message: "--tls-policy needs --client courier: a raw URLSession has no TLS policy")
            }
            guard options.caFile != nil else {
                throw BenchUsageError(message: "--tls-policy \(options.tlsPolicy.rawValue) needs --cacert FILE")
            }
            guard options.url.scheme?.lowercased() == "https" else { throw BenchUsageError(message: "--tls-policy needs an https:// URL") }
        } else if options.caFile != nil {
            // Without a policy nothing in URLSession can be told of a CA file: refused, not ignored.
            throw BenchUsageError(
                message: "--cacert needs --tls-policy only or system: without a policy the system's CA store is trusted (Docs/Benchmark.md)"
            )
        }
    }

    /// The `idle` workload's options.
    private static func parseIdle(_ values: [String: String], into options: inout BenchOptions) throws(BenchUsageError) {
        if let text = values["--shape"] {
            guard let shape = IdleShape(rawValue: text) else {
                throw BenchUsageError(message: "--shape takes head, sse or sse16, not '\(text)'")
            }
            options.shape = shape
        }
        if let text = values["--seconds"] {
            guard let seconds = Double(text), seconds.isFinite, seconds > 0, seconds <= IdleShape.longestWait else {
                throw BenchUsageError(
                    message:
                        "--seconds takes a number of seconds above 0 and at most \(ResultLine.seconds(IdleShape.longestWait)), not '\(text)'"
                )
            }
            options.seconds = seconds
        }
        // Every transfer must wait at once: Courier runs 4 per host by default, URLSession 6.
        if options.shape.transfers > 1 { options.maxConnections = options.shape.transfers }
    }

    /// The `queue` workload's options and the rules between them.
    private static func parseQueue(_ values: [String: String], into options: inout BenchOptions) throws(BenchUsageError) {
        if options.client.isRaw {
            // A raw URLSession has no queue to measure; the baseline is Courier's own plain tasks.
            throw BenchUsageError(
                message:
                    "queue needs --client courier: it measures Courier's DownloadQueue against Courier's plain download tasks (--mode tasks)"
            )
        }
        guard let files = values["--files"] else { throw BenchUsageError(message: "queue needs --files N") }
        options.files = try integer("--files", files, atLeast: 1)
        guard let directory = values["--dir"] else { throw BenchUsageError(message: "queue needs --dir DIR") }
        guard !directory.isEmpty else { throw BenchUsageError(message: "--dir needs a directory path") }
        options.directory = directory
        if let text = values["--mode"] {
            guard let mode = QueueMode(rawValue: text) else {
                throw BenchUsageError(message: "--mode takes queue or tasks, not '\(text)'")
            }
            options.mode = mode
        }
        options.itemsOnly = values["--items-only"] != nil
        if options.itemsOnly {
            // Nothing is downloaded: options about downloads would be silently meaningless.
            for option in ["--concurrency", "--expect-bytes"] where values[option] != nil {
                throw BenchUsageError(message: "\(option) has no meaning with --items-only: no download runs")
            }
            if options.mode == .tasks { throw BenchUsageError(message: "--items-only needs --mode queue") }
        } else {
            guard values["--concurrency"] != nil else { throw BenchUsageError(message: "queue needs --concurrency C") }
        }
    }

    /// The workloads' names, for messages.
    private static var workloadNames: String {
        Workload.allCases.map(\.rawValue).joined(separator: ", ")
    }

    /// An absolute http or https URL with a host (ws or wss for the `websocket` workload).
    static func url(_ text: String, webSocket: Bool = false) throws(BenchUsageError) -> URL {
        let schemes = webSocket ? ["ws", "wss"] : ["http", "https"]
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), schemes.contains(scheme),
            let host = url.host, !host.isEmpty
        else {
            throw BenchUsageError(message: "--url takes \(webSocket ? "a" : "an") \(schemes[0]):// or \(schemes[1]):// URL, not '\(text)'")
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
        case .small, .cached:
            let log = logLevel.map { [(key: "log", value: $0.rawValue)] } ?? []
            let cached = cache != .off ? [(key: "cache", value: cache.rawValue)] : []
            // Only when asked for, so the plain rows read as before.
            let connections = newConnections ? [(key: "new_conns", value: "yes")] : []
            let tls = tlsPolicy != .none ? [(key: "tls_policy", value: tlsPolicy.rawValue)] : []
            return cached + log + [
                ("max_conns", maxConnections.map(String.init) ?? "default")
            ] + connections + [
                timeout
            ] + tls + [
                ("warmup", String(warmup))
            ]
        case .download, .memory, .sse, .segmented:
            return [timeout]
        case .queue:
            return [("mode", itemsOnly ? "items" : mode.rawValue), timeout]
        case .websocket:
            // The idle phase and pings only when asked for: the echo lines stay as they were.
            let idle = idleSeconds > 0 ? [("idle", ResultLine.seconds(idleSeconds))] : []
            let ping = pingSeconds.map { [("ping", ResultLine.seconds($0))] } ?? []
            return [("big_mib", String(bigMessages))] + idle + ping + [
                ("scheme", url.scheme?.lowercased() ?? "ws"), ("size", String(messageSize)), timeout, ("warmup", String(warmup)),
            ]
        case .idle:
            return [
                ("max_conns", maxConnections.map(String.init) ?? "default"),
                ("seconds", ResultLine.seconds(seconds)),
                ("shape", shape.rawValue),
                timeout,
            ]
        case .stream:
            let sha256 = (key: "sha256", value: expectedSHA256 == nil ? "no" : "yes")
            guard client == .courier else { return [sha256, timeout] }
            return [
                ("buffer_limit", String(bufferLimit ?? StreamPolicy.default.bufferLimit)),
                ("consume_mib_s", consumeMiBPerSecond.map(ResultLine.seconds) ?? "none"),
                ("overflow", overflow.rawValue),
                sha256,
                timeout,
            ]
        }
    }
}

/// Reads `--name value`, `--name=value` and flags (`flags`, no value) from `arguments`: every
/// option at most once, none outside `accepted`; `nil` when a help word stands alone. The one
/// reader of the bench's option syntax, for every workload (`segmented` too).
func scanOptions(
    _ arguments: ArraySlice<String>, accepted: Set<String>, flags: Set<String>,
    helpWords: Set<String> = ["-h", "--help", "help"], command: String
) throws(BenchUsageError) -> [String: String]? {
    var values: [String: String] = [:]
    var index = arguments.startIndex
    while index < arguments.endIndex {
        var option = arguments[index]
        var value: String?
        index += 1
        if option.hasPrefix("--"), let equals = option.firstIndex(of: "=") {
            value = String(option[option.index(after: equals)...])
            option = String(option[..<equals])
        }
        if value == nil, helpWords.contains(option) { return nil }
        guard option.hasPrefix("-") else { throw BenchUsageError(message: "unexpected argument '\(option)'") }
        guard accepted.contains(option) else { throw BenchUsageError(message: "unknown option '\(option)' for \(command)") }
        if flags.contains(option) {
            guard value == nil else { throw BenchUsageError(message: "\(option) takes no value") }
            value = ""
        } else if value == nil {
            guard index < arguments.endIndex else { throw BenchUsageError(message: "\(option) needs a value") }
            value = arguments[index]
            index += 1
        }
        guard values[option] == nil else { throw BenchUsageError(message: "\(option) is given more than once") }
        values[option] = value
    }
    return values
}
