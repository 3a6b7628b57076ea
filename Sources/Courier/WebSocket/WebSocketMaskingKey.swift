/// The 4-byte key a client masks every frame's payload with (RFC 6455 §5.3).
///
/// Decisions never make one: the caller draws a fresh key per frame from a strong random source
/// and passes it in, so that the framing stays a pure function a test can check byte for byte.
struct WebSocketMaskingKey: Hashable, Sendable {
    /// The key's bytes in wire order, packed big-endian (`bytes[0]` in the top byte).
    let value: UInt32

    /// A key from its four bytes in wire order.
    init(_ b0: UInt8, _ b1: UInt8, _ b2: UInt8, _ b3: UInt8) {
        value = UInt32(b0) << 24 | UInt32(b1) << 16 | UInt32(b2) << 8 | UInt32(b3)
    }

    /// A key from its four bytes in wire order; `nil` unless there are exactly four.
    init?(_ bytes: some Collection<UInt8>) {
        guard bytes.count == 4 else { return nil }
        let array = Array(bytes)
        self.init(array[0], array[1], array[2], array[3])
    }

    /// The key's byte at `index` (0…3) in wire order.
    func byte(_ index: Int) -> UInt8 {
        UInt8(truncatingIfNeeded: value >> UInt32(24 - 8 * (index & 3)))
    }

    /// XORs `buffer` with the key, in place, as the bytes at payload offset `offset` onwards
    /// (the key's phase is `offset % 4`, so a payload can be (un)masked in chunks as it arrives).
    ///
    /// Eight bytes per step: the key repeated twice, rotated to the phase, is one 64-bit word
    /// laid out in memory order, so the loop never looks at the machine's byte order.
    func apply(to buffer: UnsafeMutableRawBufferPointer, offset: Int) {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return }
        var pattern: UInt64 = 0
        withUnsafeMutableBytes(of: &pattern) { bytes in
            for index in 0..<8 { bytes[index] = byte(offset &+ index) }
        }
        let count = buffer.count
        var index = 0
        while index &+ 8 <= count {
            let word = (base + index).loadUnaligned(as: UInt64.self)
            (base + index).storeBytes(of: word ^ pattern, as: UInt64.self)
            index &+= 8
        }
        // The tail starts at a multiple of 8 past `offset`, so the pattern's bytes still line up.
        withUnsafeBytes(of: pattern) { patternBytes in
            var lane = 0
            while index < count {
                base.storeBytes(
                    of: base.load(fromByteOffset: index, as: UInt8.self) ^ patternBytes[lane], toByteOffset: index, as: UInt8.self)
                index &+= 1
                lane &+= 1
            }
        }
    }
}
