import Foundation

/// An incremental SHA-256 (FIPS 180-4), for checking downloads while they stream.
///
/// Feed the body with `update` as it arrives and call `finalize()` at the end. `finalize()` does
/// not change the value, so a copy can be finalized for a running digest while the original
/// keeps updating.
///
/// Whole 64-byte blocks are hashed straight from the caller's buffer; only a partial block at
/// the end of an update is copied, into fixed inline storage. Nothing is allocated per block,
/// which keeps unoptimized (debug) builds fast enough for 64 MiB downloads.
package struct SHA256: Sendable {
    private typealias State = (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32)

    /// The initial hash value H(0) (§5.3.3): the first 32 bits of the fractional parts of the
    /// square roots of the first eight primes.
    private static let initialState: State = (
        0x6A09_E667, 0xBB67_AE85, 0x3C6E_F372, 0xA54F_F53A, 0x510E_527F, 0x9B05_688C, 0x1F83_D9AB, 0x5BE0_CD19
    )

    /// The round constants K (§4.2.2): the first 32 bits of the fractional parts of the cube
    /// roots of the first 64 primes.
    private static let roundConstants: [UInt32] = [
        0x428A_2F98, 0x7137_4491, 0xB5C0_FBCF, 0xE9B5_DBA5, 0x3956_C25B, 0x59F1_11F1, 0x923F_82A4, 0xAB1C_5ED5,
        0xD807_AA98, 0x1283_5B01, 0x2431_85BE, 0x550C_7DC3, 0x72BE_5D74, 0x80DE_B1FE, 0x9BDC_06A7, 0xC19B_F174,
        0xE49B_69C1, 0xEFBE_4786, 0x0FC1_9DC6, 0x240C_A1CC, 0x2DE9_2C6F, 0x4A74_84AA, 0x5CB0_A9DC, 0x76F9_88DA,
        0x983E_5152, 0xA831_C66D, 0xB003_27C8, 0xBF59_7FC7, 0xC6E0_0BF3, 0xD5A7_9147, 0x06CA_6351, 0x1429_2967,
        0x27B7_0A85, 0x2E1B_2138, 0x4D2C_6DFC, 0x5338_0D13, 0x650A_7354, 0x766A_0ABB, 0x81C2_C92E, 0x9272_2C85,
        0xA2BF_E8A1, 0xA81A_664B, 0xC24B_8B70, 0xC76C_51A3, 0xD192_E819, 0xD699_0624, 0xF40E_3585, 0x106A_A070,
        0x19A4_C116, 0x1E37_6C08, 0x2748_774C, 0x34B0_BCB5, 0x391C_0CB3, 0x4ED8_AA4A, 0x5B9C_CA4F, 0x682E_6FF3,
        0x748F_82EE, 0x78A5_636F, 0x84C8_7814, 0x8CC7_0208, 0x90BE_FFFA, 0xA450_6CEB, 0xBEF9_A3F7, 0xC671_78F2,
    ]

    private static let blockSize = 64

    /// The intermediate hash value H(i).
    private var state: State = SHA256.initialState
    /// The bytes of an incomplete block carried over to the next update; 8 × 8 = 64 bytes
    /// inline, so copying a hasher never allocates.
    private var pending: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
    /// How many bytes of `pending` are in use (always less than a block).
    private var pendingCount = 0
    /// The message length so far in bytes; the padding needs it in bits, modulo 2^64.
    private var messageLength: UInt64 = 0

    /// A hasher that has seen no input.
    package init() {}

    /// Adds `data` to the message.
    package mutating func update(_ data: Data) {
        data.withUnsafeBytes { update(bytes: $0) }
    }

    /// Adds the bytes in `bytes` to the message.
    package mutating func update(bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        messageLength &+= UInt64(bytes.count)
        bytes.withMemoryRebound(to: UInt8.self) { input in
            guard let base = input.baseAddress else { return }
            var offset = 0
            let count = input.count
            if pendingCount > 0 {
                let used = pendingCount
                let taken = min(Self.blockSize - used, count)
                withUnsafeMutableBytes(of: &pending) { storage in
                    storage.baseAddress?.advanced(by: used).copyMemory(from: base, byteCount: taken)
                }
                pendingCount = used + taken
                offset = taken
                guard pendingCount == Self.blockSize else { return }
                let block = pending
                withUnsafeBytes(of: block) { storage in
                    storage.withMemoryRebound(to: UInt8.self) { blockBytes in
                        guard let blockBase = blockBytes.baseAddress else { return }
                        Self.compress(&state, blocks: blockBase, count: 1)
                    }
                }
                pendingCount = 0
            }
            let wholeBlocks = (count - offset) / Self.blockSize
            if wholeBlocks > 0 {
                Self.compress(&state, blocks: base + offset, count: wholeBlocks)
                offset += wholeBlocks * Self.blockSize
            }
            let rest = count - offset
            if rest > 0 {
                withUnsafeMutableBytes(of: &pending) { storage in
                    storage.baseAddress?.copyMemory(from: base + offset, byteCount: rest)
                }
                pendingCount = rest
            }
        }
    }

    /// The 32-byte digest of everything added so far. The hasher itself is left as it was, so
    /// it can keep taking input.
    package func finalize() -> [UInt8] {
        // Padding (§5.1.1): a 1 bit, zeros up to 56 bytes into a block, then the length in bits
        // as a big-endian 64-bit number.
        let bitLength = messageLength &<< 3
        let zeroCount = pendingCount < 56 ? 55 - pendingCount : 119 - pendingCount
        var padding = [UInt8](repeating: 0, count: 1 + zeroCount + 8)
        padding[0] = 0x80
        for index in 0..<8 {
            padding[1 + zeroCount + index] = UInt8(truncatingIfNeeded: bitLength &>> UInt64(56 - 8 * index))
        }
        var copy = self
        padding.withUnsafeBytes { copy.update(bytes: $0) }

        let words = [
            copy.state.0, copy.state.1, copy.state.2, copy.state.3,
            copy.state.4, copy.state.5, copy.state.6, copy.state.7,
        ]
        var digest: [UInt8] = []
        digest.reserveCapacity(32)
        for word in words {
            digest.append(UInt8(truncatingIfNeeded: word &>> 24))
            digest.append(UInt8(truncatingIfNeeded: word &>> 16))
            digest.append(UInt8(truncatingIfNeeded: word &>> 8))
            digest.append(UInt8(truncatingIfNeeded: word))
        }
        return digest
    }

    /// The 32-byte digest of `data`.
    package static func hash(_ data: Data) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(data)
        return hasher.finalize()
    }

    /// `digest` as lower-case hexadecimal, two characters per byte.
    package static func hexString(_ digest: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(digest.count * 2)
        for byte in digest {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The 32 bytes written as `text`: exactly 64 hexadecimal digits in either case, with no
    /// prefix or whitespace. Returns `nil` for anything else.
    package static func parseHex(_ text: String) -> [UInt8]? {
        let characters = Array(text.utf8)
        guard characters.count == 64 else { return nil }
        var digest: [UInt8] = []
        digest.reserveCapacity(32)
        var index = 0
        while index + 1 < characters.count {
            guard let high = Hex.value(of: characters[index]), let low = Hex.value(of: characters[index + 1]) else {
                return nil
            }
            digest.append(high << 4 | low)
            index += 2
        }
        return digest
    }

    /// Runs the compression function (§6.2.2) over `count` whole blocks starting at `blocks`.
    ///
    /// Written for unoptimized builds too: `while` loops and wrapping operators only (no
    /// generic iterators or closures per round), the message schedule on the stack, and the
    /// round constants read through a pointer rather than array subscripts.
    private static func compress(_ state: inout State, blocks: UnsafePointer<UInt8>, count: Int) {
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { schedule in
            roundConstants.withUnsafeBufferPointer { constants in
                guard let w = schedule.baseAddress, let k = constants.baseAddress else { return }
                var (h0, h1, h2, h3, h4, h5, h6, h7) = state
                var block = blocks
                var remaining = count
                while remaining > 0 {
                    // W0…W15 are the block's big-endian words; the rest expand from them.
                    var t = 0
                    while t < 16 {
                        let p = block + 4 * t
                        w[t] = UInt32(p[0]) &<< 24 | UInt32(p[1]) &<< 16 | UInt32(p[2]) &<< 8 | UInt32(p[3])
                        t &+= 1
                    }
                    while t < 64 {
                        let x = w[t - 15]
                        let y = w[t - 2]
                        let sigma0 = (x &>> 7 | x &<< 25) ^ (x &>> 18 | x &<< 14) ^ (x &>> 3)
                        let sigma1 = (y &>> 17 | y &<< 15) ^ (y &>> 19 | y &<< 13) ^ (y &>> 10)
                        w[t] = w[t - 16] &+ sigma0 &+ w[t - 7] &+ sigma1
                        t &+= 1
                    }

                    // Eight rounds per pass: instead of moving every working variable along after each
                    // round (T1, T2 and h = g, g = f, … in §6.2.2), the next round names them one
                    // place further on, which saves the moves in unoptimized builds.
                    var a = h0, b = h1, c = h2, d = h3, e = h4, f = h5, g = h6, h = h7
                    var t1: UInt32 = 0
                    t = 0
                    while t < 64 {
                        t1 = h &+ ((e &>> 6 | e &<< 26) ^ (e &>> 11 | e &<< 21) ^ (e &>> 25 | e &<< 7))
                        t1 = t1 &+ ((e & f) ^ (~e & g)) &+ k[t] &+ w[t]
                        d &+= t1
                        h = t1 &+ ((a &>> 2 | a &<< 30) ^ (a &>> 13 | a &<< 19) ^ (a &>> 22 | a &<< 10))
                        h = h &+ ((a & b) ^ (a & c) ^ (b & c))

                        t1 = g &+ ((d &>> 6 | d &<< 26) ^ (d &>> 11 | d &<< 21) ^ (d &>> 25 | d &<< 7))
                        t1 = t1 &+ ((d & e) ^ (~d & f)) &+ k[t &+ 1] &+ w[t &+ 1]
                        c &+= t1
                        g = t1 &+ ((h &>> 2 | h &<< 30) ^ (h &>> 13 | h &<< 19) ^ (h &>> 22 | h &<< 10))
                        g = g &+ ((h & a) ^ (h & b) ^ (a & b))

                        t1 = f &+ ((c &>> 6 | c &<< 26) ^ (c &>> 11 | c &<< 21) ^ (c &>> 25 | c &<< 7))
                        t1 = t1 &+ ((c & d) ^ (~c & e)) &+ k[t &+ 2] &+ w[t &+ 2]
                        b &+= t1
                        f = t1 &+ ((g &>> 2 | g &<< 30) ^ (g &>> 13 | g &<< 19) ^ (g &>> 22 | g &<< 10))
                        f = f &+ ((g & h) ^ (g & a) ^ (h & a))

                        t1 = e &+ ((b &>> 6 | b &<< 26) ^ (b &>> 11 | b &<< 21) ^ (b &>> 25 | b &<< 7))
                        t1 = t1 &+ ((b & c) ^ (~b & d)) &+ k[t &+ 3] &+ w[t &+ 3]
                        a &+= t1
                        e = t1 &+ ((f &>> 2 | f &<< 30) ^ (f &>> 13 | f &<< 19) ^ (f &>> 22 | f &<< 10))
                        e = e &+ ((f & g) ^ (f & h) ^ (g & h))

                        t1 = d &+ ((a &>> 6 | a &<< 26) ^ (a &>> 11 | a &<< 21) ^ (a &>> 25 | a &<< 7))
                        t1 = t1 &+ ((a & b) ^ (~a & c)) &+ k[t &+ 4] &+ w[t &+ 4]
                        h &+= t1
                        d = t1 &+ ((e &>> 2 | e &<< 30) ^ (e &>> 13 | e &<< 19) ^ (e &>> 22 | e &<< 10))
                        d = d &+ ((e & f) ^ (e & g) ^ (f & g))

                        t1 = c &+ ((h &>> 6 | h &<< 26) ^ (h &>> 11 | h &<< 21) ^ (h &>> 25 | h &<< 7))
                        t1 = t1 &+ ((h & a) ^ (~h & b)) &+ k[t &+ 5] &+ w[t &+ 5]
                        g &+= t1
                        c = t1 &+ ((d &>> 2 | d &<< 30) ^ (d &>> 13 | d &<< 19) ^ (d &>> 22 | d &<< 10))
                        c = c &+ ((d & e) ^ (d & f) ^ (e & f))

                        t1 = b &+ ((g &>> 6 | g &<< 26) ^ (g &>> 11 | g &<< 21) ^ (g &>> 25 | g &<< 7))
                        t1 = t1 &+ ((g & h) ^ (~g & a)) &+ k[t &+ 6] &+ w[t &+ 6]
                        f &+= t1
                        b = t1 &+ ((c &>> 2 | c &<< 30) ^ (c &>> 13 | c &<< 19) ^ (c &>> 22 | c &<< 10))
                        b = b &+ ((c & d) ^ (c & e) ^ (d & e))

                        t1 = a &+ ((f &>> 6 | f &<< 26) ^ (f &>> 11 | f &<< 21) ^ (f &>> 25 | f &<< 7))
                        t1 = t1 &+ ((f & g) ^ (~f & h)) &+ k[t &+ 7] &+ w[t &+ 7]
                        e &+= t1
                        a = t1 &+ ((b &>> 2 | b &<< 30) ^ (b &>> 13 | b &<< 19) ^ (b &>> 22 | b &<< 10))
                        a = a &+ ((b & c) ^ (b & d) ^ (c & d))
                        t &+= 8
                    }
                    h0 &+= a
                    h1 &+= b
                    h2 &+= c
                    h3 &+= d
                    h4 &+= e
                    h5 &+= f
                    h6 &+= g
                    h7 &+= h

                    block += blockSize
                    remaining -= 1
                }
                state = (h0, h1, h2, h3, h4, h5, h6, h7)
            }
        }
    }
}
