import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A thin wrapper over an `AF_NETLINK` / `NETLINK_ROUTE` socket: open (optionally joined to
/// multicast groups), ask for a dump, read. The socket belongs to the network namespace of the
/// thread that opened it, for its whole life. Immutable (one descriptor, closed on deinit).
final class NetlinkSocket: Sendable {
    let descriptor: Int32

    /// `RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_IFADDR | RTMGRP_IPV6_ROUTE`.
    static let changeGroups: UInt32 = 0x1 | 0x10 | 0x40 | 0x100 | 0x400
    static let family: Int32 = 16  // AF_NETLINK
    static let receiveBufferSize = 64 * 1024

    /// A failure to open or use the socket, with the call and `errno` that failed.
    struct Failure: Error, CustomStringConvertible {
        let call: String
        let code: Int32
        var description: String { "\(call): \(String(cString: strerror(code))) (errno \(code))" }
    }

    /// Opens a route socket; with `groups`, it receives those change announcements. A socket for
    /// dumps gets a receive timeout so a kernel that never answers cannot hold the caller.
    init(groups: UInt32 = 0, receiveTimeout: Duration? = .seconds(2)) throws(Failure) {
        let fd = socket(Self.family, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0 /* NETLINK_ROUTE */)
        guard fd >= 0 else { throw Failure(call: "socket(AF_NETLINK)", code: errno) }
        // struct sockaddr_nl { sa_family_t nl_family; unsigned short nl_pad; u32 nl_pid; u32 nl_groups; }
        var address = [UInt8](repeating: 0, count: 12)
        address[0] = UInt8(Self.family & 0xFF)
        withUnsafeBytes(of: groups.littleEndian) { address.replaceSubrange(8..<12, with: $0) }
        let bound = address.withUnsafeBytes { raw in
            bind(fd, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
        }
        guard bound == 0 else {
            let code = errno
            close(fd)
            throw Failure(call: "bind(AF_NETLINK)", code: code)
        }
        if let receiveTimeout {
            let micros = Int(receiveTimeout.components.seconds) * 1_000_000 + Int(receiveTimeout.components.attoseconds / 1_000_000_000_000)
            var value = timeval(tv_sec: micros / 1_000_000, tv_usec: micros % 1_000_000)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
        }
        var size = Int32(1 << 20)  // a burst of events while the reader is busy must not overrun
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        descriptor = fd
    }

    deinit { close(descriptor) }

    /// Sends a dump request of `type` (`RTM_GETLINK` 18, `RTM_GETADDR` 22, `RTM_GETROUTE` 26)
    /// with a zeroed family header of `headerSize` bytes.
    func requestDump(type: UInt16, headerSize: Int, sequence: UInt32) throws(Failure) {
        let length = NetlinkMessage.headerSize + headerSize
        var bytes = [UInt8](repeating: 0, count: length)
        withUnsafeBytes(of: UInt32(length).littleEndian) { bytes.replaceSubrange(0..<4, with: $0) }
        withUnsafeBytes(of: type.littleEndian) { bytes.replaceSubrange(4..<6, with: $0) }
        withUnsafeBytes(of: UInt16(0x301).littleEndian) { bytes.replaceSubrange(6..<8, with: $0) }  // NLM_F_REQUEST | NLM_F_DUMP
        withUnsafeBytes(of: sequence.littleEndian) { bytes.replaceSubrange(8..<12, with: $0) }
        let sent = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, 0) }
        guard sent == length else { throw Failure(call: "send(AF_NETLINK)", code: sent < 0 ? errno : EIO) }
    }

    /// One datagram, or `nil` when nothing is waiting (`waiting: false`) or the wait timed out.
    /// A datagram longer than the buffer is dropped (never read as if whole).
    func receive(waiting: Bool) throws(Failure) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: Self.receiveBufferSize)
        while true {
            let count = buffer.withUnsafeMutableBytes {
                recv(descriptor, $0.baseAddress, $0.count, (waiting ? 0 : Int32(MSG_DONTWAIT)) | Int32(MSG_TRUNC))
            }
            if count < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { return nil }
                throw Failure(call: "recv(AF_NETLINK)", code: errno)
            }
            guard count <= buffer.count else { return [] }
            return Array(buffer.prefix(count))
        }
    }

    /// Everything one dump answers, until `NLMSG_DONE`; bounded in datagrams and by the timeout.
    func dump(type: UInt16, headerSize: Int, sequence: UInt32) throws(Failure) -> [NetlinkMessage] {
        try requestDump(type: type, headerSize: headerSize, sequence: sequence)
        var messages: [NetlinkMessage] = []
        for _ in 0..<10_000 {
            guard let datagram = try receive(waiting: true) else { throw Failure(call: "recv(AF_NETLINK) dump", code: ETIMEDOUT) }
            // Answers to an earlier, abandoned dump (a timeout) carry another sequence number.
            guard NetlinkMessage.sequenceNumbers(datagram).allSatisfy({ $0 == sequence }) else { continue }
            for message in NetlinkMessage.parse(datagram) {
                switch message {
                case .done: return messages
                case .error(let code) where code != 0: throw Failure(call: "netlink dump", code: -code)
                default: messages.append(message)
                }
            }
        }
        throw Failure(call: "netlink dump", code: EOVERFLOW)
    }
}
