import Foundation
internal import CourierSupport

extension CachePolicy {
    /// The stored response refreshed by `response`, a `304` (or a `HEAD`'s `200`) that answered a
    /// request validating `head` (RFC 9111 §3.2, §4.3.3–§4.3.5), or `nil` when the answer is not
    /// about that stored response: a different strong `ETag`, or no `ETag` where one was stored
    /// and a different `Last-Modified`. A weak tag matches its stored tag by the weak comparison.
    ///
    /// Every field the answer carries replaces the stored lines of that name, except the ones
    /// never stored (hop-by-hop, `Connection`-listed) and those that describe the stored body
    /// (`Content-Length`, `Content-Encoding`…): the body did not come again. The times are the
    /// new exchange's.
    static func freshened(
        _ head: CacheEntryHead, with response: CacheResponseHead, requestTime: Date, responseTime: Date
    ) -> CacheEntryHead? {
        guard matchesValidators(head, response) else { return nil }
        var updated = head
        let incoming = storedHeaders(response.headers)
        var replaced = Set<String>()
        for field in incoming.fields {
            let name = ASCIICase.lowercased(field.name)
            guard !bodyFields.contains(name) else { continue }
            if replaced.insert(name).inserted { updated.headers.remove(field.name) }
            updated.headers.append(field.name, field.value)
        }
        updated.requestTime = requestTime
        updated.responseTime = responseTime
        return updated
    }

    /// Whether `response` names the same representation as `head` (RFC 9111 §4.3.4): the same
    /// entity tag (weak comparison) when the answer has one; else the same `Last-Modified`
    /// when it has one; an answer with no validator at all is about the one it validated.
    static func matchesValidators(_ head: CacheEntryHead, _ response: CacheResponseHead) -> Bool {
        if let tag = response.headers["ETag"] {
            guard let stored = head.headers["ETag"] else { return false }
            return weakTag(tag) == weakTag(stored)
        }
        if let modified = response.headers["Last-Modified"] {
            guard let stored = head.headers["Last-Modified"] else { return head.headers["ETag"] == nil }
            return HTTPDate.parse(modified) == HTTPDate.parse(stored) && HTTPDate.parse(modified) != nil
        }
        return true
    }

    /// An entity tag without its weakness flag and blanks (the weak comparison, RFC 9110 §8.8.3.2).
    static func weakTag(_ tag: String) -> String {
        var value = tag.trimmingCharacters(in: .whitespaces)
        if value.hasPrefix("W/") { value.removeFirst(2) }
        return value
    }

    /// What a `200` answering a `HEAD` does to the stored `GET` response (RFC 9111 §4.3.5): the
    /// stored one refreshed when the validators and `Content-Length` agree; `nil` when they
    /// differ, and the stored response must go (it no longer describes the resource).
    static func headUpdated(
        _ head: CacheEntryHead, with response: CacheResponseHead, requestTime: Date, responseTime: Date
    ) -> CacheEntryHead? {
        if let length = response.headers["Content-Length"], let stored = head.headers["Content-Length"], length != stored { return nil }
        let hasValidator = response.headers.contains("ETag") || response.headers.contains("Last-Modified")
        guard hasValidator || (!head.headers.contains("ETag") && !head.headers.contains("Last-Modified")) else { return nil }
        return freshened(head, with: response, requestTime: requestTime, responseTime: responseTime)
    }

    // MARK: - Invalidation (RFC 9111 §4.4)

    /// The URL keys to invalidate after `response` (status `status`) to an unsafe `request`: the
    /// target, and the `Location` and `Content-Location` URLs when they share its origin. Nothing
    /// for a safe method or an error status (only 2xx and 3xx invalidate).
    static func invalidatedKeys(request: CacheRequest, status: Int, headers: CacheHeaders) -> [String] {
        guard !isSafeMethod(request.method), (200..<400).contains(status) else { return [] }
        var keys = [key(for: request.url)]
        for name in ["Location", "Content-Location"] {
            guard let value = headers.values(name).first,
                let target = URL(string: value.trimmingCharacters(in: .whitespaces), relativeTo: request.url)?.absoluteURL,
                sameOrigin(target, request.url)
            else { continue }
            let targetKey = key(for: target)
            if !keys.contains(targetKey) { keys.append(targetKey) }
        }
        return keys
    }

    /// Same scheme, host and port.
    static func sameOrigin(_ a: URL, _ b: URL) -> Bool {
        RedirectPolicy.origin(of: a) == RedirectPolicy.origin(of: b)
    }

    // MARK: - Serving

    /// The fields of a stored response as served at `now`: the stored ones, with `Age` replaced
    /// by the current age (RFC 9111 §5.1) and a `Cache-Status` (RFC 9211) saying what the cache did.
    /// `Date` and `Expires` stay as the origin sent them. A stale answer (served with `max-stale`,
    /// `stale-while-revalidate`, `stale-if-error` or while the origin is unreachable) also carries
    /// `Warning: 110`: RFC 9111 retired `Warning`, but clients written for RFC 7234 look for it to
    /// tell a stale answer (`Cache-Status` says the same to newer ones).
    static func servedHeaders(_ head: CacheEntryHead, now: Date, status: String) -> CacheHeaders {
        var headers = head.headers
        let age = currentAge(head, now: now)
        headers.set("Age", String(Int(age.rounded(.down))))
        headers.remove("Cache-Status")
        headers.append("Cache-Status", status)
        if age >= freshnessLifetime(head), !(headers.values("Warning").contains { $0.hasPrefix("110") }) {
            headers.append("Warning", #"110 - "Response is Stale""#)
        }
        return headers
    }

    /// The `Cache-Status` value (RFC 9211) for an outcome: `Courier; hit; ttl=…`,
    /// `Courier; fwd=stale; fwd-status=304`, `Courier; fwd=uri-miss; stored`…
    static func cacheStatus(
        hit: Bool, forward: String? = nil, forwardStatus: Int? = nil, ttl: TimeInterval? = nil, stored: Bool = false,
        detail: String? = nil
    ) -> String {
        var parts = ["Courier"]
        if hit { parts.append("hit") }
        if let forward { parts.append("fwd=\(forward)") }
        if let forwardStatus { parts.append("fwd-status=\(forwardStatus)") }
        if let ttl { parts.append("ttl=\(Int(ttl.rounded(.down)))") }
        if stored { parts.append("stored") }
        if let detail { parts.append("detail=\(detail)") }
        return parts.joined(separator: "; ")
    }
}
