import Foundation
internal import CourierSupport

/// The rules of a private HTTP cache (RFC 9111, RFC 5861), as pure functions: every input is a
/// value, the time is an argument, nothing reads a clock, a file or a socket. The decisions
/// return what to do (CachePolicy+Decision.swift); `ResponseCache` and the transfer perform it.
enum CachePolicy {
    /// Status codes a response may be stored with heuristically (RFC 9110 §15.1).
    static let heuristicallyCacheable: Set<Int> = [200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]

    /// Status codes this cache understands (RFC 9110): what `must-understand` requires.
    static let understood: Set<Int> = Set([200, 201, 202, 203, 204, 205, 300, 301, 302, 303, 307, 308])
        .union(400...417).union([421, 422, 426]).union(500...505).subtracting([306, 418])

    /// Fields never stored (RFC 9111 §3.1): hop-by-hop, connection and proxy ones.
    static let unstoredFields: [String] = [
        "connection", "keep-alive", "proxy-connection", "te", "transfer-encoding", "upgrade",
        "proxy-authenticate", "proxy-authentication-info", "proxy-authorization",
    ]

    /// Fields a `304` or a `HEAD` never replaces in a stored response: they describe the stored
    /// body, which the new head did not carry (RFC 9111 §3.2).
    static let bodyFields: Set<String> = ["content-length", "content-encoding", "content-range", "transfer-encoding"]

    /// The key of a URL: the URL as sent, without its fragment. A different query is a different key.
    static func key(for url: URL) -> String {
        var text = url.absoluteString
        // Bytes, not `Character`s: this runs for every request the cache sees.
        let hash = text.withUTF8 { bytes in bytes.firstIndex(of: UInt8(ascii: "#")) }
        guard let hash else { return text }
        return String(decoding: text.utf8.prefix(hash), as: UTF8.self)
    }

    /// The request methods whose answers are stored and reused.
    static func isCacheableMethod(_ method: String) -> Bool { method == "GET" || method == "HEAD" }

    /// The request methods that never invalidate (RFC 9110 §9.2.1 safe methods).
    static func isSafeMethod(_ method: String) -> Bool {
        switch method {
        case "GET", "HEAD", "OPTIONS", "TRACE": return true
        default: return false
        }
    }

    // MARK: - Storing (RFC 9111 §3)

    /// Whether a private cache may store `response` to `request` (RFC 9111 §3, §5.2): a GET, a
    /// final status it understands when `must-understand` asks, no `no-store` either way (unless
    /// `must-understand` overrides it), no `Vary: *`, and something that makes reuse possible:
    /// explicit freshness, `public`/`private`, or a heuristically cacheable status. A request's
    /// `Authorization` does not prevent it: this cache is private (§3.5).
    /// `directives`: the response's `Cache-Control`, when the caller parsed it already.
    static func isStorable(request: CacheRequest, response: CacheResponseHead, directives parsed: CacheControl? = nil) -> Bool {
        guard request.method == "GET", response.status >= 200, response.status != 206, response.status != 304 else { return false }
        // A request that asked for a range or made its own condition is the caller's business.
        if hasOwnConditions(request) { return false }
        let requestLines = request.headers.values("Cache-Control")
        if !requestLines.isEmpty, CacheControl(lines: requestLines).noStore { return false }
        let directives = parsed ?? CacheControl(lines: response.headers.values("Cache-Control"))
        if directives.mustUnderstand {
            guard understood.contains(response.status) else { return false }
        } else if directives.noStore {
            return false
        }
        if varyNames(response.headers) == nil { return false }
        return directives.maxAge != nil || response.headers.contains("Expires") || directives.isPublic
            || directives.isPrivate || heuristicallyCacheable.contains(response.status)
    }

    /// Whether the caller's request carries its own precondition or range: such a request
    /// bypasses the cache both ways (its answer is for the caller's own bookkeeping).
    static func hasOwnConditions(_ request: CacheRequest) -> Bool {
        request.headers.fields.contains { field in
            // One pass over the fields: `If-*` and `Range` are the only names starting so.
            guard let first = field.name.utf8.first, first | 0x20 == UInt8(ascii: "i") || first | 0x20 == UInt8(ascii: "r") else {
                return false
            }
            return conditionFields.contains { CacheHeaders.sameName(field.name, $0) }
        }
    }

