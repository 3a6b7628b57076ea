/// How a `Range` header applies to a representation of a given size.
enum RangeRequest: Equatable {
    /// Serve the full representation (no usable range: malformed, or several ranges).
    case full
    /// Serve these bytes with 206.
    case partial(Range<Int>)
    /// Answer 416.
    case unsatisfiable

    /// Evaluates a `Range` header against a representation of `total` bytes. Only one range is
    /// served; a multi-range request gets the full body (no multipart/byteranges).
    static func evaluate(_ header: String, total: Int) -> RangeRequest {
        let trimmed = header.trimmingWhitespace
        guard trimmed.count > 6, trimmed.prefix(6).lowercased() == "bytes=" else { return .full }
        let spec = trimmed.dropFirst(6).trimmingWhitespace
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return .full }
        let first = spec[..<dash].trimmingWhitespace
        let last = spec[spec.index(after: dash)...].trimmingWhitespace
        if first.isEmpty {
            // bytes=-N: the last N bytes.
            guard let suffix = saturatingDecimal(last) else { return .full }
            guard suffix > 0, total > 0 else { return .unsatisfiable }
            return .partial(max(0, total - suffix)..<total)
        }
        guard let start = saturatingDecimal(first) else { return .full }
        var end = total - 1
        if !last.isEmpty {
            guard let requestedEnd = saturatingDecimal(last) else { return .full }
            guard requestedEnd >= start else { return .full }
            end = min(end, requestedEnd)
        }
        guard start < total else { return .unsatisfiable }
        return .partial(start..<(end + 1))
    }

    /// ASCII digits as an integer, saturating at `Int.max` (a huge last-byte-pos is valid).
    private static func saturatingDecimal(_ text: Substring) -> Int? {
        guard !text.isEmpty else { return nil }
        var value = 0
        for byte in text.utf8 {
            guard byte >= 48, byte <= 57 else { return nil }
            let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times.addingReportingOverflow(Int(byte - 48))
            value = overflow1 || overflow2 ? Int.max : sum
        }
        return value
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs.
    var trimmingWhitespace: Substring {
        var text = Substring(self)
        while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return text
    }
}
