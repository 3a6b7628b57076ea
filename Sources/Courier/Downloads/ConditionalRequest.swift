import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
internal import CourierSupport

/// Preconditions on the server's copy of a download, so that a copy already held is not fetched
/// again: curl's `-z`/`--time-cond` and `--etag-compare`, wget's `-N`. The request carries
/// `If-Modified-Since`, `If-Unmodified-Since` or `If-None-Match` (``headers``); a `304 Not
/// Modified`, or a copy whose `Last-Modified` fails the time condition although the server sent
/// it anyway (curl's own check, made by ``validation(_:)`` at the head, before a byte is
/// written), ends the download with an error ``isNotModified(_:)`` recognizes. Pure: dates and
/// file contents come in as arguments. `courier get -z`, `--etag-compare` and `--etag-save` are
/// made of it (Docs/CommandLine.md, "Conditional downloads").
public struct ConditionalRequest: Sendable, Equatable {
    /// What the request asks of the server's copy's modification time.
    public enum TimeCondition: Sendable, Equatable {
        /// Only a copy modified after the date (`If-Modified-Since`).
        case modifiedSince(Date)
        /// Only a copy not modified since the date (`If-Unmodified-Since`).
        case unmodifiedSince(Date)
    }

    /// The time condition, if any.
    public var time: TimeCondition?
    /// The `If-None-Match` value: the entity tag of the copy held (``entityTag(fromFile:)``).
    public var ifNoneMatch: String?

    /// A request with these conditions (none by default).
    public init(time: TimeCondition? = nil, ifNoneMatch: String? = nil) {
        self.time = time
        self.ifNoneMatch = ifNoneMatch
    }

    /// Whether the request carries a condition, so that a 304 means "nothing to do".
    public var isConditional: Bool { time != nil || ifNoneMatch != nil }

    /// The request headers the conditions add, dates as IMF-fixdates (RFC 9110 §5.6.7).
    public var headers: [(name: String, value: String)] {
        var headers: [(name: String, value: String)] = []
        switch time {
        case .modifiedSince(let date): headers.append(("If-Modified-Since", HTTPDate.format(date)))
        case .unmodifiedSince(let date): headers.append(("If-Unmodified-Since", HTTPDate.format(date)))
        case nil: break
        }
        if let ifNoneMatch { headers.append(("If-None-Match", ifNoneMatch)) }
        return headers
    }

