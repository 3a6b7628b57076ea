import XCTest
@testable import Courier

/// The rtnetlink parser on well-formed, truncated, oversized and malformed input: it never
/// traps, never loops, and never reads a byte beyond what it was given.
final class NetlinkParserTests: XCTestCase {
    // MARK: - Builders (little-endian, as the kernel writes them on x86-64 and arm64)

    private func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
    private func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8((value >> (8 * $0)) & 0xFF) } }

    private func attribute(_ type: UInt16, _ value: [UInt8]) -> [UInt8] {
        let bytes = le16(UInt16(4 + value.count)) + le16(type) + value
        return bytes + [UInt8](repeating: 0, count: (4 - bytes.count % 4) % 4)
    }

    private func message(_ type: UInt16, _ body: [UInt8], length: UInt32? = nil, sequence: UInt32 = 7) -> [UInt8] {
        let bytes = le32(length ?? UInt32(16 + body.count)) + le16(type) + le16(0) + le32(sequence) + le32(0) + body
        return bytes + [UInt8](repeating: 0, count: (4 - bytes.count % 4) % 4)
    }

    private func link(index: Int32, flags: UInt32, name: String) -> [UInt8] {
        [0, 0] + le16(1) + le32(UInt32(bitPattern: index)) + le32(flags) + le32(0) + attribute(3, Array(name.utf8) + [0])
    }

    private func route(destinationLength: UInt8, gateway: [UInt8]?, outputInterface: UInt32?) -> [UInt8] {
        var body: [UInt8] = [2, destinationLength, 0, 0, 254, 3, 0, 1] + le32(0)
        if let gateway { body += attribute(5, gateway) }
        if let outputInterface { body += attribute(4, le32(outputInterface)) }
        return body
    }

    // MARK: - Well-formed

    func testALinkAnAddressAndARouteInOneDatagramAreAllRead() {
        // Given one datagram with a link, an address and a default route, then NLMSG_DONE
        let address = [UInt8(2), 24, 0, 0] + le32(2) + attribute(1, [10, 77, 0, 1])
        let datagram =
            message(16, link(index: 2, flags: 0x41 | 0x1000, name: "eth0")) + message(20, address)
            + message(24, route(destinationLength: 0, gateway: [10, 77, 0, 2], outputInterface: 2)) + message(3, le32(0))

        // When it is parsed
        let messages = NetlinkMessage.parse(datagram)

        // Then each is what was sent, in order
        XCTAssertEqual(messages.count, 4)
        XCTAssertEqual(messages[0], .link(.init(index: 2, hardwareType: 1, flags: 0x1041, name: "eth0"), removed: false))
        XCTAssertEqual(
            messages[1], .address(.init(family: 2, prefixLength: 24, scope: 0, index: 2, bytes: [10, 77, 0, 1]), removed: false))
        XCTAssertEqual(
            messages[2],
            .route(
                .init(family: 2, destinationLength: 0, table: 254, type: 1, destination: nil, gateway: [10, 77, 0, 2], outputInterface: 2),
                removed: false))
        XCTAssertEqual(messages[3], .done)
    }

    func testRemovalsAndErrorsAreToldApart() {
        let datagram = message(17, link(index: 3, flags: 0, name: "wlan0")) + message(2, le32(UInt32(bitPattern: -13)))
        XCTAssertEqual(
            NetlinkMessage.parse(datagram),
            [
                .link(.init(index: 3, hardwareType: 1, flags: 0, name: "wlan0"), removed: true), .error(code: -13),
            ])
    }

    // MARK: - Truncated and oversized

    func testEveryTruncationOfAValidDatagramParsesWithoutTrapping() {
        // Given a valid datagram of three messages
        let datagram =
            message(16, link(index: 1, flags: 0x49, name: "lo"))
            + message(24, route(destinationLength: 0, gateway: [1, 2, 3, 4], outputInterface: 1))
            + message(3, le32(0))

        // When every prefix of it is parsed, Then none traps, and a message is read only when whole
        for cut in 0...datagram.count {
            let messages = NetlinkMessage.parse(Array(datagram.prefix(cut)))
            XCTAssertLessThanOrEqual(messages.count, 3)
            if cut < 16 + link(index: 1, flags: 0x49, name: "lo").count { XCTAssertTrue(messages.isEmpty, "cut at \(cut)") }
        }
    }

    func testALengthBeyondTheDatagramStopsTheWalk() {
        // Given a header that claims 4096 bytes in a 40-byte datagram, after one good message
        let good = message(3, le32(0))
        let hostile = message(16, [UInt8](repeating: 0xFF, count: 24), length: 4096)

        // Then the good message is read and the hostile one is not
        XCTAssertEqual(NetlinkMessage.parse(good + hostile), [.done])
    }

    func testALengthShorterThanAHeaderStopsTheWalkInsteadOfLooping() {
        // A length of 0 would never advance; 15 is shorter than the header itself.
        for length: UInt32 in [0, 1, 4, 15] {
            XCTAssertEqual(NetlinkMessage.parse(message(16, [], length: length) + message(3, le32(0))), [], "length \(length)")
        }
    }

    func testAHugeLengthDoesNotOverflow() {
        XCTAssertEqual(NetlinkMessage.parse(message(16, link(index: 1, flags: 0, name: "x"), length: UInt32.max)), [])
    }

    // MARK: - Wrong types and malformed bodies

    func testABodyTooShortForItsTypeIsMalformedNotRead() {
        XCTAssertEqual(NetlinkMessage.parse(message(16, [1, 2, 3])), [.malformed(type: 16)])
        XCTAssertEqual(NetlinkMessage.parse(message(20, [2, 24])), [.malformed(type: 20)])
        XCTAssertEqual(NetlinkMessage.parse(message(24, [2])), [.malformed(type: 24)])
        XCTAssertEqual(NetlinkMessage.parse(message(2, [1])), [.malformed(type: 2)])
        XCTAssertEqual(NetlinkMessage.parse(message(4, [])), [.malformed(type: 4)])
    }

    func testUnknownTypesAreSkippedAndTheWalkGoesOn() {
        XCTAssertEqual(
            NetlinkMessage.parse(message(28, [1, 2, 3, 4]) + message(1, []) + message(3, le32(0))),
            [
                .other(type: 28), .other(type: 1), .done,
            ])
    }

    func testAttributesWithBadLengthsEndTheAttributesNotTheMessage() {
        // Given a link whose name attribute claims more bytes than the message has, or fewer than its header
        let header: [UInt8] = [0, 0] + le16(1) + le32(5) + le32(1) + le32(0)
        for badAttribute in [le16(200) + le16(3) + [65, 66], le16(2) + le16(3), le16(0) + le16(3) + [0, 0, 0, 0]] {
            // When parsed, Then the link is read without a name
            XCTAssertEqual(
                NetlinkMessage.parse(message(16, header + badAttribute)),
                [.link(.init(index: 5, hardwareType: 1, flags: 1, name: nil), removed: false)])
        }
    }

    func testAddressesAndGatewaysOfTheWrongSizeAreIgnored() {
        let address = [UInt8(2), 24, 0, 0] + le32(2) + attribute(1, [10, 77, 0])
        let route = route(destinationLength: 0, gateway: [1, 2, 3], outputInterface: nil) + attribute(4, [1, 2])
        XCTAssertEqual(
            NetlinkMessage.parse(message(20, address) + message(24, route)),
            [
                .address(.init(family: 2, prefixLength: 24, scope: 0, index: 2, bytes: nil), removed: false),
                .route(.init(family: 2, destinationLength: 0, table: 254, type: 1), removed: false),
            ])
    }

    func testANameThatIsNotUTF8OrWouldLeaveSysfsIsHarmless() {
        XCTAssertEqual(NetlinkMessage.parse(message(16, link(index: 1, flags: 0, name: "") + attribute(3, [0xFF, 0xFE, 0]))).count, 1)
        // A name with a separator is never used as a path.
        XCTAssertEqual(NetworkInterface.Kind.facts(for: "../../etc", hardwareType: 1), .init(hardwareType: 1))
    }

    func testRandomBytesNeverTrapOrHang() {
        // Given many random datagrams, some starting with plausible headers
        var generator = SystemRandomNumberGenerator()
        for round in 0..<2_000 {
            var bytes = (0..<Int.random(in: 0..<256, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if round % 2 == 0, bytes.count >= 16 {
                bytes.replaceSubrange(0..<4, with: le32(UInt32.random(in: 0...UInt32(bytes.count), using: &generator)))
                bytes.replaceSubrange(4..<6, with: le16([16, 17, 20, 21, 24, 25, 2, 3].randomElement(using: &generator)!))
            }
            // When parsed, Then it returns (at most one message per 16 bytes)
            XCTAssertLessThanOrEqual(NetlinkMessage.parse(bytes).count, bytes.count / 16)
        }
    }

    // MARK: - The path the tables describe

    func testThePathIsSatisfiedOnlyByAUsableDefaultRouteOfTheMainTable() {
        let up = NetlinkMessage.Link(index: 2, hardwareType: 1, flags: 0x41, name: "eth0")
        let noCarrier = NetlinkMessage.Link(index: 2, hardwareType: 1, flags: 0x1, name: "eth0")
        let lo = NetlinkMessage.Link(index: 1, hardwareType: 772, flags: 0x49, name: "lo")
        let defaultRoute = NetlinkMessage.Route(
            family: 2, destinationLength: 0, table: 254, type: 1, gateway: [192, 0, 2, 1], outputInterface: 2)
        var otherTable = defaultRoute
        otherTable.table = 100
        var blackhole = defaultRoute
        blackhole.type = 6
        let kind: (NetlinkMessage.Link) -> NetworkInterface.Kind = { $0.hardwareType == 772 ? .loopback : .wired }

        let satisfied = NetworkPath.derive(links: [lo, up], addresses: [], routes: [defaultRoute], kind: kind)
        XCTAssertEqual(satisfied.status, .satisfied)
        XCTAssertEqual(satisfied.interfacesInUse.map(\.name), ["eth0"])
        XCTAssertTrue(satisfied.usesInterface(of: .wired))
        XCTAssertEqual(satisfied.defaultRoutes.map(\.description), ["ipv4 default via 192.0.2.1 dev eth0"])
        XCTAssertEqual(NetworkPath.derive(links: [lo, noCarrier], addresses: [], routes: [defaultRoute], kind: kind).status, .unsatisfied)
        XCTAssertEqual(NetworkPath.derive(links: [lo, up], addresses: [], routes: [otherTable], kind: kind).status, .unsatisfied)
        XCTAssertEqual(NetworkPath.derive(links: [lo, up], addresses: [], routes: [blackhole], kind: kind).status, .unsatisfied)
        XCTAssertEqual(NetworkPath.derive(links: [lo, up], addresses: [], routes: [], kind: kind).status, .unsatisfied)
    }

    func testTheKindOfAnInterfaceFollowsSysfs() {
        typealias Facts = NetworkInterface.Kind.SysfsFacts
        XCTAssertEqual(NetworkInterface.Kind.classify(Facts(hardwareType: 772, isVirtualDevice: true)), .loopback)
        XCTAssertEqual(NetworkInterface.Kind.classify(Facts(hardwareType: 1, isWireless: true)), .wireless)
        XCTAssertEqual(NetworkInterface.Kind.classify(Facts(hardwareType: 1, deviceType: "wlan")), .wireless)
        XCTAssertEqual(NetworkInterface.Kind.classify(Facts(hardwareType: 1, deviceType: "wwan")), .mobile)
        XCTAssertEqual(NetworkInterface.Kind.classify(Facts(hardwareType: 519)), .mobile)
        XCTAssertEqual(NetworkInterface.Kind.classify(Facts(hardwareType: 1, isVirtualDevice: true)), .virtual)
        XCTAssertEqual(NetworkInterface.Kind.classify(Facts(hardwareType: 1)), .wired)
        XCTAssertEqual(NetworkInterface.Kind.classify(Facts(hardwareType: 65534)), .other)
    }
}
