import Foundation

/// The one byte range a `Range` request field asks for (RFC 9110 §14.1.2), as the cache reads
/// it: `bytes=first-last`, `bytes=first-` or `bytes=-suffix`. Several ranges, another unit or
/// anything malformed is not one the cache answers: such a request goes to the origin as it is.
struct CacheByteRange: Sendable, Equatable {
    /// The first byte position, or `nil` for a suffix range.
    let first: Int?
    /// The last byte position asked for (inclusive); `nil` for "to the end" (and for a suffix).
    let last: Int?
    /// For a suffix range: how many final bytes.
    let suffixLength: Int?

    /// `first`-`last` (`last` `nil`: to the end).
    init(first: Int, last: Int?) {
        self.first = first
        self.last = last
        self.suffixLength = nil
    }

    /// The final `suffixLength` bytes.
    init(suffixLength: Int) {
        self.first = nil
        self.last = nil
        self.suffixLength = suffixLength
    }

    /// The single range of a `Range` value; `nil` for several ranges, another unit, or a value
    /// that does not parse (`bytes=5-2`, `bytes=-`, signs, blanks inside a number).
    static func parse(_ value: String) -> CacheByteRange? {
        let text = value.trimmingCharacters(in: .whitespaces)
        guard let equals = text.firstIndex(of: "="), text[..<equals].trimmingCharacters(in: .whitespaces).lowercased() == "bytes"
        else { return nil }
        let spec = text[text.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return nil }
        let start = spec[..<dash].trimmingCharacters(in: .whitespaces)
        let end = spec[spec.index(after: dash)...].trimmingCharacters(in: .whitespaces)
        if start.isEmpty {
            guard let suffix = number(end) else { return nil }
            return CacheByteRange(suffixLength: suffix)
        }
        guard let first = number(start) else { return nil }
        if end.isEmpty { return CacheByteRange(first: first, last: nil) }
        guard let last = number(end), first <= last else { return nil }
        return CacheByteRange(first: first, last: last)
    }

    /// Digits only; `nil` past `Int.max` (no clamping: a clamped pair could pass `first <= last`).
    private static func number(_ text: String) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int(text)
    }

    /// The positions this range selects of a representation of `length` bytes, or `nil` when it
    /// selects none (unsatisfiable: a first position at or past the end, a suffix of 0 bytes, or
    /// an empty representation).
    func resolved(length: Int) -> ClosedRange<Int>? {
        guard length > 0 else { return nil }
        if let suffixLength {
            guard suffixLength > 0 else { return nil }
            return max(0, length - suffixLength)...(length - 1)
        }
        guard let first, first < length else { return nil }
        return first...min(last ?? (length - 1), length - 1)
    }
}
