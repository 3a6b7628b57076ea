import Foundation

/// MD5 (RFC 1321), only because HTTP Digest authentication (RFC 7616) still defaults to it. Not
/// for anything that needs collision resistance. Written here: the project takes no packages.
struct MD5 {
    private static let shifts: [UInt32] = [
        7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
        5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20,
        4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
        6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
    ]
    /// floor(abs(sin(i + 1)) * 2^32), RFC 1321 §3.4.
    private static let constants: [UInt32] = (0..<64).map {
        UInt32(truncatingIfNeeded: Int64((abs(sin(Double($0 + 1))) * 4_294_967_296).rounded(.down)))
    }

    /// The 16-byte digest of `message`.
    static func hash(_ message: [UInt8]) -> [UInt8] {
        var state: (UInt32, UInt32, UInt32, UInt32) = (0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476)
        var padded = message
        padded.append(0x80)
        while padded.count % 64 != 56 { padded.append(0) }
        let bitLength = UInt64(message.count) &* 8
        for index in 0..<8 { padded.append(UInt8(truncatingIfNeeded: bitLength >> (8 * UInt64(index)))) }
        var words = [UInt32](repeating: 0, count: 16)
        for block in stride(from: 0, to: padded.count, by: 64) {
            for index in 0..<16 {
                let base = block + index * 4
                words[index] =
                    UInt32(padded[base]) | UInt32(padded[base + 1]) << 8 | UInt32(padded[base + 2]) << 16
                    | UInt32(padded[base + 3]) << 24
            }
            var (a, b, c, d) = state
            for round in 0..<64 {
                let f: UInt32
                let g: Int
                switch round {
                case 0..<16: f = (b & c) | (~b & d); g = round
                case 16..<32: f = (d & b) | (~d & c); g = (5 * round + 1) % 16
                case 32..<48: f = b ^ c ^ d; g = (3 * round + 5) % 16
                default: f = c ^ (b | ~d); g = (7 * round) % 16
                }
                let sum = a &+ f &+ constants[round] &+ words[g]
                (a, d, c) = (d, c, b)
                b = b &+ (sum << shifts[round] | sum >> (32 - shifts[round]))
            }
            state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d)
        }
        var digest: [UInt8] = []
        for word in [state.0, state.1, state.2, state.3] {
            for index in 0..<4 { digest.append(UInt8(truncatingIfNeeded: word >> (8 * UInt32(index)))) }
        }
        return digest
    }
}
