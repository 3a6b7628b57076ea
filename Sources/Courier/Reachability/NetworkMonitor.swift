import Foundation
#if canImport(Glibc)
import Glibc
#endif
internal import CourierSupport

/// Watches the network through the kernel's rtnetlink announcements: Linux's
/// `AFNetworkReachabilityManager` and `NWPathMonitor` (Docs/Reachability.md).
///
/// ``start()`` opens two `NETLINK_ROUTE` sockets: one joined to the link, address and route
/// groups (IPv4 and IPv6), read by a dispatch source — nothing runs while nothing changes — and
/// one for dumps. Every announcement schedules one re-read of the kernel's tables after
/// ``debounce`` (a burst of announcements, such as an interface coming up with its addresses and
/// routes, is one re-read); a changed ``NetworkPath`` goes to the ``paths(bufferingNewest:)`` streams, the
/// ``addObserver(queue:_:)`` handlers and the `courierNetworkPathDidChange` notification. Each
/// re-read also re-checks the hosts requests are waiting for (``HostReachability``).
///
/// The sockets belong to the network namespace of the thread that calls ``start()``. A process
/// without permission for netlink still works: the status is ``NetworkPath/Status/unknown`` with
/// the reason in ``NetworkPath/unknownReason``, and ``reachability(of:)-(String)`` still answers (a
/// route lookup needs no netlink).
public final class NetworkMonitor: Sendable {
    /// The monitor managers use for ``SessionManager/Configuration/waitsForConnectivity`` and
    /// queues use to pause offline; started on first use.
    public static let shared = NetworkMonitor()

    /// How long the monitor waits after an announcement for more before it re-reads the tables.
    public let debounce: Duration
    /// The longest a steady stream of announcements can postpone a re-read.
    static let longestPostponement: Duration = .seconds(1)

    let queue = DispatchQueue(label: "courier.network-monitor")
    let state = Locked(State())
    /// Opens the two sockets; replaced in tests to stand for a process without netlink permission.
    let openSockets: @Sendable () throws -> (events: NetlinkSocket, dumps: NetlinkSocket)

    struct State {
        var started = false
        /// Not monitoring since ``cancel()``, until ``start()`` again.
        var cancelled = false
        /// Counts ``cancel()``s: a start whose sockets open across one does not install them.
        var generation = 0
        /// Counts the paths published: an observer added meanwhile was told already.
        var publications = 0
        var path = NetworkPath.unknown("the monitor has not started")
        var sockets: (events: NetlinkSocket, dumps: NetlinkSocket)?
        var source: (any DispatchSourceRead)?
        var debounceTimer: (any DispatchSourceTimer)?
        var pendingSince: ContinuousClock.Instant?
        var sequence: UInt32 = 0
        var refreshes = 0
        var observers: [UUID: Observer] = [:]
        var continuations: [UUID: AsyncStream<NetworkPath>.Continuation] = [:]
        var waiters: [UUID: Waiter] = [:]
        /// Called after every re-read, changed path or not (a download queue re-checks its hosts).
        var refreshHandlers: [UUID: @Sendable () -> Void] = [:]
    }

    struct Observer {
        let queue: DispatchQueue?
        let handler: @Sendable (NetworkPath) -> Void
    }

    /// Creates a monitor; nothing happens until ``start()``.
    ///
    /// - Parameter debounce: how long to wait after an announcement for more before re-reading
    ///   the tables. Default 100 ms.
    public convenience init(debounce: Duration = .milliseconds(100)) {
        self.init(debounce: debounce) {
            (try NetlinkSocket(groups: NetlinkSocket.changeGroups, receiveTimeout: nil), try NetlinkSocket())
        }
    }

    init(debounce: Duration, openSockets: @escaping @Sendable () throws -> (events: NetlinkSocket, dumps: NetlinkSocket)) {
        self.debounce = debounce
        self.openSockets = openSockets
    }

    deinit {
        let (source, timer) = state.withLock { ($0.source, $0.debounceTimer) }
        source?.cancel()
        timer?.cancel()
    }

