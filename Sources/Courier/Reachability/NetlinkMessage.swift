import Foundation

/// One rtnetlink message, parsed with bounds checks from bytes the kernel (or anyone able to
/// send to the socket) wrote. A pure value: nothing here touches a socket, so the parser is
/// unit-tested on truncated, oversized and malformed input (`NetlinkParserTests`).
///
/// Layouts (linux/netlink.h, linux/rtnetlink.h, linux/if_link.h, linux/if_addr.h): every
/// integer is in host byte order (read as little-endian: x86-64 and arm64); messages and attributes are padded to 4 bytes.
enum NetlinkMessage: Equatable, Sendable {
    /// `RTM_NEWLINK` / `RTM_DELLINK`.
    case link(Link, removed: Bool)
    /// `RTM_NEWADDR` / `RTM_DELADDR`.
    case address(Address, removed: Bool)
    /// `RTM_NEWROUTE` / `RTM_DELROUTE`.
    case route(Route, removed: Bool)
    /// `NLMSG_DONE`: the end of a dump.
    case done
    /// `NLMSG_ERROR`: `code` is 0 for an acknowledgement, else a negative errno.
    case error(code: Int32)
    /// `NLMSG_OVERRUN`, or a body too short for its type: nothing in it can be trusted.
    case malformed(type: UInt16)
    /// Any other type (`NLMSG_NOOP`, neighbour tables…): ignored.
    case other(type: UInt16)

    /// An interface (`struct ifinfomsg` and its attributes).
    struct Link: Equatable, Sendable {
        var index: Int32
        /// `ARPHRD_*` (1 Ethernet, 772 loopback, 65534 none).
        var hardwareType: UInt16
        /// `IFF_*` flags (`IFF_UP` 0x1, `IFF_RUNNING` 0x40, `IFF_LOOPBACK` 0x8).
        var flags: UInt32
        /// `IFLA_IFNAME`, when present and valid UTF-8.
        var name: String?
    }

    /// An address (`struct ifaddrmsg`: family, prefix length, flags, scope, index).
    struct Address: Equatable, Sendable {
        var family: UInt8
        var prefixLength: UInt8
        var scope: UInt8
        var index: UInt32
        /// `IFA_LOCAL` when present (point-to-point links), else `IFA_ADDRESS`: 4 or 16 bytes.
        var bytes: [UInt8]?
    }

    /// A route (`struct rtmsg` and its attributes).
    struct Route: Equatable, Sendable {
        var family: UInt8
        /// 0 for a default route.
        var destinationLength: UInt8
        /// `RT_TABLE_*`; `RTA_TABLE` overrides the 8-bit field when present.
        var table: UInt32
        /// `RTN_*` (1 unicast, 2 local, 6 prohibit, 7 unreachable, 8 blackhole).
        var type: UInt8
        var destination: [UInt8]?
        var gateway: [UInt8]?
        /// `RTA_OIF`: the interface index the route goes out of.
        var outputInterface: Int32?
    }

    // Message types (linux/netlink.h, linux/rtnetlink.h).
    static let noop: UInt16 = 1, errorType: UInt16 = 2, doneType: UInt16 = 3, overrun: UInt16 = 4
    static let newLink: UInt16 = 16, delLink: UInt16 = 17, newAddress: UInt16 = 20, delAddress: UInt16 = 21
    static let newRoute: UInt16 = 24, delRoute: UInt16 = 25
    static let headerSize = 16

    /// Every message in `bytes` (one `recv`), in order. Stops at the first header that is too
    /// short or claims more bytes than remain — a truncated or hostile datagram yields what came
    /// before it and nothing else. Each step consumes at least a header, so it always ends.
    static func parse(_ bytes: [UInt8]) -> [NetlinkMessage] {
        var messages: [NetlinkMessage] = []
        var offset = 0
        while bytes.count - offset >= headerSize {
            let length = Int(readUInt32(bytes, offset))
            let type = readUInt16(bytes, offset + 4)
            guard length >= headerSize, length <= bytes.count - offset else { break }
            let body = bytes[(offset + headerSize)..<(offset + length)]
            messages.append(message(type: type, body: body))
            // Aligned; the last message may omit its padding.
            offset += min(align(length), bytes.count - offset)
        }
        return messages
    }

    /// The sequence number of each message header in `bytes` (the same walk as ``parse(_:)``).
    static func sequenceNumbers(_ bytes: [UInt8]) -> [UInt32] {
        var numbers: [UInt32] = []
        var offset = 0
        while bytes.count - offset >= headerSize {
            let length = Int(readUInt32(bytes, offset))
            guard length >= headerSize, length <= bytes.count - offset else { break }
            numbers.append(readUInt32(bytes, offset + 8))
            offset += min(align(length), bytes.count - offset)
        }
        return numbers
    }

