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
    @inlinable
    package static func equals(_ a: String, _ b: String) -> Bool {
        a.utf8.count == b.utf8.count && zip(a.utf8, b.utf8).allSatisfy { folded($0) == folded($1) }
    }

    /// `byte` in lowercase when it is an ASCII capital letter.
    @inlinable
    package static func folded(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }
}
