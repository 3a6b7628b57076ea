/// SHA-1 (RFC 3174), one-shot, for the WebSocket handshake's `Sec-WebSocket-Accept` (RFC 6455
/// §4.2.2) and nothing else.
///
/// SHA-1 is broken for collision resistance; RFC 6455 uses it only to prove that the server read
/// the client's key, where that does not matter. Never use it to protect data: ``SHA256`` is the
/// project's hash for that. The toolchain has no SHA-1 Courier may use on Linux (CryptoKit is
/// Darwin only and the project takes no packages), hence this small one.
package enum SHA1 {
    /// The 20-byte digest of `message`.
    package static func hash(_ message: some Collection<UInt8>) -> [UInt8] {
        var h: (UInt32, UInt32, UInt32, UInt32, UInt32) = (0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0)

        // Padding (RFC 3174 §4): a 1 bit, zeros up to 56 bytes into a block, then the length
        // in bits as a big-endian 64-bit number. The handshake hashes 60 bytes, so copying the
        // message once costs nothing worth avoiding.
        var padded = [UInt8](message)
        let bitLength = UInt64(padded.count) &* 8
        padded.append(0x80)
        while padded.count % 64 != 56 { padded.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) {
            padded.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift)))
        }

        var w = [UInt32](repeating: 0, count: 80)
        var blockStart = 0
        while blockStart < padded.count {
            for t in 0..<16 {
                let p = blockStart + 4 * t
                w[t] =
                    UInt32(padded[p]) << 24 | UInt32(padded[p + 1]) << 16 | UInt32(padded[p + 2]) << 8
                    | UInt32(padded[p + 3])
            }
            for t in 16..<80 {
                let x = w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16]
                w[t] = x << 1 | x >> 31
            }
            var (a, b, c, d, e) = h
            for t in 0..<80 {
                let f: UInt32
                let k: UInt32
                switch t {
                case 0..<20: (f, k) = ((b & c) | (~b & d), 0x5A82_7999)
                case 20..<40: (f, k) = (b ^ c ^ d, 0x6ED9_EBA1)
                case 40..<60: (f, k) = ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC)
                default: (f, k) = (b ^ c ^ d, 0xCA62_C1D6)
                }
                let temp = (a << 5 | a >> 27) &+ f &+ e &+ w[t] &+ k
                e = d
                d = c
                c = b << 30 | b >> 2
                b = a
                a = temp
            }
            h = (h.0 &+ a, h.1 &+ b, h.2 &+ c, h.3 &+ d, h.4 &+ e)
            blockStart += 64
        }

        var digest: [UInt8] = []
        digest.reserveCapacity(20)
        for word in [h.0, h.1, h.2, h.3, h.4] {
            digest.append(UInt8(truncatingIfNeeded: word >> 24))
            digest.append(UInt8(truncatingIfNeeded: word >> 16))
            digest.append(UInt8(truncatingIfNeeded: word >> 8))
            digest.append(UInt8(truncatingIfNeeded: word))
        }
        return digest
    }
}
