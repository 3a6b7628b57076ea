import Foundation

/// CRC-32 as used by gzip and zlib (reflected polynomial 0xEDB88320, initial and final XOR
/// 0xFFFFFFFF). Check value: CRC-32 of "123456789" is 0xCBF43926.
enum CRC32 {
    private static let polynomial: UInt32 = 0xEDB8_8320

    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? (value >> 1) ^ polynomial : value >> 1 }
        return value
    }

    /// The CRC-32 of `bytes`, continuing from `initial` (the CRC of the bytes before them), so
    /// `checksum(b, initial: checksum(a)) == checksum(a + b)`.
    static func checksum(_ bytes: some Sequence<UInt8>, initial: UInt32 = 0) -> UInt32 {
        var register = ~initial
        for byte in bytes {
            register = table[Int((register ^ UInt32(byte)) & 0xFF)] ^ (register >> 8)
        }
        return ~register
    }

    /// The CRC-32 of `count` zero bytes continuing from `initial`, in O(log count) time.
    ///
    /// Feeding a zero byte is a linear map on the 32-bit register, i.e. a 32×32 matrix over GF(2);
    /// `count` zero bytes are that matrix to the power `count`, computed by repeated squaring
    /// (the same idea as zlib's `crc32_combine`). Lets `/gzip-bomb` write its trailer without
    /// running over megabytes of zeros.
    static func checksumOfZeros(count: Int, initial: UInt32 = 0) -> UInt32 {
        // One zero *bit*: column 0 maps to the polynomial, column n to bit n-1.
        var oneByte = [UInt32](repeating: 0, count: 32)
        oneByte[0] = polynomial
        for bit in 1..<32 { oneByte[bit] = 1 << UInt32(bit - 1) }
        for _ in 0..<3 { oneByte = square(oneByte) }  // 2, 4, then 8 bits
        var register = ~initial
        var remaining = max(0, count)
        var power = oneByte
        while remaining > 0 {
            if remaining & 1 == 1 { register = apply(power, to: register) }
            remaining >>= 1
            if remaining > 0 { power = square(power) }
        }
        return ~register
    }

    /// Multiplies the matrix (given as its 32 columns) by a vector.
    private static func apply(_ matrix: [UInt32], to vector: UInt32) -> UInt32 {
        var result: UInt32 = 0
        var vector = vector
        var column = 0
        while vector != 0 {
            if vector & 1 == 1 { result ^= matrix[column] }
            vector >>= 1
            column += 1
        }
        return result
    }

    /// The matrix product `matrix · matrix`.
    private static func square(_ matrix: [UInt32]) -> [UInt32] {
        matrix.map { apply(matrix, to: $0) }
    }
}
