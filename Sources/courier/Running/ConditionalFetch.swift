import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier
import CourierSupport

/// curl's conditional-fetch options of `courier get`, with curl's meanings: `-z`/`--time-cond`,
/// `--etag-compare`, `--etag-save` (Docs/CommandLine.md, "Conditional downloads").
///
/// The decisions are pure (dates and file contents come in as arguments); ``resolve(_:now:)``
/// reads the files once when the command starts.
struct ConditionalFetch: Equatable {
    /// What `-z` asks of the server's copy.
    enum TimeCondition: Equatable {
        /// `-z DATE|FILE`: only a copy modified after the date (`If-Modified-Since`).
        case modifiedSince(Date)
        /// `-z -DATE|-FILE`: only a copy not modified since the date (`If-Unmodified-Since`).
        case unmodifiedSince(Date)
    }

    /// The time condition, if `-z` gave one that could be read.
    var time: TimeCondition?
    /// `--etag-compare`: the `If-None-Match` value read from the file.
    var ifNoneMatch: String?
    /// `--etag-save`: where the response's ETag goes once the file is saved.
    var etagSaveFile: String?

    /// Whether the request carries a condition, so that a 304 means "nothing to do".
    var isConditional: Bool { time != nil || ifNoneMatch != nil }

    /// The request headers the conditions add.
    var headers: [(name: String, value: String)] {
        var headers: [(name: String, value: String)] = []
        switch time {
        case .modifiedSince(let date): headers.append(("If-Modified-Since", Self.httpDate(date)))
        case .unmodifiedSince(let date): headers.append(("If-Unmodified-Since", Self.httpDate(date)))
        case nil: break
        }
        if let ifNoneMatch { headers.append(("If-None-Match", ifNoneMatch)) }
        return headers
    }

    // MARK: - Reading the options (the only file access before the request)

    /// The conditions `options` ask for, and the warnings to print (curl's: an unreadable date
    /// that names no file drops the time condition; a missing `--etag-compare` file is an empty
    /// ETag). Creates the `--etag-save` file, empty, when it does not exist, as curl does; a file
    /// that cannot be created is an error (exit 6) rather than curl's skipped transfer.
    static func resolve(_ options: GetCommand.Options) throws(GetFailure) -> (ConditionalFetch, warnings: [String]) {
        var fetch = ConditionalFetch()
        var warnings: [String] = []
        if let text = options.timeCondition {
            let (condition, warning) = timeCondition(text, fileTime: modificationTime(of:))
            fetch.time = condition
            if let warning { warnings.append(warning) }
        }
        if let path = options.etagCompare {
            let contents: String?
            if let data = FileManager.default.contents(atPath: path) {
                contents = String(decoding: data, as: UTF8.self)
            } else {
                contents = nil
                warnings.append("cannot read the --etag-compare file \(path); sending an empty ETag (If-None-Match: \"\")")
            }
            fetch.ifNoneMatch = ifNoneMatch(fromFile: contents)
        }
        if let path = options.etagSave {
            // Opened for appending, as curl does: an existing file keeps its ETag until a new one comes.
            let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else {
                throw GetFailure(
                    ExitCode.fileSystem,
                    "cannot create the --etag-save file \(path): \(String(cString: strerror(errno))); nothing was downloaded")
            }
            close(descriptor)
            fetch.etagSaveFile = path
        }
        return (fetch, warnings)
    }

