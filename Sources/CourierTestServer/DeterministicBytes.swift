import Foundation

/// The byte stream behind `/bytes`, `/stream-bytes` and ``TestServer/deterministicBytes(count:seed:)``.
///
/// It is a splitmix64 stream: output word `k` (k = 1, 2, 3…) is `mix(seed &+ k &* 0x9E3779B97F4A7C15)`
/// and byte `i` of the stream is byte `i % 8` (little-endian) of word `i / 8 + 1`. Because word `k`
/// depends only on `k`, any range can be generated without producing what comes before it.
enum DeterministicBytes {
    /// The splitmix64 increment ("golden gamma").
    static let gamma: UInt64 = 0x9E37_79B9_7F4A_7C15

    /// The `k`-th splitmix64 output (k ≥ 1) for `seed`.
    static func word(_ k: UInt64, seed: UInt64) -> UInt64 {
        var z = seed &+ k &* gamma
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// The bytes at positions `range` of the stream for `seed`.
    static func bytes(in range: Range<Int>, seed: UInt64) -> Data {
        guard range.lowerBound >= 0, !range.isEmpty else { return Data() }
        var data = Data(count: range.count)
        data.withUnsafeMutableBytes { (out: UnsafeMutableRawBufferPointer) in
            var position = range.lowerBound
            var written = 0
            while position < range.upperBound {
                let shift = position % 8
                let take = min(8 - shift, range.upperBound - position)
                var value = word(UInt64(position / 8) + 1, seed: seed) >> UInt64(shift * 8)
                for _ in 0..<take {
                    out[written] = UInt8(truncatingIfNeeded: value)
                    value >>= 8
                    written += 1
                }
                position += take
            }
        }
        return data
    }
}
