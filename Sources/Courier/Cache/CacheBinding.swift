import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a data task needs of its manager's cache: the cache, the header names kept only as
/// hashes, and how to revalidate in the background (`stale-while-revalidate`).
struct CacheBinding: Sendable {
    let cache: ResponseCache
    /// Lower-cased header names never stored in clear (the manager's sensitive headers).
    let secrets: Set<String>
    /// Starts a background revalidation of `request` on the manager (its answer refreshes the
    /// entry), then calls the closure when it ended.
    let revalidate: @Sendable (URLRequest, @escaping @Sendable () -> Void) -> Void
    /// A file download's binding (``DownloadCaching``): only whole stored answers serve it, fresh
    /// or revalidated with a `304`; it is never answered stale, nor with a part.
    var forDownload = false

    var storage: any CacheStorage { cache.storage }
}

/// What the cache decided before an attempt was sent, carried to the task's completion.
struct CacheExchange: Sendable {
    let request: CacheRequest
    /// The request's URL key (``CachePolicy/key(for:)``), computed once.
    let key: String
    /// The stored response the attempt's validators came from.
    let validating: CacheEntry?
    /// A stored response that may answer if the origin fails.
    let fallback: CacheEntry?
    /// Why the request was forwarded (`uri-miss`, `stale`…), for `Cache-Status`.
    let why: String
    let requestTime: Date
    let cacher: ResponseCacher?
}

/// A stored answer that completes a task without (more) network.
struct CacheAnswer: Sendable {
    let response: HTTPURLResponse
    let data: Data
    let outcome: ResponseCache.Outcome
}

extension CacheBinding {
    /// What a task does with `request` before sending it.
    enum Lookup: Sendable {
        /// Complete the task with this answer.
        case answer(CacheAnswer)
        /// Send this request (validators added); its answer goes through ``settle(_:)``.
        case send(URLRequest, CacheExchange)
    }

    /// Looks `request` up (after its adapters ran) and decides (``CachePolicy/decide(_:candidates:now:secrets:)``).
    func lookup(_ request: URLRequest, cacher: ResponseCacher?) -> Lookup? {
        guard let url = request.url, url.scheme == "http" || url.scheme == "https" else { return nil }
        let now = Date()
        let cacheRequest = Self.cacheRequest(request, url: url)
        let key = CachePolicy.key(for: url)
        let candidates = CachePolicy.isCacheableMethod(cacheRequest.method) ? storage.entries(for: key) : []
        var decision = CachePolicy.decide(cacheRequest, candidates: candidates.map(\.head), now: now, secrets: secrets)
        if forDownload { decision = Self.downloadDecision(decision) }
        var sent = request
        // FoundationNetworking has no cache (`urlCache = nil`): what the policy asked was done here.
        // Set only when it differs: each change of a URLRequest copies it.
        if sent.cachePolicy != .useProtocolCachePolicy { sent.cachePolicy = .useProtocolCachePolicy }
        func exchange(validating: CacheEntry?, fallback: CacheEntry?, why: String) -> CacheExchange {
            CacheExchange(
                request: cacheRequest, key: key, validating: validating, fallback: fallback, why: why, requestTime: now, cacher: cacher)
        }
        switch decision {
        case .serve(let index):
            let entry = candidates[index]
            storage.touch(entry.head.variant)
            let ttl = CachePolicy.freshnessLeft(entry.head, now: now)
            return .answer(served(entry, for: cacheRequest, now: now, status: CachePolicy.cacheStatus(hit: true, ttl: ttl), outcome: .hit))
        case .serveStale(let index, let revalidating):
            let entry = candidates[index]
            storage.touch(entry.head.variant)
            if revalidating, cache.beginRevalidation(entry.head.variant) {
                var background = request
                background.cachePolicy = .reloadRevalidatingCacheData
                let variant = entry.head.variant
                revalidate(background) { [cache] in cache.endRevalidation(variant) }
            }
            let status = CachePolicy.cacheStatus(
                hit: true, ttl: CachePolicy.freshnessLeft(entry.head, now: now),
                detail: revalidating ? "stale-while-revalidate" : nil)
            return .answer(served(entry, for: cacheRequest, now: now, status: status, outcome: .stale))
        case .serveRange(let index, let answer, let stale):
            let entry = candidates[index]
            // Checked against the stored length already; a body of another length is asked for anew.
            guard answer.bodyRange.upperBound <= entry.body.count else {
                return .send(sent, exchange(validating: nil, fallback: nil, why: "partial"))
            }
            storage.touch(entry.head.variant)
            let ttl = CachePolicy.freshnessLeft(entry.head, now: now)
            return .answer(
                servedRange(
                    entry, answer, url: url, now: now, status: CachePolicy.cacheStatus(hit: true, ttl: ttl), outcome: stale ? .stale : .hit)
            )
        case .validate(let index, let conditions):
            for condition in conditions { sent.setValue(condition.value, forHTTPHeaderField: condition.name) }
            return .send(sent, exchange(validating: candidates[index], fallback: candidates[index], why: "stale"))
        case .forward(let fallback, let why):
            return .send(sent, exchange(validating: nil, fallback: fallback.map { candidates[$0] }, why: why))
        case .gatewayTimeout:
            var headers = CacheHeaders([("Content-Length", "0")])
            headers.append("Cache-Status", CachePolicy.cacheStatus(hit: false, forward: "miss", detail: "only-if-cached"))
            let response = HTTPURLResponse(url: url, statusCode: 504, httpVersion: "HTTP/1.1", headerFields: headers.dictionary)!
            return .answer(CacheAnswer(response: response, data: Data(), outcome: .miss))
        }
    }