    /// A file of entity tags (curl's `--etag-compare` file) read as an `If-None-Match` value: its
    /// first line, trimmed; missing or empty means `""` (curl sends `If-None-Match: ""`, which no
    /// real ETag matches).
    public static func entityTag(fromFile contents: String?) -> String {
        let line = contents?.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).first ?? ""
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        return trimmed.isEmpty ? "\"\"" : trimmed
    }

    /// What an entity-tag file (curl's `--etag-save`) should hold after `response`: its ETag and a
    /// newline; `nil` (leave the file as it is) without one, and for responses other than 2xx and
    /// 3xx, as curl does.
    public static func entityTagLine(from response: HTTPURLResponse?) -> String? {
        guard let response, (200..<400).contains(response.statusCode),
            let etag = response.value(forHTTPHeaderField: "ETag")?.trimmingCharacters(in: .whitespaces), !etag.isEmpty
        else { return nil }
        return etag + "\n"
    }

    /// curl's own check when a server ignores the condition and sends the body anyway: a 2xx
    /// whose `Last-Modified` shows the condition unmet is treated as a 304 (nothing written).
    /// No `Last-Modified`, or one that cannot be read, meets it.
    public static func meets(_ condition: TimeCondition, lastModified: String?) -> Bool {
        guard let lastModified, let modified = Self.date(lastModified) else { return true }
        switch condition {
        case .modifiedSince(let date): return modified > date
        case .unmodifiedSince(let date): return modified < date
        }
    }

    /// Why a response head was refused: the time condition is not met (``meets(_:lastModified:)``).
    struct ConditionUnmet: Error, CustomStringConvertible {
        var description: String { "the server's copy does not meet the -z time condition" }
    }

    /// `base` (by default ``Validation/default``) plus curl's check of the time condition at the
    /// response head, before any byte is written.
    public func validation(_ base: Validation = .default) -> Validation {
        guard let time else { return base }
        return base.validateHead { _, response throws(ConditionUnmet) in
            guard (200..<300).contains(response.statusCode) else { return }
            if !Self.meets(time, lastModified: response.value(forHTTPHeaderField: "Last-Modified")) { throw ConditionUnmet() }
        }
    }

    /// Whether `error` says the server's copy is not wanted (a 304, or the time condition checked
    /// at the head): a conditional download then ends with nothing to do, as curl's does.
    public func isNotModified(_ error: any Error) -> Bool {
        guard isConditional, let error = error as? CourierError else { return false }
        if error.code == .unacceptableStatusCode, error.statusCode == 304 { return true }
        return error.code == .unacceptableResponse && error.underlyingError is ConditionUnmet
    }

    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    private static let weekdays = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]

    /// A date as people and servers write it, read liberally as curl's `-z` does: the three HTTP
    /// forms (`Sun, 06 Nov 1994 08:49:37 GMT`, `Sunday, 06-Nov-94 08:49:37 GMT`,
    /// `Sun Nov  6 08:49:37 1994`), curl's examples (`Wed 01 Sep 2021 12:18:00`, `Jan 10, 2017`,
    /// `Sun, 12 Sep 2004 15:05:58 -0700`), ISO 8601 (`2021-09-01`, `2021-09-01T12:18:00Z`,
    /// `2021-09-01 12:18:00+02:00`) and `20210901`. Without a zone the time is UTC; without a
    /// time, midnight. Anything else, or an impossible date, is `nil`.
    public static func date(_ text: String) -> Date? {
        var day: Int?, month: Int?, year: Int?
        var clock: (hour: Int, minute: Int, second: Int)?
        var offset: Int?
        var sawAnything = false
        // ISO 8601 first: its `-` and `T` would otherwise split into the wrong tokens.
        var rest = text.trimmingCharacters(in: .whitespaces)
        if let iso = isoDate(rest) {
            (year, month, day) = (iso.year, iso.month, iso.day)
            rest = iso.rest
            sawAnything = true
        }
        for token in rest.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "," }) {
            sawAnything = true
            let lower = token.lowercased()
            if let zone = zoneOffset(lower), offset == nil, clock != nil || !lower.hasPrefix("-") {
                offset = zone
            } else if lower.contains(":") {
                guard clock == nil, let parsed = timeOfDay(lower) else { return nil }
                clock = parsed.clock
                if let zone = parsed.zone { offset = zone }
            } else if lower.contains("-"), lower.first?.isNumber == true {
                // RFC 850's `06-Nov-94`.
                let parts = lower.split(separator: "-")
                guard parts.count == 3, day == nil, let d = Int(parts[0]), let m = monthNumber(parts[1]), let y = Int(parts[2])
                else { return nil }
                (day, month, year) = (d, m, y)
            } else if let m = monthNumber(Substring(lower)) {
                guard month == nil else { return nil }
                month = m
            } else if weekdays.contains(where: { $0.hasPrefix(lower) && lower.count >= 3 }) {
                continue
            } else if lower.count == 8, year == nil, let value = Int(lower) {
                (year, month, day) = (value / 10000, value / 100 % 100, value % 100)
            } else if let value = Int(lower), lower.allSatisfy(\.isNumber) {
                if lower.count >= 3 || (day != nil && year == nil) {
                    guard year == nil else { return nil }
                    year = value
                } else {
                    guard day == nil else { return nil }
                    day = value
                }
            } else {
                return nil
            }
        }
        guard sawAnything, var year, let month, let day else { return nil }
        if year < 100 { year += year < 70 ? 2000 : 1900 }  // RFC 9110 §5.6.7's two-digit years
        let time = clock ?? (0, 0, 0)
        guard (1...12).contains(month), (1...31).contains(day), (1970...9999).contains(year), (0...23).contains(time.hour),
            (0...59).contains(time.minute), (0...60).contains(time.second)
        else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let components = DateComponents(year: year, month: month, day: day, hour: time.hour, minute: time.minute, second: time.second)
        guard let date = calendar.date(from: components), calendar.component(.day, from: date) == day else { return nil }
        return date.addingTimeInterval(-Double(offset ?? 0))
    }

    private static func monthNumber(_ token: Substring) -> Int? {
        guard token.count >= 3, let index = months.firstIndex(where: { token.hasPrefix($0) }) else { return nil }
        let names = [
            "january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
            "november", "december",
        ]
        return names[index].hasPrefix(token) || token.count == 3 ? index + 1 : nil
    }

    /// `GMT`, `UTC`, `Z`, `+0200`, `-07:00`: seconds east of UTC.
    private static func zoneOffset(_ token: String) -> Int? {
        if ["gmt", "utc", "ut", "z"].contains(token) { return 0 }
        guard let sign = token.first, sign == "+" || sign == "-" else { return nil }
        let digits = token.dropFirst().filter { $0 != ":" }
        guard digits.count == 4, digits.allSatisfy(\.isNumber), let value = Int(digits) else { return nil }
        let seconds = (value / 100) * 3600 + (value % 100) * 60
        guard value / 100 <= 14, value % 100 < 60 else { return nil }
        return sign == "+" ? seconds : -seconds
    }

    /// `08:49:37`, `12:18`, `12:18:00z`, `12:18:00+02:00`.
    private static func timeOfDay(_ token: String) -> (clock: (hour: Int, minute: Int, second: Int), zone: Int?)? {
        var body = Substring(token)
        var zone: Int?
        if body.hasSuffix("z") {
            zone = 0
            body = body.dropLast()
        } else if let sign = body.lastIndex(where: { $0 == "+" || $0 == "-" }) {
            guard let parsed = zoneOffset(String(body[sign...])) else { return nil }
            zone = parsed
            body = body[..<sign]
        }
        if let dot = body.firstIndex(of: ".") { body = body[..<dot] }  // fractions of a second
        let parts = body.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2 || parts.count == 3, parts.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isNumber) }) else {
            return nil
        }
        return ((Int(parts[0])!, Int(parts[1])!, parts.count == 3 ? Int(parts[2])! : 0), zone)
    }

    /// A leading `YYYY-MM-DD` (then `T` or a space and the rest), else `nil`.
    private static func isoDate(_ text: String) -> (year: Int, month: Int, day: Int, rest: String)? {
        let scalars = Array(text)
        guard scalars.count >= 10, scalars[4] == "-", scalars[7] == "-",
            let year = Int(String(scalars[0..<4])), let month = Int(String(scalars[5..<7])), let day = Int(String(scalars[8..<10])),
            String(scalars[0..<4]).allSatisfy(\.isNumber)
        else { return nil }
        var rest = String(scalars[10...])
        if rest.hasPrefix("T") || rest.hasPrefix("t") { rest.removeFirst() }
        return (year, month, day, rest)
    }
}