    private static let conditionFields = ["If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since", "If-Range", "Range"]

    /// The fields to store from `headers`: without hop-by-hop fields, those `Connection` lists
    /// and those a qualified `no-cache` names (reused only after validation, so simply not kept).
    /// `directives`: the `Cache-Control` of `headers`, when the caller parsed it already.
    static func storedHeaders(_ headers: CacheHeaders, directives: CacheControl? = nil) -> CacheHeaders {
        // Names compared in place (a handful per response): no lower-cased copies, no hashing.
        let dropped =
            unstoredFields + headers.listElements("Connection")
            + (directives ?? CacheControl(lines: headers.values("Cache-Control"))).noCacheFields
        func isDropped(_ field: CacheHeaders.Field) -> Bool { dropped.contains { ASCIICase.equals($0, field.name) } }
        // Usually nothing is: the fields are kept as they are, without a new array.
        guard headers.fields.contains(where: isDropped) else { return headers }
        return CacheHeaders(headers.fields.filter { !isDropped($0) })
    }

    // MARK: - Freshness (RFC 9111 §4.2)

    /// How long `head` is fresh from its generation, in seconds (§4.2.1). A private cache ignores
    /// `s-maxage`. `max-age` wins over `Expires`; an `Expires` that is not a valid date means
    /// already expired; with neither, 10 % of the time since `Last-Modified` for a heuristically
    /// cacheable status or a `public` response (§4.2.2); otherwise 0.
    static func freshnessLifetime(_ head: CacheEntryHead, directives given: CacheControl? = nil) -> TimeInterval {
        let directives = given ?? head.directives
        if let maxAge = directives.maxAge { return TimeInterval(maxAge) }
        let date = dateValue(head)
        if let expires = head.headers["Expires"] {
            guard head.headers.values("Expires").count == 1, let expiry = HTTPDate.parse(expires) else { return 0 }
            return max(0, expiry.timeIntervalSince(date))
        }
        guard heuristicallyCacheable.contains(head.status) || directives.isPublic,
            let lastModified = HTTPDate.parse(head.headers["Last-Modified"])
        else { return 0 }
        return max(0, date.timeIntervalSince(lastModified) / 10)
    }

    /// Whether the lifetime comes from the heuristic (the response named none).
    static func isHeuristic(_ head: CacheEntryHead) -> Bool {
        head.directives.maxAge == nil && !head.headers.contains("Expires")
    }

    /// The `Date` of the response, or when it arrived when it has none (or none that parses).
    static func dateValue(_ head: CacheEntryHead) -> Date {
        head.date ?? head.responseTime
    }

    /// The `Age` the response came with: the first element of the first line, digits only,
    /// clamped to 2^31; anything else is ignored (0).
    static func ageValue(_ headers: CacheHeaders) -> TimeInterval {
        guard let line = headers.values("Age").first, let first = line.split(separator: ",", omittingEmptySubsequences: false).first,
            let age = CacheControl.parseDigits(CacheHeaders.trimmed(first))
        else { return 0 }
        return TimeInterval(age)
    }

    /// The current age of `head` at `now` (RFC 9111 §4.2.3).
    static func currentAge(_ head: CacheEntryHead, now: Date) -> TimeInterval {
        let apparentAge = max(0, head.responseTime.timeIntervalSince(dateValue(head)))
        let responseDelay = max(0, head.responseTime.timeIntervalSince(head.requestTime))
        let correctedAgeValue = ageValue(head.headers) + responseDelay
        let correctedInitialAge = max(apparentAge, correctedAgeValue)
        let residentTime = max(0, now.timeIntervalSince(head.responseTime))
        return correctedInitialAge + residentTime
    }

    /// Freshness left at `now` in seconds (negative once stale: how stale it is).
    static func freshnessLeft(_ head: CacheEntryHead, now: Date, directives: CacheControl? = nil) -> TimeInterval {
        freshnessLifetime(head, directives: directives) - currentAge(head, now: now)
    }
}