    /// The path as of the last re-read (``NetworkPath/Status/unknown`` before ``start()``).
    public var currentPath: NetworkPath { state.withLock { $0.path } }

    /// How many times the kernel's tables were read: once at start, then once per debounced burst.
    public var refreshCount: Int { state.withLock { $0.refreshes } }

    /// Whether the monitor is listening to the kernel (started, not cancelled, netlink available).
    public var isMonitoring: Bool { state.withLock { $0.source != nil } }

    /// Starts watching (idempotent; again after ``cancel()``) and reads the tables once before
    /// returning, so ``currentPath`` is meaningful at once. Without netlink permission the path
    /// stays ``NetworkPath/Status/unknown`` and says why.
    public func start() {
        let opening = state.withLock { state -> Int? in
            guard !state.started else { return nil }
            state.started = true
            state.cancelled = false
            return state.generation
        }
        guard let generation = opening else { return }
        let sockets: (events: NetlinkSocket, dumps: NetlinkSocket)
        do {
            sockets = try openSockets()
        } catch {
            publish(.unknown("netlink is not available to this process (\(error)); reachability is still answered by route lookups"))
            return
        }
        let source = DispatchSource.makeReadSource(fileDescriptor: sockets.events.descriptor, queue: queue)
        source.setEventHandler { [weak self] in self?.drainAnnouncements() }
        // The sockets live until the source is cancelled: its handler reads the descriptor.
        source.setCancelHandler { withExtendedLifetime(sockets) {} }
        let kept = state.withLock { state -> Bool in
            guard state.generation == generation, state.source == nil else { return false }
            state.sockets = sockets
            state.source = source
            return true
        }
        guard kept else { return source.cancel() }
        source.resume()
        queue.sync { refresh() }
    }

    /// Stops watching: the streams finish, waiting requests are let go (they run and fail or
    /// succeed on their own), and the sockets are closed. Observers stay registered: a later
    /// ``start()`` (AFNetworking's `startMonitoring` after `stopMonitoring`) watches again and
    /// tells them of changes, so cancelling ``shared`` does not silence it for the process's life.
    public func cancel() {
        let (source, timer, continuations, waiters) = state.withLock { state in
            state.cancelled = true
            state.started = false
            state.generation += 1
            defer {
                state.source = nil
                state.debounceTimer = nil
                state.continuations = [:]
                state.waiters = [:]
                state.sockets = nil
            }
            return (state.source, state.debounceTimer, Array(state.continuations.values), Array(state.waiters.values))
        }
        source?.cancel()
        timer?.cancel()
        for continuation in continuations { continuation.finish() }
        for waiter in waiters { waiter.finish(.unmonitored("the network monitor was cancelled")) }
    }

    /// Whether `host` can be reached now, and over which interface (``HostReachability/of(host:)``).
    public func reachability(of host: String) -> HostReachability { HostReachability.of(host: host) }

    /// Whether the host of `url` can be reached now (``HostReachability/of(_:)``).
    public func reachability(of url: URL) -> HostReachability { HostReachability.of(url) }

    // MARK: - Reading the kernel

    /// Reads every announcement waiting (their content does not matter: any of them means the
    /// tables changed), then schedules one re-read.
    private func drainAnnouncements() {
        guard let events = state.withLock({ $0.sockets?.events }) else { return }
        for _ in 0..<1024 {
            do {
                guard try events.receive(waiting: false) != nil else { break }
            } catch {
                // ENOBUFS: announcements were lost in an overrun; the re-read covers them.
                break
            }
        }
        scheduleRefresh()
    }

