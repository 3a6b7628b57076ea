import Foundation
internal import CourierSupport

/// What the cache does with a request, decided by ``CachePolicy/decide(_:candidates:now:secrets:)``;
/// the driver performs it.
enum CacheDecision: Sendable, Equatable {
    /// Answer with the stored response at `index` of the candidates: it is fresh enough.
    case serve(Int)
    /// Answer with the stored response at `index` although it is stale, because the request
    /// (`max-stale`, `returnCacheDataElseLoad`) or the response (`stale-while-revalidate`)
    /// allows it; with `revalidate`, refresh it in the background.
    case serveStale(Int, revalidate: Bool)
    /// Send the request with these validators; a `304` refreshes the stored response at `index`.
    case validate(Int, conditions: [CacheHeaders.Field])
    /// Send the request as it is. `fallback`: a stored response that may answer if the origin
    /// cannot be reached (stale-if-error, or disconnected), `why` says why it was forwarded
    /// (for `Cache-Status`: `uri-miss`, `vary-miss`, `stale`, `request`, `method`, `bypass`).
    case forward(fallback: Int?, why: String)
    /// `only-if-cached` (or `returnCacheDataDontLoad`) with nothing usable: answer `504`.
    case gatewayTimeout
    /// Answer a `Range` request with part of the stored response at `index` (a `206`, or a `416`
    /// when the range selects nothing of a whole response); `stale` when the request accepted a
    /// stale one.
    case serveRange(Int, CacheRangeAnswer, stale: Bool)
}

/// Why a forwarded request failed, for serving stale (RFC 9111 §4.2.4, RFC 5861 §4).
enum CacheFailure: Sendable, Equatable {
    /// No answer: the connection could not be made or broke (the cache is "disconnected").
    case transport
    /// An answer with this status.
    case status(Int)
}

extension CachePolicy {
    /// Decides what to do with `request` given the stored responses for its URL key, newest
    /// first (RFC 9111 §4). Pure: `now` is the time.
    static func decide(_ request: CacheRequest, candidates: [CacheEntryHead], now: Date, secrets: Set<String> = []) -> CacheDecision {
        guard isCacheableMethod(request.method) else { return .forward(fallback: nil, why: "method") }
        if let range = requestedRange(request) {
            return decideRange(request, range: range, candidates: candidates, now: now, secrets: secrets)
        }
        return decideWhole(request, candidates: candidates, now: now, secrets: secrets, partial: false)
    }

    /// A single-range `GET` (RFC 9111 §3.3, §4.3.5 for 206): decided as the same request without
    /// `Range` would be, over whole and partial entries; a usable stored response answers the
    /// range if it holds it (``rangeAnswer(_:range:)``). Anything else goes to the origin as it
    /// is, without validators or a stale fallback: its `206` is stored as a partial entry.
    private static func decideRange(
        _ request: CacheRequest, range: CacheByteRange, candidates: [CacheEntryHead], now: Date, secrets: Set<String>
    ) -> CacheDecision {
        var whole = request
        whole.headers.remove("Range")
        let onlyCached = request.mode == .returnCacheDontLoad || CacheControl(lines: request.headers.values("Cache-Control")).onlyIfCached
        switch decideWhole(whole, candidates: candidates, now: now, secrets: secrets, partial: true) {
        case .serve(let index):
            if let answer = rangeAnswer(candidates[index], range: range) { return .serveRange(index, answer, stale: false) }
        case .serveStale(let index, revalidate: false):
            if let answer = rangeAnswer(candidates[index], range: range) { return .serveRange(index, answer, stale: true) }
        case .forward(_, let why):
            return .forward(fallback: nil, why: why)
        case .gatewayTimeout:
            return .gatewayTimeout
        case .validate, .serveStale, .serveRange:
            return onlyCached ? .gatewayTimeout : .forward(fallback: nil, why: "stale")
        }
        return onlyCached ? .gatewayTimeout : .forward(fallback: nil, why: "partial")
    }