    /// What a download does instead of `decision`: the download machinery takes a whole `200`,
    /// a `304` to the stored entry's validators (its body is then staged, as a hit's is) or an
    /// error status, so stale fallbacks, background revalidations and ranges become plain
    /// forwards (whose answer replaces the entry).
    static func downloadDecision(_ decision: CacheDecision) -> CacheDecision {
        switch decision {
        case .serve, .serveStale(_, revalidate: false), .gatewayTimeout, .validate: return decision
        case .serveStale: return .forward(fallback: nil, why: "stale")
        case .serveRange: return .forward(fallback: nil, why: "partial")
        case .forward(_, let why): return .forward(fallback: nil, why: why)
        }
    }

    /// The request as the rules see it, with `URLRequest.cachePolicy` as Darwin documents it.
    static func cacheRequest(_ request: URLRequest, url: URL) -> CacheRequest {
        let mode: CacheMode
        switch request.cachePolicy {
        case .reloadIgnoringLocalCacheData, .reloadIgnoringLocalAndRemoteCacheData: mode = .reloadIgnoringCache
        case .reloadRevalidatingCacheData: mode = .reloadRevalidating
        case .returnCacheDataElseLoad: mode = .returnCacheElseLoad
        case .returnCacheDataDontLoad: mode = .returnCacheDontLoad
        default: mode = .protocolPolicy
        }
        let fields = (request.allHTTPHeaderFields ?? [:]).map { ($0.key, $0.value) }
        return CacheRequest(method: request.httpMethod ?? "GET", url: url, headers: CacheHeaders(fields), mode: mode)
    }

    /// A stored entry as an answer: its fields with the current `Age` and `Cache-Status`; no body for a HEAD.
    func served(_ entry: CacheEntry, for request: CacheRequest, now: Date, status: String, outcome: ResponseCache.Outcome) -> CacheAnswer {
        let headers = CachePolicy.servedHeaders(entry.head, now: now, status: status)
        let url = URL(string: entry.head.url) ?? request.url
        let response = HTTPURLResponse(url: url, statusCode: entry.head.status, httpVersion: "HTTP/1.1", headerFields: headers.dictionary)!
        return CacheAnswer(response: response, data: request.method == "HEAD" ? Data() : entry.body, outcome: outcome)
    }

    /// Part of a stored entry as the answer to a `Range` request: a `206` with the slice, or a `416`.
    func servedRange(
        _ entry: CacheEntry, _ answer: CacheRangeAnswer, url: URL, now: Date, status: String, outcome: ResponseCache.Outcome
    ) -> CacheAnswer {
        let headers = CachePolicy.rangeHeaders(CachePolicy.servedHeaders(entry.head, now: now, status: status), answer: answer)
        let response = HTTPURLResponse(
            url: URL(string: entry.head.url) ?? url, statusCode: answer.status, httpVersion: "HTTP/1.1", headerFields: headers.dictionary)!
        // Offsets from the body's start (a `Data` slice's indices need not start at 0).
        let bytes = Data(entry.body.dropFirst(answer.bodyRange.lowerBound).prefix(answer.bodyRange.count))
        return CacheAnswer(response: response, data: bytes, outcome: outcome)
    }

    /// The fields of a live response.
    static func headers(of response: HTTPURLResponse) -> CacheHeaders {
        let fields = response.allHeaderFields
        var pairs: [CacheHeaders.Field] = []
        pairs.reserveCapacity(fields.count)
        for (key, value) in fields {
            // `key.base`: a cast from `AnyHashable` itself goes through its box first.
            guard let name = key.base as? String else { continue }
            pairs.append(CacheHeaders.Field(name: name, value: value as? String ?? String(describing: value)))
        }
        return CacheHeaders(pairs)
    }
}
