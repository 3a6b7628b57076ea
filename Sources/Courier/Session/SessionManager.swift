import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Owns one `URLSession` and runs data, upload and download tasks on it.
///
/// A manager is meant to live long (one per service, or per remote API): connections are reused
/// within a session, and creating sessions per request is what leads other Linux clients into
/// crashes. Its URLSession delegate is a thin router into a per-task delegate table; each task's
/// delegate accumulates the body, tracks progress, and hands the result to a response serializer
/// on the manager's concurrent processing queue, after which exactly one completion is
/// dispatched on the completion queue.
///
/// Releasing the manager invalidates its session and cancels its running tasks, which complete
/// with ``CourierError/Code-swift.struct/sessionInvalidated``; nothing leaks.
public final class SessionManager: Sendable {
    /// The configuration the manager was created with.
    public let configuration: Configuration
    let core: SessionCore
    let events: EventDispatcher
    /// Where completions go unless a task says otherwise.
    let completionQueue: DispatchQueue
    /// Where response serializers, validation and download publishing run.
    let processingQueue: DispatchQueue
    let temporaryDirectory: URL
    /// The per-task options every new task starts from.
    let taskOptions: TaskOptions

    /// Creates a manager and its URLSession.
    public init(configuration: Configuration = Configuration()) {
        // Before the URLSession exists: its libcurl callbacks are set when it is made.
        PlatformFixes.installOnce()
        self.configuration = configuration
        let events = EventDispatcher(
            monitors: configuration.eventMonitors, postsNotifications: configuration.postsNotifications,
            label: configuration.label)
        self.events = events
        // Targets the global (non-overcommit) pool: a serial queue on the default overcommit
        // root made libdispatch re-arm a timer and re-register an epoll source about five times
        // per request (measured with strace) once it underlies URLSession's delegate queue.
        let ownQueue =
            configuration.completionQueue == nil
            ? DispatchQueue(label: "\(configuration.label).callbacks", target: .global()) : nil
        self.completionQueue = configuration.completionQueue ?? ownQueue!
        self.processingQueue = DispatchQueue(label: "\(configuration.label).processing", attributes: .concurrent)
        self.temporaryDirectory = configuration.temporaryDirectory ?? FileManager.default.temporaryDirectory
        self.taskOptions = Self.makeTaskOptions(for: configuration)
        let table = TaskDelegateTable(cap: configuration.maximumRunningTasksPerHost)
        let callQueue = DispatchQueue(label: "\(configuration.label).urlsession-calls")
        let router = SessionDelegate(table: table, callQueue: callQueue) { error in
            events.sessionDidInvalidate(error: error)
        }
        self.core = SessionCore(
            configuration: configuration.resolvedURLSessionConfiguration(), router: router, label: configuration.label,
            callbackQueue: ownQueue, callQueue: callQueue, tls: TLSEnforcer(configuration.tls),
            headerDiet: configuration.headerDiet)
    }

    /// A new manager with `other`'s configuration (its own URLSession; nothing else is shared).
    public convenience init(copying other: SessionManager) {
        self.init(configuration: other.configuration)
    }

    deinit {
        invalidate(cancelingTasks: true)
    }

    /// The underlying URLSession (for inspection; create tasks through the manager). A task made
    /// on it directly gets FoundationNetworking's own response, every header field included: the
    /// header diet (``Configuration/headerDiet``) applies to the manager's requests only.
    public var session: URLSession { core.session }

    /// How many URLSession tasks are running now.
    public var runningTaskCount: Int { core.table.runningCount }

    /// How many resumed tasks are not running yet: waiting for a slot under
    /// ``Configuration/maximumRunningTasksPerHost``, or about to start (a resumed task is started
    /// in URLSession on the manager's own queue, a moment later). Every resumed, unfinished task
    /// is counted here or in ``runningTaskCount``.
    public var queuedTaskCount: Int { core.table.waitingCount }

    /// The manager's response cache (``Configuration/responseCache``): its size, and removing
    /// one URL's answers or all of them.
    public var responseCache: ResponseCache? { configuration.responseCache }

    /// Whether the manager has been invalidated; tasks created afterwards fail at once.
    public var isInvalidated: Bool { core.isInvalidated }

    /// Invalidates the session. With `cancelingTasks`, tasks already resumed are cancelled and
    /// complete with ``CourierError/Code-swift.struct/sessionInvalidated``; without it they finish
    /// normally, including those still queued behind
    /// ``Configuration/maximumRunningTasksPerHost``. Paused tasks cannot continue and complete with
    /// the same error. Tasks resumed afterwards fail. Calling it again does nothing.
    public func invalidate(cancelingTasks: Bool = false) {
        core.invalidate(cancelingTasks: cancelingTasks)
    }

    /// Settings every new task starts from.
    func settings(for queue: CallbackQueue) -> TransferTask.Settings {
        let dispatchQueue: DispatchQueue?
        switch queue {
        case .default: dispatchQueue = completionQueue
        case .on(let chosen): dispatchQueue = chosen
        case .immediate: dispatchQueue = nil
        }
        return TransferTask.Settings(
            maximumResponseSize: configuration.maximumResponseSize,
            progressInterval: configuration.progressInterval,
            delivery: Delivery(queue: dispatchQueue, group: configuration.completionGroup),
            temporaryDirectory: temporaryDirectory,
            waitsForConnectivity: configuration.waitsForConnectivity,
            networkMonitor: configuration.networkMonitor ?? .shared)
    }

    /// The per-task options every new task starts from (built once: the configuration is fixed).
    static func makeTaskOptions(for configuration: Configuration) -> TaskOptions {
        var interceptor = configuration.interceptor
        if let retryPolicy = configuration.retryPolicy {
            interceptor = (interceptor ?? Interceptor()).then(Interceptor(retriers: [retryPolicy]))
        }
        return TaskOptions(
            interceptor: interceptor, redirectPolicy: configuration.redirectPolicy,
            credential: configuration.credential,
            sensitiveHeaders: Set(configuration.sensitiveHeaders.map { $0.lowercased() }),
            deadline: configuration.deadline, responseCacher: configuration.responseCacher)
    }

    /// The request as Courier sends it: URLSession on Linux truncates timeouts to whole seconds.
    func prepared(_ request: URLRequest) -> URLRequest {
        var request = request
        // One store of the whole field set: on Linux each `setValue(_:forHTTPHeaderField:)`
        // costs ~0.8 µs (bridging and a scan), a single `allHTTPHeaderFields` store ~40 ns.
        // `RequestValidation` checks the merged fields before anything is sent.
        let defaults = configuration.defaultHeaders
        if !defaults.isEmpty {
            if let own = request.allHTTPHeaderFields, !own.isEmpty {
                let present = Set(own.keys.map { $0.lowercased() })
                var merged = own
                for (name, value) in defaults where !present.contains(name.lowercased()) { merged[name] = value }
                if merged.count != own.count { request.allHTTPHeaderFields = merged }
            } else {
                request.allHTTPHeaderFields = defaults
            }
        }
        let rounded = Configuration.wholeSeconds(request.timeoutInterval)
        if rounded != request.timeoutInterval { request.timeoutInterval = rounded }
        return request
    }
}