    /// Arms (or pushes back) the one-shot debounce timer; a steady stream cannot postpone the
    /// re-read by more than ``longestPostponement``.
    private func scheduleRefresh() {
        let now = ContinuousClock.now
        let (timer, isNew, delay) = state.withLock { state -> ((any DispatchSourceTimer)?, Bool, Duration) in
            guard !state.cancelled else { return (nil, false, .zero) }
            let since = state.pendingSince ?? now
            state.pendingSince = since
            let delay = min(debounce, max(.zero, since + Self.longestPostponement - now))
            if let timer = state.debounceTimer { return (timer, false, delay) }
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.setEventHandler { [weak self] in self?.refresh() }
            state.debounceTimer = timer
            return (timer, true, delay)
        }
        guard let timer else { return }
        timer.schedule(deadline: .now() + delay.seconds)
        if isNew { timer.resume() }
    }

    /// Dumps links, addresses and routes; publishes the path when it changed and re-checks the
    /// waiting hosts either way (a route to one host can change with no change to the path).
    /// Runs on ``queue``.
    func refresh() {
        let (dumps, sequence) = state.withLock { state -> (NetlinkSocket?, UInt32) in
            state.pendingSince = nil
            state.refreshes += 1
            state.sequence &+= 3
            return (state.sockets?.dumps, state.sequence)
        }
        guard let dumps else { return }
        let path: NetworkPath
        do {
            let links = try dumps.dump(type: 18, headerSize: 16, sequence: sequence).compactMap { message -> NetlinkMessage.Link? in
                if case .link(let link, false) = message { return link }
                return nil
            }
            let addresses = try dumps.dump(type: 22, headerSize: 8, sequence: sequence &+ 1).compactMap {
                message -> NetlinkMessage.Address? in
                if case .address(let address, false) = message { return address }
                return nil
            }
            let routes = try dumps.dump(type: 26, headerSize: 12, sequence: sequence &+ 2).compactMap {
                message -> NetlinkMessage.Route? in
                if case .route(let route, false) = message { return route }
                return nil
            }
            path = NetworkPath.derive(links: links, addresses: addresses, routes: routes) { link in
                NetworkInterface.Kind.classify(NetworkInterface.Kind.facts(for: link.name ?? "", hardwareType: link.hardwareType))
            }
        } catch {
            path = .unknown("the kernel's tables could not be read: \(error)")
        }
        publish(path)
        recheckWaiters()
        for handler in state.withLock({ Array($0.refreshHandlers.values) }) { handler() }
    }

    /// Calls `handler` on the monitor's queue after every re-read of the kernel's tables.
    func addRefreshHandler(_ handler: @escaping @Sendable () -> Void) -> UUID {
        let id = UUID()
        state.withLock { $0.refreshHandlers[id] = handler }
        return id
    }

    func removeRefreshHandler(_ id: UUID) {
        _ = state.withLock { $0.refreshHandlers.removeValue(forKey: id) }
    }

    /// Stores `path` and, when it differs from the last one, tells everyone.
    private func publish(_ path: NetworkPath) {
        let listeners = state.withLock { state -> ([Observer], [AsyncStream<NetworkPath>.Continuation])? in
            guard state.path != path, !state.cancelled else { return nil }
            state.path = path
            state.publications += 1
            return (Array(state.observers.values), Array(state.continuations.values))
        }
        guard let (observers, continuations) = listeners else { return }
        for continuation in continuations { continuation.yield(path) }
        for observer in observers {
            if let queue = observer.queue { queue.async { observer.handler(path) } } else { observer.handler(path) }
        }
        NotificationCenter.default.post(
            name: .courierNetworkPathDidChange, object: self, userInfo: [CourierNotificationKey.networkPath: path])
    }
}

extension Notification.Name {
    /// Posted by a ``NetworkMonitor`` when its path changes; `object` is the monitor,
    /// `userInfo[CourierNotificationKey.networkPath]` the new ``NetworkPath``. Posted on the
    /// monitor's own queue (AFNetworking's `AFNetworkingReachabilityDidChangeNotification`).
    public static let courierNetworkPathDidChange = Notification.Name("Courier.networkPathDidChange")
}

extension CourierNotificationKey {
    /// The ``NetworkPath`` of a `courierNetworkPathDidChange` notification.
    public static let networkPath = "Courier.networkPath"
}
