import Foundation

extension PlatformReport {
    /// The network as ``NetworkMonitor`` reads it once, and the route to the report's URL's host.
    public struct Network: Sendable, Codable, Equatable {
        /// ``NetworkPath/Status``'s name: `satisfied`, `unsatisfied` or `unknown`.
        public var status: String
        /// Why the status is unknown (no netlink permission); `nil` otherwise.
        public var unknownReason: String?
        /// Every interface: `eth0 (wired) up carrier 192.0.2.10/24` (``NetworkInterface/description``).
        public var interfaces: [String]
        /// The main table's default routes: `ipv4 default via 192.0.2.1 dev eth0`.
        public var defaultRoutes: [String]
        /// The URL's host, when the report has a URL.
        public var host: String?
        /// ``HostReachability``'s description for it: `reachable via eth0 from 192.0.2.10`, `unreachable`.
        public var hostReachability: String?

        /// Reads the tables once (a monitor started and cancelled) and looks the URL's host up.
        static func current(for url: URL?) -> Network {
            let monitor = NetworkMonitor()
            monitor.start()
            let path = monitor.currentPath
            monitor.cancel()
            let host = url?.host.flatMap { $0.isEmpty ? nil : $0 }
            return Network(
                status: path.status.rawValue, unknownReason: path.unknownReason, interfaces: path.interfaces.map(\.description),
                defaultRoutes: path.defaultRoutes.map(\.description), host: host,
                hostReachability: host.map {
                    HostReachability.of(host: $0).isUnreachable ? "unreachable" : HostReachability.of(host: $0).description
                })
        }
    }
}
