import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Whether the kernel has a route to a host, and through which interface.
public enum HostReachability: Sendable, Equatable, CustomStringConvertible {
    /// There is a route. `interface` is the one the source address belongs to (`nil` when it
    /// could not be named); `source` is the address traffic would leave from.
    case reachable(interface: String?, source: String?)
    /// No route: the kernel answered `ENETUNREACH` (or `EHOSTUNREACH`, or a prohibit route).
    case unreachable
    /// The lookup itself failed (no socket could be made); the reason says why.
    case unknown(String)

    /// True only for ``reachable(interface:source:)``.
    public var isReachable: Bool {
        if case .reachable = self { return true }
        return false
    }

    /// True only for ``unreachable``: an unknown answer never holds a request back.
    public var isUnreachable: Bool { self == .unreachable }

    /// `reachable via eth0 from 192.0.2.10`, `unreachable`, `unknown: …`.
    public var description: String {
        switch self {
        case .reachable(let interface, let source):
            return "reachable" + (interface.map { " via \($0)" } ?? "") + (source.map { " from \($0)" } ?? "")
        case .unreachable: return "unreachable"
        case .unknown(let reason): return "unknown: \(reason)"
        }
    }

    /// The one rule for "is this host reachable" (Docs/Reachability.md, "Per-host reachability").
    ///
    /// - A numeric host (`10.0.0.2`, `[2001:db8::1]`) is looked up in the kernel's routing tables:
    ///   a UDP socket is connected to it (no packet is sent) and `ENETUNREACH` means no route;
    ///   `getsockname` then names the source address, and the interface holding it, which must be
    ///   up with a carrier (the kernel keeps routing to the addresses of an interface set down).
    /// - `localhost` is `127.0.0.1` (or `::1`).
    /// - Any other name is reachable when a route to the world exists (IPv4 or IPv6): Courier
    ///   never resolves a name to decide, because a resolver with no network can wait for
    ///   seconds, and the transfer resolves it anyway.
    ///
    /// Cheap (a socket, a connect, a close; microseconds), so it is asked again on every change.
    public static func of(host: String) -> HostReachability {
        let host = host.lowercased()
        if host == "localhost" || host.hasSuffix(".localhost") {
            let v4 = lookUp([127, 0, 0, 1])
            return v4.isReachable ? v4 : lookUp([UInt8](repeating: 0, count: 15) + [1])
        }
        if let bytes = InternetAddress.bytes(ofNumeric: host) { return lookUp(bytes) }
        // Public anycast resolvers' addresses (1.1.1.1, 2606:4700:4700::1111): global, on no
        // one's own link, so only a route to the world covers them. No packet is sent. (Not the
        // documentation prefixes: test networks, this project's CI among them, use 192.0.2.0/24.)
        let v4 = lookUp([1, 1, 1, 1])
        if v4.isReachable { return v4 }
        let v6 = lookUp([0x26, 0x06, 0x47, 0x00, 0x47, 0x00] + [UInt8](repeating: 0, count: 8) + [0x11, 0x11])
        if v6.isReachable { return v6 }
        if case .unknown = v4 { return v4 }
        return .unreachable
    }

    /// The host of `url`: ``of(host:)``; ``unknown(_:)`` for a URL without one.
    public static func of(_ url: URL) -> HostReachability {
        guard let host = url.host, !host.isEmpty else { return .unknown("the URL has no host") }
        return of(host: host)
    }

    /// The kernel's route lookup for one address (4 or 16 bytes).
    static func lookUp(_ address: [UInt8]) -> HostReachability {
        let isV6 = address.count == 16
        let fd = socket(isV6 ? AF_INET6 : AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else {
            // No IPv6 in this kernel means no route over it.
            if isV6, errno == EAFNOSUPPORT { return .unreachable }
            return .unknown("socket: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var storage = sockaddr_storage()
        let length: socklen_t
        if isV6 {
            var v6 = sockaddr_in6()
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = UInt16(9).bigEndian  // any port: connect on UDP sends nothing
            withUnsafeMutableBytes(of: &v6.sin6_addr) { $0.copyBytes(from: address) }
            withUnsafeMutableBytes(of: &storage) { raw in withUnsafeBytes(of: v6) { raw.copyMemory(from: $0) } }
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        } else {
            var v4 = sockaddr_in()
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = UInt16(9).bigEndian
            withUnsafeMutableBytes(of: &v4.sin_addr) { $0.copyBytes(from: address) }
            withUnsafeMutableBytes(of: &storage) { raw in withUnsafeBytes(of: v4) { raw.copyMemory(from: $0) } }
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
        }
        let connected = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, length) }
        }
        guard connected == 0 else {
            switch errno {
            // ENETUNREACH: no route. EHOSTUNREACH, EACCES/EPERM: an unreachable or prohibit route.
            // EADDRNOTAVAIL, EINVAL: no source address to leave from (the interface has none).
            case ENETUNREACH, EHOSTUNREACH, EACCES, EPERM, EADDRNOTAVAIL, EINVAL: return .unreachable
            default: return .unknown("connect: \(String(cString: strerror(errno)))")
            }
        }
        var local = sockaddr_storage()
        var localLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &localLength) }
        }
        guard named == 0 else { return .reachable(interface: nil, source: nil) }
        let sourceBytes: [UInt8] = withUnsafeBytes(of: &local) { raw in
            isV6 ? Array(raw[8..<24]) : Array(raw[4..<8])  // sin6_addr / sin_addr
        }
        let holder = interface(holding: sourceBytes)
        // The kernel keeps the local routes of an interface set down (lo after `ip link set lo
        // down` still "routes" 127.0.0.1), but nothing leaves through it: no route in practice.
        if let holder, holder.flags & UInt32(IFF_UP) == 0 || holder.flags & UInt32(IFF_RUNNING) == 0 {
            return .unreachable
        }
        return .reachable(interface: holder?.name, source: InternetAddress.string(sourceBytes))
    }

    /// The interface that holds `address`, with its flags (`getifaddrs`); `nil` when none does or it fails.
    static func interface(holding address: [UInt8]) -> (name: String, flags: UInt32)? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return nil }
        defer { freeifaddrs(list) }
        var cursor: UnsafeMutablePointer<ifaddrs>? = first
        while let entry = cursor {
            defer { cursor = entry.pointee.ifa_next }
            guard let socketAddress = entry.pointee.ifa_addr, let name = entry.pointee.ifa_name else { continue }
            let family = Int32(socketAddress.pointee.sa_family)
            let bytes: [UInt8]
            if family == AF_INET, address.count == 4 {
                bytes = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                    withUnsafeBytes(of: pointer.pointee.sin_addr) { Array($0) }
                }
            } else if family == AF_INET6, address.count == 16 {
                bytes = socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                    withUnsafeBytes(of: pointer.pointee.sin6_addr) { Array($0) }
                }
            } else {
                continue
            }
            if bytes == address { return (String(cString: name), entry.pointee.ifa_flags) }
        }
        return nil
    }
}