    static func message(type: UInt16, body: ArraySlice<UInt8>) -> NetlinkMessage {
        switch type {
        case doneType: return .done
        case errorType:
            guard body.count >= 4 else { return .malformed(type: type) }
            return .error(code: Int32(bitPattern: readUInt32(body, body.startIndex)))
        case overrun: return .malformed(type: type)
        case newLink, delLink:
            guard let link = parseLink(body) else { return .malformed(type: type) }
            return .link(link, removed: type == delLink)
        case newAddress, delAddress:
            guard let address = parseAddress(body) else { return .malformed(type: type) }
            return .address(address, removed: type == delAddress)
        case newRoute, delRoute:
            guard let route = parseRoute(body) else { return .malformed(type: type) }
            return .route(route, removed: type == delRoute)
        default: return .other(type: type)
        }
    }

    /// `struct ifinfomsg` is 16 bytes: family, pad, type (u16), index (i32), flags, change.
    static func parseLink(_ body: ArraySlice<UInt8>) -> Link? {
        guard body.count >= 16 else { return nil }
        let start = body.startIndex
        var link = Link(
            index: Int32(bitPattern: readUInt32(body, start + 4)), hardwareType: readUInt16(body, start + 2),
            flags: readUInt32(body, start + 8), name: nil)
        for (type, value) in attributes(body.dropFirst(16)) where type == 3 /* IFLA_IFNAME */ {
            let name = value.prefix { $0 != 0 }
            link.name = String(validating: name, as: UTF8.self)
        }
        return link
    }

    /// `struct ifaddrmsg` is 8 bytes: family, prefix length, flags, scope, index (u32).
    static func parseAddress(_ body: ArraySlice<UInt8>) -> Address? {
        guard body.count >= 8 else { return nil }
        let start = body.startIndex
        var address = Address(
            family: body[start], prefixLength: body[start + 1], scope: body[start + 3], index: readUInt32(body, start + 4),
            bytes: nil)
        var local: [UInt8]?
        for (type, value) in attributes(body.dropFirst(8)) where value.count == 4 || value.count == 16 {
            if type == 1 /* IFA_ADDRESS */ { address.bytes = Array(value) }
            if type == 2 /* IFA_LOCAL */ { local = Array(value) }
        }
        if let local { address.bytes = local }
        return address
    }

    /// `struct rtmsg` is 12 bytes: family, dst_len, src_len, tos, table, protocol, scope, type, flags (u32).
    static func parseRoute(_ body: ArraySlice<UInt8>) -> Route? {
        guard body.count >= 12 else { return nil }
        let start = body.startIndex
        var route = Route(
            family: body[start], destinationLength: body[start + 1], table: UInt32(body[start + 4]), type: body[start + 7])
        for (type, value) in attributes(body.dropFirst(12)) {
            switch type {
            case 1 where value.count == 4 || value.count == 16: route.destination = Array(value)  // RTA_DST
            case 4 where value.count == 4: route.outputInterface = Int32(bitPattern: readUInt32(value, value.startIndex))  // RTA_OIF
            case 5 where value.count == 4 || value.count == 16: route.gateway = Array(value)  // RTA_GATEWAY
            case 15 where value.count == 4: route.table = readUInt32(value, value.startIndex)  // RTA_TABLE
            default: break
            }
        }
        return route
    }

    /// The attributes (`struct rtattr`: length u16, type u16, value) in `bytes`. Stops at the first
    /// one shorter than its header or longer than what remains; the nested-attribute bit and the
    /// byte-order bit are masked off the type.
    static func attributes(_ bytes: ArraySlice<UInt8>) -> [(type: UInt16, value: ArraySlice<UInt8>)] {
        var found: [(type: UInt16, value: ArraySlice<UInt8>)] = []
        var offset = bytes.startIndex
        while bytes.endIndex - offset >= 4 {
            let length = Int(readUInt16(bytes, offset))
            let type = readUInt16(bytes, offset + 2) & 0x3FFF
            guard length >= 4, length <= bytes.endIndex - offset else { break }
            found.append((type, bytes[(offset + 4)..<(offset + length)]))
            offset += min(align(length), bytes.endIndex - offset)
        }
        return found
    }

    static func align(_ length: Int) -> Int { (length + 3) & ~3 }

    static func readUInt16<C: RandomAccessCollection<UInt8>>(_ bytes: C, _ offset: C.Index) -> UInt16 where C.Index == Int {
        UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    static func readUInt32<C: RandomAccessCollection<UInt8>>(_ bytes: C, _ offset: C.Index) -> UInt32 where C.Index == Int {
        UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 3]) << 24
    }
}
