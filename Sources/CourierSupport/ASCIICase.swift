/// Case-insensitive comparison of protocol words (schemes, methods, header names) without the
/// allocation of `lowercased()`: only `A`–`Z` fold, as HTTP's case rules say.
package enum ASCIICase {
    /// Whether `text` equals `lowercase` (lowercase ASCII) in any case.
    @inlinable
    package static func equals(_ text: String, _ lowercase: StaticString) -> Bool {
        let expected = UnsafeBufferPointer(start: lowercase.utf8Start, count: lowercase.utf8CodeUnitCount)
        guard text.utf8.count == expected.count else { return false }
        return zip(text.utf8, expected).allSatisfy { folded($0) == $1 }
    }

    /// Whether `a` and `b` are equal in any ASCII case.
    ///
    /// Compares the strings' own UTF-8 storage when they have it (native strings do): the
    /// generic walk of two `UTF8View`s cost a cache lookup, which compares dozens of field names,
    /// a tenth of its instructions.
    @inlinable
    package static func equals(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        let contiguous = a.utf8.withContiguousStorageIfAvailable { x in
            b.utf8.withContiguousStorageIfAvailable { y in
                for index in 0..<x.count where x[index] != y[index] && folded(x[index]) != folded(y[index]) { return false }
                return true
            }
        }
        if let contiguous, let result = contiguous { return result }
        return zip(a.utf8, b.utf8).allSatisfy { folded($0) == folded($1) }
    }

    /// `byte` in lowercase when it is an ASCII capital letter.
    @inlinable
    package static func folded(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }

    /// `text` with its ASCII capital letters in lowercase; `text` itself (no new string) when it
    /// has none, as protocol words usually do. Other characters are kept: no HTTP name changes
    /// under a wider case mapping.
    @inlinable
    package static func lowercased(_ text: String) -> String {
        let capitals = text.utf8.withContiguousStorageIfAvailable { bytes in
            bytes.contains { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }
        }
        guard capitals ?? true else { return text }
        // One string written in place (a short one needs no allocation at all).
        let count = text.utf8.count
        return String(unsafeUninitializedCapacity: count) { buffer in
            for (index, byte) in text.utf8.enumerated() { buffer[index] = folded(byte) }
            return count
        }
    }
}
