import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension SessionManager {
    /// How a manager is set up. The defaults suit a long-running Linux service.
    public struct Configuration: Sendable {
        /// The URLSession configuration; copied when the manager is created. See
        /// ``serverDefaults()`` for what the default changes and why. Whatever you pass, the
        /// manager sets `urlCache = nil`: nothing is ever cached on Linux, and with a cache a
        /// `cancel()` racing completion crashes FoundationNetworking (Docs/Platform.md §4.1).
        /// While ``maximumRunningTasksPerHost`` is set, its value replaces
        /// `httpMaximumConnectionsPerHost` here (see there).
        public var urlSessionConfiguration: URLSessionConfiguration = Configuration.serverDefaults()
        /// Where completions and progress run; `nil` means a serial queue owned by the manager
        /// (never the main queue, which a Linux service usually never runs).
        public var completionQueue: DispatchQueue?
        /// A group every completion is dispatched in (AFNetworking's `completionGroup`).
        public var completionGroup: DispatchGroup?
        /// The most bytes a data or upload task holds in memory; past it the task is cancelled with
        /// ``CourierError/Code-swift.struct/responseTooLarge``. URLSession on Linux has no
        /// back-pressure and inflates gzip without limit, so this is the only bound. Default 256 MiB.
        public var maximumResponseSize: Int = 256 * 1024 * 1024
        /// The least time between two progress callbacks of one task. Default 100 ms.
        public var progressInterval: Duration = .milliseconds(100)
        /// Typed observers of task and session events.
        public var eventMonitors: [any EventMonitor] = []
        /// Whether tasks post `NotificationCenter` notifications (`courierTaskDidComplete`…).
        /// Off by default: posting costs about 5% of the CPU of a small request even with nobody
        /// listening; ``eventMonitors`` cost nothing when there are none.
        public var postsNotifications: Bool = false
        /// Where download bodies are staged when their destination names no directory, and where
        /// large multipart bodies are encoded before upload; `nil` means the system temporary
        /// directory. (A process killed mid-upload can leave a `.courier-*.multipart` file here.)
        public var temporaryDirectory: URL?
        /// The most time any task may take, from its first `resume()` to its completion — every
        /// attempt, redirect, retry, pause and delay included; `nil` (the default) for none.
        /// URLSession on Linux ignores `timeoutIntervalForResource`, and `timeoutIntervalForRequest`
        /// only limits silence (a byte a second resets it), so this is the only bound on a server
        /// that trickles. Expiry completes the task with ``CourierError/Code-swift.struct/deadlineExceeded``;
        /// a download keeps its bytes for resuming. ``DownloadPolicy/deadline`` overrides it per download.
        public var deadline: Duration?
        /// A prefix for the manager's queue labels, to recognise them in backtraces.
        public var label: String = "courier"
        /// Adapters and retriers every task runs (a task's own, from ``CourierTask/intercept(with:)``,
        /// come after these).
        public var interceptor: Interceptor?
        /// What tasks do with redirects unless they say otherwise. Default: follow up to 10.
        public var redirectPolicy: RedirectPolicy = .follow
        /// The credential used to answer Basic and Digest challenges (once per attempt, only for the
        /// origin a task was made for). Never written anywhere. Without one, a 401 completes as an
        /// HTTP status.
        public var credential: Credential?
        /// Header names (any case) treated as secrets: stripped on cross-origin redirects and
        /// never written into resume data, besides `Authorization`, `Proxy-Authorization`, `Cookie`.
        public var sensitiveHeaders: Set<String> = []
        /// Headers every request gets unless it sets them itself: by default a `User-Agent` naming
        /// Courier and its version and an `Accept-Language` from the process's languages. Set on each
        /// request (not as the session's `httpAdditionalHeaders`, which URLSession on Linux merges
        /// per request at a cost of up to 15% of a small request's throughput).
        public var defaultHeaders: [String: String] = Configuration.standardHeaders()
        /// A retry policy every task uses (after the interceptor's own retriers); `nil` for none.
        public var retryPolicy: RetryPolicy?
        /// The most tasks running at once per host (scheme, host and port); the rest wait inside
        /// the manager, in the order they were started, and begin as running ones finish. Default
        /// 4: libcurl inside URLSession closes and reopens connections once five or more transfers
        /// are in flight (Docs/Platform.md §6), so at 16 in flight a run of 5,200 requests opened 32–474
        /// connections; with at most 4 running it reuses 4.
        ///
        /// It is also the URLSession's `httpMaximumConnectionsPerHost`, whatever
        /// ``urlSessionConfiguration`` says: one number. A lower URLSession limit (its default is 6)
        /// kept tasks the manager had started waiting inside URLSession with their headers already
        /// adapted, so a bearer token could expire before the request was sent (issue 30); a
        /// higher one would never be reached. `nil` for no limit: every task starts at once and
        /// URLSession's own `httpMaximumConnectionsPerHost` applies, so tasks above it wait inside
        /// URLSession, adapted (Docs/Configuration.md).
        public var maximumRunningTasksPerHost: Int? = 4
        /// How servers' TLS certificates are checked and which client certificate is shown: a
        /// ``TLSPolicy`` for every https host and/or for particular hosts (``TLSPolicies``).
        /// Empty by default: the system's certificate authorities, full verification. A request
        /// whose policy cannot be enforced (Courier's platform kit off or inert, an option libcurl
        /// lacks, an unreadable file) fails before it is sent with
        /// ``CourierError/Code-swift.struct/tlsPolicyUnenforceable`` (Docs/TLS.md).
        public var tls = TLSPolicies()
        /// Darwin's `waitsForConnectivity`, which FoundationNetworking does not have (its
        /// property is get-only): a request to a host with no route waits up to this long for
        /// one, instead of failing at once. The wait is reported to the event monitors (a pause
        /// with reason ``TaskMetrics/Pause/Reason/connectivity``) and kept in the timeline; a
        /// request that gives up fails with ``CourierError/Code-swift.struct/networkUnreachable``. A
        /// transport failure while the host has no route waits too, spending no retry. `nil` (the
        /// default): no waiting, and a transport failure to a host with no route fails at once
        /// with `networkUnreachable`, never retried. Docs/Reachability.md.
        public var waitsForConnectivity: Duration?
        /// The monitor whose announcements end the waits; `nil` for ``NetworkMonitor/shared``.
        public var networkMonitor: NetworkMonitor?
        /// A private HTTP cache (RFC 9111) for data and upload tasks — and so `decodable` and
        /// ``HTTPClient`` calls: ``ResponseCache/memory(maximumBytes:)`` or
        /// ``ResponseCache/disk(directory:maximumBytes:)``. `nil` (the default) caches nothing.
        /// Streams and downloads never use it. Docs/Caching.md.
        public var responseCache: ResponseCache?
        /// What tasks store in ``responseCache`` unless they say otherwise
        /// (``CourierTask/cacheResponse(using:)``); `nil` for the rules of RFC 9111 (``ResponseCacher/cache``).
        public var responseCacher: ResponseCacher?
        /// Pings, buffers and timeouts of ``SessionManager/webSocketTask(with:)-(URL)`` tasks
        /// (Docs/WebSocket.md); each task may change its own ``WebSocketTask/options`` before `resume()`.
        public var webSocket = WebSocketOptions()
        /// Whether FoundationNetworking is given only the header lines of a 2xx response it acts on
        /// beyond building its own response (cookies, redirects, authentication), while Courier
        /// builds every response you see from the whole head — the same fields and values. It saves
        /// FoundationNetworking's per-line work (a timer, a `Data` and a `String` a line): about a fifth of
        /// the CPU of a small request. Needs the platform kit (``PlatformFixes``); off for a
        /// `urlSessionConfiguration` with a `urlCache`. Docs/Platform.md §6.18. Default `true`.
        public var headerDiet = true

        /// The defaults.
        public init() {}

        /// `URLSessionConfiguration.ephemeral` made server-friendly:
        /// - no cookies: `httpCookieAcceptPolicy = .never` and `httpShouldSetCookies = false`.
        ///   The default shared jar persists to a file every process of the same name shares
        ///   (Docs/Platform.md §2.11), and parsing every header for cookies costs CPU per request
        ///   (a nil storage alone does not stop that). Opt in with ``enableCookies(storage:)``.
        /// - `urlCache = nil`: URLSession on Linux never stores delegate-task responses anyway.
        public static func serverDefaults() -> URLSessionConfiguration {
            let configuration = URLSessionConfiguration.ephemeral
            configuration.urlCache = nil
            configuration.httpCookieAcceptPolicy = .never
            configuration.httpShouldSetCookies = false
            return configuration
        }

        /// Accepts and sends cookies, in `storage` or else a private in-memory jar of this
        /// configuration (never the shared, file-backed one unless you pass it).
        public mutating func enableCookies(storage: HTTPCookieStorage? = nil) {
            let copy = urlSessionConfiguration.copy() as! URLSessionConfiguration
            if let storage { copy.httpCookieStorage = storage }
            if copy.httpCookieStorage == nil { copy.httpCookieStorage = URLSessionConfiguration.ephemeral.httpCookieStorage }
            copy.httpCookieAcceptPolicy = .always
            copy.httpShouldSetCookies = true
            urlSessionConfiguration = copy
        }

        /// `User-Agent: Courier/<version> (<process>; Linux)` and `Accept-Language` with up to six
        /// preferred languages, weighted (RFC 9110 §12.5.4).
        public static func standardHeaders() -> [String: String] {
            let process = ProcessInfo.processInfo.processName
            var languages = Locale.preferredLanguages.prefix(6).enumerated().map { index, language in
                index == 0 ? language : "\(language);q=\(String(format: "%.1f", 1.0 - Double(index) * 0.1))"
            }
            if languages.isEmpty { languages = ["en"] }
            return [
                "User-Agent": "Courier/\(CourierInfo.version) (\(process); Linux)",
                "Accept-Language": languages.joined(separator: ", "),
            ]
        }

        /// The URLSession configuration the manager actually uses.
        func resolvedURLSessionConfiguration() -> URLSessionConfiguration {
            let copy = urlSessionConfiguration.copy() as! URLSessionConfiguration
            copy.urlCache = nil
            copy.timeoutIntervalForRequest = Self.wholeSeconds(copy.timeoutIntervalForRequest)
            // The manager's cap and URLSession's are one number: a task the manager starts never
            // waits inside URLSession with headers adapted long before it is sent.
            if let cap = maximumRunningTasksPerHost { copy.httpMaximumConnectionsPerHost = max(1, cap) }
            return copy
        }

        /// URLSession on Linux truncates timeouts to whole seconds, so 0.5 s fails at once
        /// (Docs/Platform.md §2.11): round up, at least 1 s.
        static func wholeSeconds(_ interval: TimeInterval) -> TimeInterval {
            guard interval.isFinite, interval > 0 else { return 60 }
            return max(1, interval.rounded(.up))
        }
    }
}
