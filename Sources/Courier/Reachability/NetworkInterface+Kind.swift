import Foundation

extension NetworkInterface.Kind {
    /// What `/sys/class/net/<name>/` says about an interface, read once per refresh.
    struct SysfsFacts: Equatable {
        /// `type`: the `ARPHRD_*` number (1 Ethernet, 772 loopback).
        var hardwareType: Int?
        /// A `wireless` directory or a `phy80211` link exists.
        var isWireless = false
        /// `DEVTYPE=` from `uevent` (`wwan`, `wlan`, `bridge`, `vlan`).
        var deviceType: String?
        /// The device's real path lies under `/sys/devices/virtual/`.
        var isVirtualDevice = false
    }

    /// The kind the facts name: the one rule, a pure function (`NetworkInterfaceKindTests`).
    static func classify(_ facts: SysfsFacts) -> Self {
        if facts.hardwareType == 772 { return .loopback }
        if facts.deviceType == "wwan" { return .mobile }
        if facts.isWireless || facts.deviceType == "wlan" { return .wireless }
        if facts.isVirtualDevice { return .virtual }
        // 519 ARPHRD_NONE is what many WWAN raw-IP drivers report.
        if facts.hardwareType == 519 { return .mobile }
        if facts.hardwareType == 1 { return .wired }
        return .other
    }

    /// The facts for `name` from `root` (`/sys/class/net`). In a network namespace `/sys` shows
    /// that namespace's devices only when it was mounted there (`ip netns exec` does this).
    static func facts(for name: String, hardwareType: UInt16, root: String = "/sys/class/net") -> SysfsFacts {
        // A name with a separator would leave the directory: the kernel forbids them, a hostile
        // message might not.
        guard !name.isEmpty, !name.contains("/"), name != ".", name != ".." else {
            return SysfsFacts(hardwareType: Int(hardwareType))
        }
        let directory = root + "/" + name
        let manager = FileManager.default
        var facts = SysfsFacts(hardwareType: Int(hardwareType))
        facts.isWireless = manager.fileExists(atPath: directory + "/wireless") || manager.fileExists(atPath: directory + "/phy80211")
        if let uevent = try? String(contentsOfFile: directory + "/uevent", encoding: .utf8) {
            for line in uevent.split(separator: "\n") where line.hasPrefix("DEVTYPE=") {
                facts.deviceType = String(line.dropFirst("DEVTYPE=".count))
            }
        }
        if let target = try? manager.destinationOfSymbolicLink(atPath: directory) {
            facts.isVirtualDevice = target.contains("/devices/virtual/")
        }
        return facts
    }
}
