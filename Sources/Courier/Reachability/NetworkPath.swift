import Foundation

/// What the network looks like from this process: whether there is a way out, over which
/// interfaces, and every interface the kernel reports. ``NetworkMonitor`` publishes one on
/// every change (Docs/Reachability.md).
public struct NetworkPath: Sendable, Equatable, CustomStringConvertible {
    /// Whether the path can reach beyond this machine.
    public enum Status: String, Sendable, Equatable, CaseIterable {
        /// Not known: the monitor has not started, or cannot read the kernel's tables (no netlink
        /// permission); ``NetworkPath/unknownReason`` says why.
        case unknown
        /// No default route goes out of an interface that is up with a carrier.
        case unsatisfied
        /// At least one default route (IPv4 or IPv6) goes out of an interface that is up with a carrier.
        case satisfied
    }

    /// Whether the path can reach beyond this machine.
    public var status: Status
    /// Every interface, by index.
    public var interfaces: [NetworkInterface]
    /// The default routes of the main table, usable or not.
    public var defaultRoutes: [DefaultRoute]
    /// Why the status is ``Status/unknown``; `nil` otherwise.
    public var unknownReason: String?

    /// Creates a path; ``NetworkMonitor`` makes these for you.
    public init(status: Status, interfaces: [NetworkInterface], defaultRoutes: [DefaultRoute], unknownReason: String? = nil) {
        self.status = status
        self.interfaces = interfaces
        self.defaultRoutes = defaultRoutes
        self.unknownReason = unknownReason
    }

    /// The path before anything is known.
    static func unknown(_ reason: String) -> NetworkPath {
        NetworkPath(status: .unknown, interfaces: [], defaultRoutes: [], unknownReason: reason)
    }

    /// The interfaces a usable default route goes out of: the ones traffic to the world uses.
    public var interfacesInUse: [NetworkInterface] {
        let names = Set(defaultRoutes.filter(\.isUsable).compactMap(\.interface))
        return interfaces.filter { names.contains($0.name) }
    }

    /// Whether an interface in use is of `kind` (NWPath's `usesInterfaceType`).
    public func usesInterface(of kind: NetworkInterface.Kind) -> Bool {
        interfacesInUse.contains { $0.kind == kind }
    }

    /// `satisfied via eth0 (wired)`, `unsatisfied`, `unknown: …`.
    public var description: String {
        switch status {
        case .unknown: return "unknown" + (unknownReason.map { ": \($0)" } ?? "")
        case .unsatisfied: return "unsatisfied"
        case .satisfied:
            let used = interfacesInUse.map { "\($0.name) (\($0.kind.rawValue))" }
            return "satisfied via " + used.joined(separator: ", ")
        }
    }

    /// The path the kernel's tables describe: the one rule for the status.
    static func derive(
        links: [NetlinkMessage.Link], addresses: [NetlinkMessage.Address], routes: [NetlinkMessage.Route],
        kind: (NetlinkMessage.Link) -> NetworkInterface.Kind
    ) -> NetworkPath {
        let interfaces = links.sorted { $0.index < $1.index }.map { link in
            NetworkInterface(
                name: link.name ?? "if\(link.index)", index: Int(link.index), kind: kind(link),
                isUp: link.flags & 0x1 != 0, hasCarrier: link.flags & 0x40 != 0,
                addresses: addresses.filter { Int32(bitPattern: $0.index) == link.index }.compactMap { address in
                    address.bytes.flatMap(InternetAddress.string).map { "\($0)/\(address.prefixLength)" }
                })
        }
        let byIndex = Dictionary(interfaces.map { ($0.index, $0) }, uniquingKeysWith: { first, _ in first })
        // The main table (254) only: policy-routing tables and the local table are not "the way out".
        let defaults = routes.filter { $0.destinationLength == 0 && $0.table == 254 && ($0.family == 2 || $0.family == 10) }
        let defaultRoutes = defaults.map { route -> DefaultRoute in
            let interface = route.outputInterface.flatMap { byIndex[Int($0)] }
            return DefaultRoute(
                family: route.family == 2 ? .ipv4 : .ipv6, interface: interface?.name,
                gateway: route.gateway.flatMap(InternetAddress.string),
                isUsable: route.type == 1 && interface.map { $0.isUp && $0.hasCarrier } == true)
        }
        let status: Status = defaultRoutes.contains(where: \.isUsable) ? .satisfied : .unsatisfied
        return NetworkPath(status: status, interfaces: interfaces, defaultRoutes: defaultRoutes)
    }
}

/// One network interface, as the kernel and `/sys/class/net/<name>/` describe it.
public struct NetworkInterface: Sendable, Equatable, CustomStringConvertible {
    /// What kind of link it is (from `/sys/class/net/<name>/`).
    public enum Kind: String, Sendable, Equatable, CaseIterable {
        /// Ethernet on a physical device.
        case wired
        /// Wi-Fi (the device has a `wireless` or `phy80211` entry).
        case wireless
        /// A cellular modem (`DEVTYPE=wwan`).
        case mobile
        /// The loopback interface.
        case loopback
        /// A software device: veth, bridge, tunnel, VPN (under `/sys/devices/virtual/`).
        case virtual
        /// Anything else, or a device whose kind could not be read.
        case other
    }

    /// The interface's name (`eth0`).
    public var name: String
    /// The kernel's interface index.
    public var index: Int
    /// What kind of link it is.
    public var kind: Kind
    /// Administratively up (`IFF_UP`).
    public var isUp: Bool
    /// Has a carrier (`IFF_RUNNING`): a cable, an associated access point, a veth peer that is up.
    public var hasCarrier: Bool
    /// Its addresses with prefix length (`192.0.2.10/24`, `fe80::1/64`).
    public var addresses: [String]

    /// Creates an interface record; ``NetworkMonitor`` makes these for you.
    public init(name: String, index: Int, kind: Kind, isUp: Bool, hasCarrier: Bool, addresses: [String]) {
        self.name = name
        self.index = index
        self.kind = kind
        self.isUp = isUp
        self.hasCarrier = hasCarrier
        self.addresses = addresses
    }

    /// `eth0 (wired) up carrier 192.0.2.10/24`.
    public var description: String {
        var words = ["\(name) (\(kind.rawValue))", isUp ? "up" : "down"]
        if isUp { words.append(hasCarrier ? "carrier" : "no-carrier") }
        return (words + addresses).joined(separator: " ")
    }
}

/// A default route of the main table.
public struct DefaultRoute: Sendable, Equatable, CustomStringConvertible {
    /// The address family the route is for.
    public enum Family: String, Sendable, Equatable {
        /// IPv4 (`0.0.0.0/0`).
        case ipv4
        /// IPv6 (`::/0`).
        case ipv6
    }

    /// IPv4 or IPv6.
    public var family: Family
    /// The interface it goes out of, when it names one.
    public var interface: String?
    /// The next hop, when there is one.
    public var gateway: String?
    /// A unicast route whose interface is up with a carrier.
    public var isUsable: Bool

    /// Creates a route record; ``NetworkMonitor`` makes these for you.
    public init(family: Family, interface: String?, gateway: String?, isUsable: Bool) {
        self.family = family
        self.interface = interface
        self.gateway = gateway
        self.isUsable = isUsable
    }

    /// `ipv4 default via 192.0.2.1 dev eth0`.
    public var description: String {
        var text = "\(family.rawValue) default"
        if let gateway { text += " via \(gateway)" }
        if let interface { text += " dev \(interface)" }
        return text + (isUsable ? "" : " (unusable)")
    }
}
