/// A parsed `Content-Range` response header (RFC 9110 §14.4), with checked arithmetic so a
/// hostile value can never trap.
///
/// Two forms: `bytes first-last/complete` (`complete` may be `*`) for a 206, and
/// `bytes */complete` for a 416.
struct ContentRange: Sendable, Equatable {
    /// The first byte position, or `nil` for the unsatisfied form `bytes */N`.
    let first: Int64?
    /// The last byte position (inclusive), or `nil` for the unsatisfied form.
    let last: Int64?
    /// The complete length of the representation, or `nil` when the server sent `*`.
    let completeLength: Int64?

    /// Parses `value`; returns `nil` for anything malformed or inconsistent.
    init?(_ value: String) {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard trimmed.lowercased().hasPrefix("bytes "),
            let slash = trimmed.lastIndex(of: "/")
        else { return nil }
        let rangePart = trimmed[trimmed.index(trimmed.startIndex, offsetBy: 6)..<slash]
            .trimmingCharacters(in: .whitespaces)
        let lengthPart = trimmed[trimmed.index(after: slash)...].trimmingCharacters(in: .whitespaces)

        if lengthPart == "*" {
            completeLength = nil
        } else {
            guard let length = Self.parseNumber(lengthPart) else { return nil }
            completeLength = length
        }
        if rangePart == "*" {
            guard completeLength != nil else { return nil }
            first = nil
            last = nil
            return
        }
        let bounds = rangePart.split(separator: "-", omittingEmptySubsequences: false)
        // `last` below Int64.max, so the range's end (last + 1) and length are representable.
        guard bounds.count == 2, let first = Self.parseNumber(bounds[0]), let last = Self.parseNumber(bounds[1]),
            first <= last, last < Int64.max
        else { return nil }
        if let completeLength, last >= completeLength { return nil }
        self.first = first
        self.last = last
    }

    /// The number of bytes the range covers, when it is a satisfied range.
    var length: Int64? {
        guard let first, let last else { return nil }
        let (difference, overflow) = last.subtractingReportingOverflow(first)
        guard !overflow else { return nil }
        let (length, tooLong) = difference.addingReportingOverflow(1)
        return tooLong ? nil : length
    }

    /// Digits only (no sign, no spaces): `Int64(_:)` alone accepts a leading `+`.
    private static func parseNumber(_ text: some StringProtocol) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        return Int64(text)
    }
}