    /// The decision for a request answered whole; `partial`: stored `206` entries may be chosen
    /// too (for a range request only: a partial entry never answers as a whole one).
    private static func decideWhole(
        _ request: CacheRequest, candidates: [CacheEntryHead], now: Date, secrets: Set<String>, partial: Bool
    ) -> CacheDecision {
        let directives = CacheControl(lines: request.headers.values("Cache-Control"))
        let onlyCached = request.mode == .returnCacheDontLoad || directives.onlyIfCached
        if hasOwnConditions(request) { return onlyCached ? .gatewayTimeout : .forward(fallback: nil, why: "bypass") }
        if request.mode == .reloadIgnoringCache || directives.noStore {
            return .forward(fallback: nil, why: "request")
        }
        guard let index = candidates.firstIndex(where: { varyMatches($0, request: request, secrets: secrets) }) else {
            if onlyCached { return .gatewayTimeout }
            return .forward(fallback: nil, why: candidates.isEmpty ? "uri-miss" : "vary-miss")
        }
        let head = candidates[index]
        if head.status == 206 && !partial {
            // Part of a representation: never an answer to a whole request, nor its fallback.
            return onlyCached ? .gatewayTimeout : .forward(fallback: nil, why: "partial")
        }
        let stored = head.directives
        switch request.mode {
        case .returnCacheElseLoad, .returnCacheDontLoad:
            // Darwin's meaning: whatever its age.
            return freshnessLeft(head, now: now, directives: stored) > 0 ? .serve(index) : .serveStale(index, revalidate: false)
        case .reloadRevalidating:
            return validation(index, head) ?? .forward(fallback: nil, why: "request")
        case .protocolPolicy, .reloadIgnoringCache:
            break
        }
        // `Pragma: no-cache` counts only when the request has no Cache-Control (RFC 9111 §5.4).
        let pragmaNoCache =
            !request.headers.contains("Cache-Control")
            && request.headers.listElements("Pragma").contains { $0.lowercased() == "no-cache" }
        if directives.noCache || pragmaNoCache {
            if onlyCached { return .gatewayTimeout }
            return validation(index, head) ?? .forward(fallback: nil, why: "request")
        }
        let lifetime = freshnessLifetime(head, directives: stored)
        let age = currentAge(head, now: now)
        let left = lifetime - age
        if !stored.noCache {
            let fresh = left > 0
            let youngEnough = directives.maxAge.map { age <= TimeInterval($0) } ?? true
            let freshEnough = directives.minFresh.map { left >= TimeInterval($0) } ?? true
            if fresh && youngEnough && freshEnough { return .serve(index) }
            // Stale: the client may accept it, unless the response forbids stale reuse.
            if !fresh && !stored.mustRevalidate {
                if let maxStale = directives.maxStale, -left <= TimeInterval(maxStale), youngEnough, freshEnough {
                    return .serveStale(index, revalidate: false)
                }
                if let window = stored.staleWhileRevalidate, -left <= TimeInterval(window), directives.maxAge == nil,
                    directives.minFresh == nil, !onlyCached
                {
                    return .serveStale(index, revalidate: true)
                }
            }
        }
        if onlyCached { return .gatewayTimeout }
        return validation(index, head) ?? .forward(fallback: index, why: "stale")
    }

    /// A conditional request for the stored response at `index`, if it has a validator.
    private static func validation(_ index: Int, _ head: CacheEntryHead) -> CacheDecision? {
        let conditions = conditionalHeaders(for: head)
        return conditions.isEmpty ? nil : .validate(index, conditions: conditions)
    }

    /// The validators to send for `head` (RFC 9111 §4.3.1): `If-None-Match` with its `ETag`
    /// (quoted if the origin sent it bare), `If-Modified-Since` with its `Last-Modified`.
    static func conditionalHeaders(for head: CacheEntryHead) -> [CacheHeaders.Field] {
        var fields: [CacheHeaders.Field] = []
        if let etag = head.headers["ETag"]?.trimmingCharacters(in: .whitespaces), !etag.isEmpty {
            let quoted = etag.hasPrefix("\"") || etag.hasPrefix("W/") ? etag : "\"\(etag)\""
            fields.append(.init(name: "If-None-Match", value: quoted))
        }
        if let lastModified = head.headers["Last-Modified"], HTTPDate.parse(lastModified) != nil {
            fields.append(.init(name: "If-Modified-Since", value: lastModified))
        }
        return fields
    }

    /// Whether the stored `head` may answer at `now` after forwarding failed (RFC 9111 §4.2.4,
    /// RFC 5861 §4): never when it requires validation (`must-revalidate`, `no-cache`) or the
    /// request asked for no cached answer; with `stale-if-error` (response or request) within its
    /// window for a failure or a 500, 502, 503 or 504; and, without it, only when the origin could not
    /// be reached at all (the cache is "disconnected").
    static func mayServeStale(_ head: CacheEntryHead, request: CacheRequest, after failure: CacheFailure, now: Date) -> Bool {
        let stored = head.directives
        let asked = CacheControl(lines: request.headers.values("Cache-Control"))
        guard !stored.mustRevalidate, !stored.noCache, !stored.proxyRevalidate, stored.sharedMaxAge == nil,
            !asked.noCache, !asked.noStore, request.mode == .protocolPolicy || request.mode == .returnCacheElseLoad
        else { return false }
        let errorStatus: Bool
        switch failure {
        case .transport: errorStatus = true
        case .status(let status): errorStatus = [500, 502, 503, 504].contains(status)
        }
        guard errorStatus else { return false }
        let staleness = -freshnessLeft(head, now: now)
        if let window = asked.staleIfError ?? stored.staleIfError { return staleness <= TimeInterval(window) }
        if let maxStale = asked.maxStale, staleness <= TimeInterval(maxStale) { return true }
        return failure == .transport
    }
}
