import Foundation

extension NetworkMonitor {
    /// The current path, then every change, until the monitor is cancelled or the stream is
    /// dropped. Starts the monitor if needed. Keeps the newest `limit` paths a slow reader missed.
    public func paths(bufferingNewest limit: Int = 16) -> AsyncStream<NetworkPath> {
        start()
        let id = UUID()
        let (stream, continuation) = AsyncStream<NetworkPath>.makeStream(bufferingPolicy: .bufferingNewest(max(1, limit)))
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.continuations.removeValue(forKey: id) }
        }
        let registered = state.withLock { state -> Bool in
            guard !state.cancelled else { return false }
            state.continuations[id] = continuation
            continuation.yield(state.path)
            return true
        }
        if !registered { continuation.finish() }
        return stream
    }

    /// Calls `handler` with the current path, then with every change of path (AFNetworking's
    /// status block, which reports the current status first), on `queue` — or, when `queue` is
    /// `nil`, on the monitor's own serial queue (keep it short there, and do not call ``start()``
    /// from it). Starts the monitor if needed. Returns a token for ``removeObserver(_:)``.
    @discardableResult
    public func addObserver(queue: DispatchQueue? = nil, _ handler: @escaping @Sendable (NetworkPath) -> Void) -> UUID {
        let id = UUID()
        let observer = Observer(queue: queue, handler: handler)
        let seen = state.withLock { state -> Int in
            state.observers[id] = observer
            return state.publications
        }
        start()
        // On the monitor's queue, in order with the changes it publishes; skipped when a change
        // published since the observer was added told it already.
        self.queue.async { [weak self] in
            guard let path = self?.state.withLock({ $0.observers[id] != nil && $0.publications == seen ? $0.path : nil }) else {
                return
            }
            if let queue = observer.queue { queue.async { observer.handler(path) } } else { observer.handler(path) }
        }
        return id
    }

    /// Stops calling the handler registered under `token`.
    public func removeObserver(_ token: UUID) {
        _ = state.withLock { $0.observers.removeValue(forKey: token) }
    }

    /// Waits until `host` is reachable — now, or after a change the monitor sees — or until
    /// `timeout`: the whole of the library's waiting for connectivity. `completion` runs once, on
    /// the monitor's queue; `waiting` runs first when the host has no route and the wait begins.
    /// No polling: the host is checked now and after each re-read.
    func waitForRoute(
        to host: String, timeout: Duration, waiting: @escaping @Sendable () -> Void = {},
        completion: @escaping @Sendable (RouteWait) -> Void
    ) {
        start()
        queue.async { [self] in
            let answer = HostReachability.of(host: host)
            guard answer.isUnreachable else { return completion(.reachable(answer, waited: false)) }
            let monitoring = state.withLock { $0.source != nil }
            guard monitoring else {
                // Nothing would wake the wait: let the request go and fail on its own.
                return completion(.unmonitored(currentPath.unknownReason ?? "the network monitor is not running"))
            }
            let id = UUID()
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.setEventHandler { [weak self] in self?.endWait(id, with: .timedOut) }
            let waiter = Waiter(host: host, timer: timer, completion: completion)
            let kept = state.withLock { state -> Bool in
                guard !state.cancelled else { return false }
                state.waiters[id] = waiter
                return true
            }
            guard kept else { return completion(.unmonitored("the network monitor was cancelled")) }
            waiting()
            timer.schedule(deadline: .now() + timeout.seconds)
            timer.resume()
        }
    }

    /// Removes the waiter `id` and finishes it with `outcome`.
    private func endWait(_ id: UUID, with outcome: RouteWait) {
        state.withLock { $0.waiters.removeValue(forKey: id) }?.finish(outcome)
    }

    /// Asks again for every waiting host; the ones now reachable go. Runs on the monitor's queue.
    func recheckWaiters() {
        let waiting = state.withLock { $0.waiters }
        for (id, waiter) in waiting {
            let answer = HostReachability.of(host: waiter.host)
            if !answer.isUnreachable { endWait(id, with: .reachable(answer, waited: true)) }
        }
    }

    /// How a wait for a route ended.
    enum RouteWait: Sendable, Equatable {
        /// The host is reachable (or its lookup could not tell); `waited` is false when it was at once.
        case reachable(HostReachability, waited: Bool)
        /// Still unreachable when the time was up.
        case timedOut
        /// The monitor cannot watch (no netlink permission, cancelled): nothing can end a wait.
        case unmonitored(String)
    }

    /// A host a request waits for.
    struct Waiter {
        let host: String
        let timer: any DispatchSourceTimer
        let completion: @Sendable (RouteWait) -> Void

        func finish(_ outcome: RouteWait) {
            timer.cancel()
            completion(outcome)
        }
    }
}
