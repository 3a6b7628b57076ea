import Foundation

/// HTTP dates (RFC 9110 §5.6.7): the IMF-fixdate every sender must use, and the two obsolete
/// forms a recipient must accept (RFC 850 and asctime). Anything else is `nil` — for `Expires`
/// that means "already expired" (RFC 9111 §5.3). The package's one HTTP-date codec: the cache,
/// `Retry-After`, the test server's `Date`/`Last-Modified` and `courier get -z`.
///
/// Parsed by hand, byte by byte: strict about the layout (one space, two-digit day and hour, the
/// comma, `GMT`), lenient only about the case of names, as RFC 9110 allows. No `DateFormatter`:
/// it is locale-sensitive and costs more than the rest of a cache lookup.
package enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    private static let shortDays = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
    private static let longDays = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]

    /// Seconds since 1970 for `text`, or `nil` when it is not an HTTP date.
    ///
    /// Reads UTF-8 bytes: every name and digit in an HTTP date is ASCII, so a value with any other
    /// byte is not one. (Trimming by `Character` through reversed collections cost a cache miss a
    /// quarter of its instructions.)
    package static func parse(_ text: String?) -> Date? {
        guard var text else { return nil }
        return text.withUTF8 { buffer in
            var bytes = buffer[...]
            // Optional white space around a field value (RFC 9110 §5.5) is not part of it.
            while let first = bytes.first, first == 0x20 || first == 0x09 { bytes.removeFirst() }
            while let last = bytes.last, last == 0x20 || last == 0x09 { bytes.removeLast() }
            guard bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
            return imfFixdate(bytes) ?? rfc850(bytes) ?? asctime(bytes)
        }
    }

    private typealias Bytes = Slice<UnsafeBufferPointer<UInt8>>

    /// `Sun, 06 Nov 1994 08:49:37 GMT`: fixed columns but for the year (four digits or more), read
    /// in place — the form every sender must use, parsed for every stored response.
    private static func imfFixdate(_ text: Bytes) -> Date? {
        let start = text.startIndex
        guard text.count >= 29, let yearEnd = text[(start + 12)...].firstIndex(of: space) else { return nil }
        let yearLength = yearEnd - (start + 12)
        guard yearLength >= 4, text.count == 25 + yearLength,
            text[start + 3] == comma, text[start + 4] == space, text[start + 7] == space, text[start + 11] == space,
            text[yearEnd + 9] == space, shortDayCodes.contains(code(text[start..<start + 3])),
            let day = digits(text[start + 5..<start + 7]),
            let month = month(text[start + 8..<start + 11]),
            let year = digits(text[start + 12..<yearEnd]),
            let time = clock(text[yearEnd + 1..<yearEnd + 9]),
            isGMT(text[(yearEnd + 10)...])
        else { return nil }
        return date(year: year, month: month, day: day, time: time)
    }

    /// `Sunday, 06-Nov-94 08:49:37 GMT`; a two-digit year more than 50 years ahead is in the past century.
    private static func rfc850(_ text: Bytes) -> Date? {
        let parts = text.split(separator: space, omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0].last == comma, name(parts[0].dropLast(), in: longDays) != nil else { return nil }
        let dateParts = parts[1].split(separator: UInt8(ascii: "-"), omittingEmptySubsequences: false)
        guard dateParts.count == 3, dateParts[0].count == 2, let day = digits(dateParts[0]),
            let month = month(dateParts[1]), dateParts[2].count == 2, let shortYear = digits(dateParts[2]),
            let time = clock(parts[2]), isGMT(parts[3])
        else { return nil }
        // RFC 9110 §5.6.7: this century unless that is more than 50 years in the future (the
        // reference year is fixed so the parse stays a pure function).
        let year = shortYear + 2000 > 2076 ? shortYear + 1900 : shortYear + 2000
        return date(year: year, month: month, day: day, time: time)
    }

    /// `Sun Nov  6 08:49:37 1994`
    private static func asctime(_ text: Bytes) -> Date? {
        let parts = text.split(separator: space, omittingEmptySubsequences: true)
        guard parts.count == 5, shortDayCodes.contains(code(parts[0])), let month = month(parts[1]),
            (1...2).contains(parts[2].count), let day = digits(parts[2]), let time = clock(parts[3]),
            parts[4].count == 4, let year = digits(parts[4])
        else { return nil }
        // The layout allows exactly one space, except the padding of a one-digit day.
        let expected = parts[2].count == 1 ? 6 : 5
        guard text.split(separator: space, omittingEmptySubsequences: false).count == expected else { return nil }
        return date(year: year, month: month, day: day, time: time)
    }

    private static let space = UInt8(ascii: " ")
    private static let comma = UInt8(ascii: ",")

    /// A decimal number of 1 to 9 digits.
    private static func digits(_ text: Bytes) -> Int? {
        guard !text.isEmpty, text.count <= 9 else { return nil }
        var value = 0
        for byte in text {
            guard byte >= 0x30 && byte <= 0x39 else { return nil }
            value = value * 10 + Int(byte - 0x30)
        }
        return value
    }

    /// The index of `text` in `names` (lowercase), compared without ASCII case.
    private static func name(_ text: Bytes, in names: [String]) -> Int? {
        names.firstIndex { candidate in
            candidate.utf8.count == text.count && zip(candidate.utf8, text).allSatisfy { $0 == ASCIICase.folded($1) }
        }
    }

    /// Three letters folded to lowercase and packed in one number (`nil`: not three bytes), so a
    /// month or day name is found by comparing numbers.
    private static func code<Letters: Collection<UInt8>>(_ text: Letters) -> UInt32? {
        guard text.count == 3 else { return nil }
        return text.reduce(0) { $0 << 8 | UInt32(ASCIICase.folded($1)) }
    }

    private static let monthCodes = months.map { code($0.utf8) }
    private static let shortDayCodes = shortDays.map { code($0.utf8) }
    private static let gmtCode = code("gmt".utf8)

    private static func month(_ text: Bytes) -> Int? {
        guard let code = code(text), let index = monthCodes.firstIndex(of: code) else { return nil }
        return index + 1
    }

    private static func isGMT(_ text: Bytes) -> Bool {
        code(text) == gmtCode
    }

    /// `HH:MM:SS`, two digits each.
    private static func clock(_ text: Bytes) -> Int? {
        let start = text.startIndex
        guard text.count == 8, text[start + 2] == UInt8(ascii: ":"), text[start + 5] == UInt8(ascii: ":"),
            let hour = digits(text[start..<start + 2]), let minute = digits(text[start + 3..<start + 5]),
            let second = digits(text[start + 6..<start + 8]), hour < 24, minute < 60, second <= 60
        else { return nil }
        return hour * 3600 + minute * 60 + second
    }

    private static func date(year: Int, month: Int, day: Int, time: Int) -> Date? {
        guard (1...31).contains(day) else { return nil }
        // Days from the civil date (Howard Hinnant's algorithm): no calendar object, no time zone.
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let monthIndex = (month + 9) % 12
        let dayOfYear = (153 * monthIndex + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + time))
    }

    /// The IMF-fixdate of `date` (`Sun, 06 Nov 1994 08:49:37 GMT`).
    package static func format(_ date: Date) -> String {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        var days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let time = seconds - days * 86_400
        let weekday = ((days % 7) + 7 + 3) % 7  // 1970-01-01 was a Thursday (index 3 from Monday)
        days += 719_468
        let era = (days >= 0 ? days : days - 146_096) / 146_097
        let dayOfEra = days - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        let name = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"][weekday]
        let monthName = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"][month - 1]
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(name), \(two(day)) \(monthName) \(year) \(two(time / 3600)):\(two(time / 60 % 60)):\(two(time % 60)) GMT"
    }
}
