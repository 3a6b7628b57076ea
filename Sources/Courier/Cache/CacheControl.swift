import Foundation
internal import CourierSupport

/// The directives of `Cache-Control` fields (RFC 9111 §5.2, RFC 5861), parsed tolerantly.
///
/// Malformed input takes the conservative reading rather than failing:
/// - a directive whose name is not a clean token (`max-age =5`) is ignored as an extension;
/// - a delta-seconds value that is not all digits (`3600.0`, `-1`, `'5'`, `5s`) counts as `0`,
///   so a bad `max-age` makes the response stale rather than fresh; a quoted value (`"3600"`) is
///   accepted, as RFC 9111 §5.2 asks recipients to;
/// - values beyond 2^31 are clamped there (RFC 9111 §1.2.2);
/// - a directive given twice with different values keeps the smaller one (RFC 9111 §4.2.1 allows
///   "the response should be considered stale"; the smaller lifetime is the closest reading);
/// - directive names are compared without case; commas inside quoted strings do not split
///   (`ext="max-age=9"` is one unknown directive).
struct CacheControl: Sendable, Equatable {
    /// The largest delta-seconds kept (RFC 9111 §1.2.2).
    static let maximumDelta = 2_147_483_648

    var maxAge: Int?
    var sharedMaxAge: Int?
    var noStore = false
    /// Unqualified `no-cache`: the response must be validated before every reuse.
    var noCache = false
    /// `no-cache="a, b"`: those fields may not be reused without validation.
    var noCacheFields: [String] = []
    var isPrivate = false
    var isPublic = false
    var mustRevalidate = false
    var proxyRevalidate = false
    var mustUnderstand = false
    var immutable = false
    var noTransform = false
    var staleWhileRevalidate: Int?
    var staleIfError: Int?
    // Request directives.
    /// `max-stale` alone accepts any staleness (``maximumDelta``).
    var maxStale: Int?
    var minFresh: Int?
    var onlyIfCached = false

    init() {}

    /// Parses every line of `Cache-Control` (the caller passes `headers.values("Cache-Control")`).
    init(lines: [String]) {
        for line in lines {
            for element in CacheHeaders.splitList(line) { apply(element) }
        }
    }

    /// Parses one combined value.
    init(_ value: String?) {
        self.init(lines: value.map { [$0] } ?? [])
    }

    private mutating func apply(_ element: String) {
        // Bytes, not `Character`s: every decision reads the field (a directive's name is ASCII).
        let name: Substring
        let value: String?
        if let equals = element.utf8.firstIndex(of: UInt8(ascii: "=")) {
            name = element[..<equals]
            value = String(element[element.utf8.index(after: equals)...])
        } else {
            name = Substring(element)
            value = nil
        }
        // A name holding blanks (`max-age =5`) is not a token: an unknown extension.
        guard !name.isEmpty, !name.utf8.contains(where: { $0 == 0x20 || $0 == 0x09 || $0 == UInt8(ascii: "\"") }) else { return }
        switch ASCIICase.lowercased(String(name)) {
        case "max-age": maxAge = Self.merged(maxAge, Self.delta(value))
        case "s-maxage": sharedMaxAge = Self.merged(sharedMaxAge, Self.delta(value))
        case "no-store": noStore = true
        case "no-cache":
            if let value, case let fields = CacheHeaders.splitList(Self.unquoted(value)), !fields.isEmpty {
                noCacheFields += fields
            } else {
                noCache = true
            }
        case "private": isPrivate = true
        case "public": isPublic = true
        case "must-revalidate": mustRevalidate = true
        case "proxy-revalidate": proxyRevalidate = true
        case "must-understand": mustUnderstand = true
        case "immutable": immutable = true
        case "no-transform": noTransform = true
        case "stale-while-revalidate": staleWhileRevalidate = Self.merged(staleWhileRevalidate, Self.delta(value))
        case "stale-if-error": staleIfError = Self.merged(staleIfError, Self.delta(value))
        case "max-stale":
            // Without a value: any staleness. A bad value reads as 0 (accept nothing stale).
            maxStale = Self.merged(maxStale, value == nil ? Self.maximumDelta : Self.delta(value))
        case "min-fresh": minFresh = Self.merged(minFresh, Self.delta(value))
        case "only-if-cached": onlyIfCached = true
        default: break
        }
    }

    /// Two occurrences with different values: the smaller (the conservative reading).
    private static func merged(_ existing: Int?, _ new: Int) -> Int {
        existing.map { min($0, new) } ?? new
    }

    /// A delta-seconds value: digits only (a quoted string of digits too), clamped to 2^31;
    /// anything else, or nothing, is 0.
    static func delta(_ value: String?) -> Int {
        guard let value else { return 0 }
        return parseDigits(unquoted(value)) ?? 0
    }

    /// Digits only, clamped to ``maximumDelta``; `nil` for anything else (empty, sign, dot, letters).
    static func parseDigits(_ text: some StringProtocol) -> Int? {
        guard !text.isEmpty else { return nil }
        var result = 0
        for byte in text.utf8 {
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            result = min(result * 10 + Int(byte - 0x30), maximumDelta)
        }
        return result
    }

    /// The inside of a quoted string (escapes removed), or the value as it is.
    static func unquoted(_ value: String) -> String {
        guard value.utf8.count >= 2, value.utf8.first == UInt8(ascii: "\""), value.utf8.last == UInt8(ascii: "\"") else { return value }
        var result = ""
        var escaped = false
        for character in value.dropFirst().dropLast() {
            if escaped {
                result.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else {
                result.append(character)
            }
        }
        return result
    }
}
