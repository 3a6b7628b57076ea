import Foundation

/// Pausing offline (``DownloadQueue/Configuration/pausesWhileOffline``): the hosts with no route
/// are held back in ``DownloadQueue/QueueState/unreachableHosts``, which scheduling skips; the
/// set is worked out again after every re-read of the kernel's tables by the monitor, and after
/// a download failed with `networkUnreachable`. No timer: only the kernel's announcements wake it.
extension DownloadQueue {
    /// The monitor the queue listens to: the configuration's, else the shared one.
    var networkMonitor: NetworkMonitor { configuration.networkMonitor ?? .shared }

    /// Registers with the monitor (starting it) and works the set out once before anything starts.
    func watchConnectivity() {
        networkMonitor.start()
        let token = networkMonitor.addRefreshHandler { [weak self] in self?.recheckHosts() }
        connectivityWatch.withLock { $0 = token }
        let unreachable = Self.unreachableHosts(among: state.withLock { Self.heldHosts($0) })
        state.withLock { $0.unreachableHosts = unreachable }
    }

    /// Stops listening to the monitor (the queue stopped).
    func unwatchConnectivity() {
        guard
            let token = connectivityWatch.withLock({ state -> UUID? in
                defer { state = nil }; return state
            })
        else { return }
        networkMonitor.removeRefreshHandler(token)
    }

    /// Asks the routing table about every host with a queued item, then fills the slots freed.
    func recheckHosts() {
        let hosts = state.withLock { Self.heldHosts($0) }
        let unreachable = Self.unreachableHosts(among: hosts)
        commit { state in
            guard state.unreachableHosts != unreachable else { return }
            state.unreachableHosts = unreachable
            scheduleLocked(&state)
        }
    }

    /// The host key and host name of every queued item, and of every host held back already.
    static func heldHosts(_ state: QueueState) -> [String: String] {
        var hosts: [String: String] = [:]
        for item in state.items.values where item.state == .queued { hosts[item.hostKey] = item.url.host ?? "" }
        return hosts
    }

    /// The host keys of `urls` with no route.
    static func unreachableHosts(of urls: [URL]) -> Set<String> {
        unreachableHosts(among: Dictionary(urls.map { (Item.hostKey(of: $0), $0.host ?? "") }, uniquingKeysWith: { first, _ in first }))
    }

    /// The keys of `hosts` (key → host name) with no route (``HostReachability/of(host:)``).
    static func unreachableHosts(among hosts: [String: String]) -> Set<String> {
        var names: [String: Bool] = [:]
        var unreachable: Set<String> = []
        for (key, host) in hosts {
            let isUnreachable = names[host] ?? HostReachability.of(host: host).isUnreachable
            names[host] = isUnreachable
            if isUnreachable { unreachable.insert(key) }
        }
        return unreachable
    }
}
