import Foundation

/// MD5 (RFC 1321) for checking Digest authentication. Written independently of the library's
/// own MD5 on purpose: the server never depends on the code it tests, and two implementations
/// agreeing is itself a check.
enum MD5 {
    static func hex(_ text: String) -> String {
        digest(Array(text.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    static func digest(_ message: [UInt8]) -> [UInt8] {
        let s: [UInt32] = [7, 12, 17, 22, 5, 9, 14, 20, 4, 11, 16, 23, 6, 10, 15, 21]
        let k: [UInt32] = (0..<64).map { UInt32(truncatingIfNeeded: Int64(floor(abs(sin(Double($0 + 1))) * 4_294_967_296))) }
        var bytes = message + [0x80]
        bytes += [UInt8](repeating: 0, count: (120 - bytes.count % 64) % 64)
        let bits = UInt64(message.count) &* 8
        bytes += (0..<8).map { UInt8(truncatingIfNeeded: bits >> (8 * UInt64($0))) }
        var h: [UInt32] = [0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476]
        for chunk in stride(from: 0, to: bytes.count, by: 64) {
            let m = (0..<16).map { i in (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[chunk + i * 4 + $1]) << (8 * UInt32($1)) } }
            var (a, b, c, d) = (h[0], h[1], h[2], h[3])
            for i in 0..<64 {
                let (f, g): (UInt32, Int) =
                    i < 16
                    ? ((b & c) | (~b & d), i)
                    : i < 32
                        ? ((d & b) | (~d & c), (5 * i + 1) % 16)
                        : i < 48 ? (b ^ c ^ d, (3 * i + 5) % 16) : (c ^ (b | ~d), (7 * i) % 16)
                let rotated = a &+ f &+ k[i] &+ m[g]
                let amount = s[(i / 16) * 4 + i % 4]
                (a, b, c, d) = (d, b &+ (rotated << amount | rotated >> (32 - amount)), b, c)
            }
            h = [h[0] &+ a, h[1] &+ b, h[2] &+ c, h[3] &+ d]
        }
        return h.flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> (8 * UInt32($0))) } }
    }
}