    /// A file's modification time, or `nil` when it cannot be read.
    static func modificationTime(of path: String) -> Date? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Date(timeIntervalSince1970: Double(info.st_mtim.tv_sec))
    }

    /// `-z`'s argument read curl's way: a leading `-` asks for `If-Unmodified-Since` (a leading
    /// `+` is the default, `If-Modified-Since`); the rest is a date, else a file whose
    /// modification time is taken. Neither: no condition, and a warning.
    static func timeCondition(_ text: String, fileTime: (String) -> Date?) -> (TimeCondition?, warning: String?) {
        var rest = Substring(text)
        var unmodified = false
        if rest.first == "-" {
            unmodified = true
            rest = rest.dropFirst()
        } else if rest.first == "+" {
            rest = rest.dropFirst()
        }
        guard let date = parseDate(String(rest)) ?? fileTime(String(rest)) else {
            return (nil, "-z '\(text)' is neither a date nor an existing file; downloading without a time condition")
        }
        return (unmodified ? .unmodifiedSince(date) : .modifiedSince(date), nil)
    }

    /// `--etag-compare`'s file: its first line, trimmed; missing or empty means `""` (curl sends
    /// `If-None-Match: ""`, which no real ETag matches).
    static func ifNoneMatch(fromFile contents: String?) -> String {
        let line = contents?.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).first ?? ""
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        return trimmed.isEmpty ? "\"\"" : trimmed
    }

    // MARK: - Deciding on the answer

    /// curl's own check when a server ignores the condition and sends the body anyway: a 2xx
    /// whose `Last-Modified` shows the condition unmet is treated as a 304 (nothing written).
    /// No `Last-Modified`, or one that cannot be read, meets it.
    static func meets(_ condition: TimeCondition, lastModified: String?) -> Bool {
        guard let lastModified, let modified = parseDate(lastModified) else { return true }
        switch condition {
        case .modifiedSince(let date): return modified > date
        case .unmodifiedSince(let date): return modified < date
        }
    }

    /// Why a response head was refused: the time condition is not met (``meets(_:lastModified:)``).
    struct ConditionUnmet: Error, CustomStringConvertible {
        var description: String { "the server's copy does not meet the -z time condition" }
    }

    /// The validation a conditional download runs with: the default, plus curl's check of the
    /// time condition at the response head (before any byte is written).
    func validation() -> Validation {
        guard let time else { return .default }
        return Validation.default.validateHead { _, response throws(ConditionUnmet) in
            guard (200..<300).contains(response.statusCode) else { return }
            if !Self.meets(time, lastModified: response.value(forHTTPHeaderField: "Last-Modified")) { throw ConditionUnmet() }
        }
    }

    /// Whether `error` says the server's copy is not wanted (a 304, or the condition checked at
    /// the head): the command then ends with success and writes nothing, as curl does.
    func isNotModified(_ error: any Error) -> Bool {
        guard isConditional, let error = error as? CourierError else { return false }
        if error.code == .unacceptableStatusCode, error.statusCode == 304 { return true }
        return error.code == .unacceptableResponse && error.underlyingError is ConditionUnmet
    }

    /// What `--etag-save` writes for `response`: its ETag and a newline; `nil` (the file is left
    /// as it is) without one, and for responses other than 2xx and 3xx, as curl does.
    static func savedETag(from response: HTTPURLResponse?) -> String? {
        guard let response, (200..<400).contains(response.statusCode),
            let etag = response.value(forHTTPHeaderField: "ETag")?.trimmingCharacters(in: .whitespaces), !etag.isEmpty
        else { return nil }
        return etag + "\n"
    }

    /// Writes the ETag of `response` into the `--etag-save` file (replacing what it held), if
    /// there is one to write. Called only once the body is saved, or for a 304: an ETag saved for
    /// a body that never arrived would make the next `--etag-compare` skip it for good.
    func saveETag(from response: HTTPURLResponse?) throws(GetFailure) {
        guard let path = etagSaveFile, let line = Self.savedETag(from: response) else { return }
        do {
            try Data(line.utf8).write(to: URL(fileURLWithPath: path))
        } catch {
            throw GetFailure(ExitCode.fileSystem, "cannot write the --etag-save file \(path): \(error.localizedDescription)")
        }
    }

    // MARK: - Dates

    /// `date` as an IMF-fixdate (RFC 9110 §5.6.7): `Sun, 06 Nov 1994 08:49:37 GMT`.
    static func httpDate(_ date: Date) -> String { HTTPDate.format(date) }

    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    private static let weekdays = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]

    /// A date as people and servers write it, read liberally as curl's `-z` does: the three HTTP
    /// forms (`Sun, 06 Nov 1994 08:49:37 GMT`, `Sunday, 06-Nov-94 08:49:37 GMT`,
    /// `Sun Nov  6 08:49:37 1994`), curl's examples (`Wed 01 Sep 2021 12:18:00`, `Jan 10, 2017`,
    /// `Sun, 12 Sep 2004 15:05:58 -0700`), ISO 8601 (`2021-09-01`, `2021-09-01T12:18:00Z`,
    /// `2021-09-01 12:18:00+02:00`) and `20210901`. Without a zone the time is UTC; without a
    /// time, midnight. Anything else, or an impossible date, is `nil`.
    static func parseDate(_ text: String) -> Date? {
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
