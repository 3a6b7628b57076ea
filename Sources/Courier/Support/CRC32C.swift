/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of the journal's records.
///
/// Castagnoli rather than the zip CRC-32 because it detects more error patterns at the record
/// sizes a journal holds, and it is what other logs use (ext4, iSCSI, LevelDB), so the format can
/// be checked with common tools. Computed in software with slicing-by-8 (eight table lookups per
/// eight bytes): Swift on Linux has no portable access to the SSE4.2 instruction, and a
/// gigabyte a second is far beyond what the journal needs.
package enum CRC32C {
    /// Eight 256-entry tables: `tables[0]` is the classic byte-at-a-time table, `tables[k]` the
    /// CRC of a byte followed by `k` zero bytes, so eight bytes are folded in one step.
    private static let tables: [UInt32] = {
        var tables = [UInt32](repeating: 0, count: 8 * 256)
        for byte in 0..<256 {
            var crc = UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
            tables[byte] = crc
        }
        for byte in 0..<256 {
            var crc = tables[byte]
            for slice in 1..<8 {
                crc = tables[Int(crc & 0xFF)] ^ (crc >> 8)
                tables[slice * 256 + byte] = crc
            }
        }
        return tables
    }()

    /// The CRC-32C of `bytes`, continuing from `crc` (the checksum of the bytes before them; 0 to
    /// start), so a record can be checksummed in pieces.
    package static func checksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        var crc = ~crc
        var index = 0
        let count = bytes.count
        tables.withUnsafeBufferPointer { table in
            while count - index >= 8 {
                // Little-endian reads: the reflected CRC consumes the lowest byte first.
                // `^` and `|` share a precedence in Swift: the parentheses are needed.
                let low =
                    crc
                    ^ (UInt32(bytes[index]) | UInt32(bytes[index + 1]) << 8
                        | UInt32(bytes[index + 2]) << 16 | UInt32(bytes[index + 3]) << 24)
                let high =
                    UInt32(bytes[index + 4]) | UInt32(bytes[index + 5]) << 8
                    | UInt32(bytes[index + 6]) << 16 | UInt32(bytes[index + 7]) << 24
                crc =
                    table[7 * 256 + Int(low & 0xFF)] ^ table[6 * 256 + Int((low >> 8) & 0xFF)]
                    ^ table[5 * 256 + Int((low >> 16) & 0xFF)] ^ table[4 * 256 + Int(low >> 24)]
                    ^ table[3 * 256 + Int(high & 0xFF)] ^ table[2 * 256 + Int((high >> 8) & 0xFF)]
                    ^ table[256 + Int((high >> 16) & 0xFF)] ^ table[Int(high >> 24)]
                index += 8
            }
            while index < count {
                crc = table[Int((crc ^ UInt32(bytes[index])) & 0xFF)] ^ (crc >> 8)
                index += 1
            }
        }
        return ~crc
    }

    /// The CRC-32C of `bytes`.
    package static func checksum<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> UInt32 {
        if let crc = bytes.withContiguousStorageIfAvailable({ checksum(UnsafeRawBufferPointer($0)) }) { return crc }
        return Array(bytes).withUnsafeBytes { checksum($0) }
    }
}
