import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// IPv4 and IPv6 addresses as bytes and text (`inet_ntop` / `inet_pton`), for the route lookup
/// and the monitor's reports.
enum InternetAddress {
    /// `192.0.2.1` for 4 bytes, `2001:db8::1` for 16; `nil` for any other length.
    static func string(_ bytes: [UInt8]) -> String? {
        let family: Int32
        switch bytes.count {
        case 4: family = AF_INET
        case 16: family = AF_INET6
        default: return nil
        }
        var text = [CChar](repeating: 0, count: 64)
        let done = bytes.withUnsafeBytes { raw in inet_ntop(family, raw.baseAddress, &text, socklen_t(text.count)) }
        guard done != nil else { return nil }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The bytes of a numeric host (`10.0.0.1`, `::1`, `[::1]`); `nil` for a name.
    static func bytes(ofNumeric host: String) -> [UInt8]? {
        var host = host
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        var v4 = [UInt8](repeating: 0, count: 4)
        if inet_pton(AF_INET, host, &v4) == 1 { return v4 }
        var v6 = [UInt8](repeating: 0, count: 16)
        if inet_pton(AF_INET6, host, &v6) == 1 { return v6 }
        return nil
    }
}
