import Foundation

/// `courier-bench cache-proxy`'s command line, parsed without side effects.
///
/// ```
/// courier-bench cache-proxy --upstream URL [--cache none|memory|DIR] [--max-bytes B] [--timeout S]
/// ```
struct CacheProxyOptions: Equatable, Sendable {
    /// Which response cache the proxy's manager uses.
    enum Cache: Equatable, Sendable {
        /// No cache: the manager as every other workload has it (`responseCache` unset).
        case none
        /// `ResponseCache.memory(maximumBytes:)`.
        case memory
        /// `ResponseCache.disk(directory:maximumBytes:)` in this directory.
        case disk(String)
    }

    /// The origin every request is forwarded to: scheme, host, port and an optional path prefix.
    var upstream: URL
    var cache = Cache.none
    /// The cache's byte limit.
    var maximumBytes = 64 << 20
    /// Each forwarded request's timeout in seconds (silence and the whole answer).
    var timeout: Double = 30

    static let usage = """
          courier-bench cache-proxy --upstream URL [--cache none|memory|DIR] [--max-bytes B] [--timeout S]

          cache-proxy  A reverse proxy on 127.0.0.1 (a free port, printed on stdout as
                       'cache-proxy listening on http://127.0.0.1:PORT') that forwards every request to
                       URL + its path through one Courier SessionManager: redirects not followed, no
                       retries, every status accepted, request and response headers passed both ways
                       (hop-by-hop ones excepted), one request per connection. A transport failure is
                       answered 502 with a Courier-Error header. --cache picks the manager's response
                       cache: none (default), memory, or a directory for the disk store, bounded by
                       --max-bytes (default 64M). It is the client the HTTP caching test suite measures
                       (Docs/bench/cache-tests.sh, Docs/Caching.md). Runs until killed.
        """

    private static let accepted: Set<String> = ["--upstream", "--cache", "--max-bytes", "--timeout"]

    /// The options after the word `cache-proxy`; `nil` when help was asked for.
    static func parse(_ arguments: [String]) throws(BenchUsageError) -> CacheProxyOptions? {
        guard let values = try scanOptions(arguments[...], accepted: accepted, flags: [], command: "cache-proxy") else {
            return nil
        }
        guard let text = values["--upstream"] else { throw BenchUsageError(message: "cache-proxy needs --upstream URL") }
        guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https", url.host?.isEmpty == false,
            url.query == nil
        else {
            throw BenchUsageError(message: "--upstream takes an http:// or https:// URL without a query, not '\(text)'")
        }
        var options = CacheProxyOptions(upstream: url)
        switch values["--cache"] {
        case nil, "none": break
        case "memory": options.cache = .memory
        case let directory?:
            guard !directory.isEmpty else { throw BenchUsageError(message: "--cache takes none, memory or a directory") }
            options.cache = .disk(directory)
        }
        if let text = values["--max-bytes"] { options.maximumBytes = try SegmentedOptions.amount("--max-bytes", text) }
        if let text = values["--timeout"] {
            guard let seconds = Double(text), seconds.isFinite, seconds > 0 else {
                throw BenchUsageError(message: "--timeout takes a number of seconds above 0, not '\(text)'")
            }
            options.timeout = seconds
        }
        return options
    }
}
