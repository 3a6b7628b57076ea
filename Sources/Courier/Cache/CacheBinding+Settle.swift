import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension CacheBinding {
    /// What the cache does with a forwarded request's outcome, before validation and
    /// serialization see it: a `304` merged into the stored response (which is answered), a stale
    /// answer where the failure allows one, invalidation after an unsafe method, a `HEAD`'s
    /// answer refreshing the stored `GET`, and storing a complete answer the rules (and the
    /// cacher) allow. Runs once, after the transfer's lock was released.
    func settle(_ outcome: TransferOutcome) -> TransferOutcome {
        guard let exchange = outcome.cache else { return outcome }
        let now = Date()
        if let error = outcome.error {
            guard !error.isCancellation, error.code.isTransport || error.code == .timedOut, let fallback = exchange.fallback,
                CachePolicy.mayServeStale(fallback.head, request: exchange.request, after: .transport, now: now)
            else { return mark(outcome, .miss) }
            let status = CachePolicy.cacheStatus(hit: false, forward: "stale", detail: "origin-unreachable")
            return answered(outcome, with: served(fallback, for: exchange.request, now: now, status: status, outcome: .stale))
        }
        guard let response = outcome.response else { return outcome }
        let status = response.statusCode
        let head = CacheResponseHead(status: status, headers: Self.headers(of: response))

        if status == 304, let validating = exchange.validating {
            guard let merged = CachePolicy.freshened(validating.head, with: head, requestTime: exchange.requestTime, responseTime: now)
            else {
                // The transfer asks again without validators when a 304 names another
                // representation (TransferState+FollowUps.swift); this is only reached if that
                // failed too. The stored one is no longer trusted.
                storage.remove(validating.head.variant)
                return stamped(
                    outcome, CachePolicy.cacheStatus(hit: false, forward: exchange.why, forwardStatus: 304, detail: "validator-mismatch"),
                    .miss)
            }
            storage.update(merged)
            let entry = CacheEntry(head: merged, body: validating.body)
            let cacheStatus = CachePolicy.cacheStatus(hit: false, forward: exchange.why, forwardStatus: 304)
            return answered(outcome, with: served(entry, for: exchange.request, now: now, status: cacheStatus, outcome: .revalidated))
        }
        if [500, 502, 503, 504].contains(status), let fallback = exchange.fallback,
            CachePolicy.mayServeStale(fallback.head, request: exchange.request, after: .status(status), now: now)
        {
            let cacheStatus = CachePolicy.cacheStatus(hit: false, forward: "stale", forwardStatus: status, detail: "stale-if-error")
            return answered(outcome, with: served(fallback, for: exchange.request, now: now, status: cacheStatus, outcome: .stale))
        }
        for key in CachePolicy.invalidatedKeys(request: exchange.request, status: status, headers: head.headers) {
            storage.remove(key: key)
        }
        let key = exchange.key
        // A redirect followed inside URLSession answered another URL: not this key's answer.
        let sameURL = response.url.map { $0 == exchange.request.url || CachePolicy.key(for: $0) == key } ?? true
        if exchange.request.method == "HEAD", status == 200, sameURL {
            for entry in storage.entries(for: key)
            where entry.head.status != 206 && CachePolicy.varyMatches(entry.head, request: exchange.request, secrets: secrets) {
                if let updated = CachePolicy.headUpdated(entry.head, with: head, requestTime: exchange.requestTime, responseTime: now) {
                    storage.update(updated)
                } else {
                    storage.remove(entry.head.variant)
                }
            }
        }
        if exchange.request.method == "GET", sameURL, status == 206 {
            storePartial(head, data: outcome.data, exchange: exchange, now: now)
        } else if exchange.request.method == "GET", sameURL, status != 304 {
            _ = store(response, head: head, data: outcome.data, exchange: exchange, now: now)
        }
        // The origin's own answer goes out as it came: no `Cache-Status`. Rebuilding an
        // HTTPURLResponse to add one cost 4 % of a small request on Linux (Docs/Performance.md);
        // ``DataResponse/cacheOutcome`` says `miss`.
        return mark(outcome, .miss)
    }

    /// Stores the answer when the rules (or the cacher) allow; `true` when it was stored.
    private func store(_ response: HTTPURLResponse, head: CacheResponseHead, data: Data, exchange: CacheExchange, now: Date) -> Bool {
        // Parsed once for the three readers: storability, the fields kept, the entry.
        var directives: CacheControl? = CacheControl(lines: head.headers.values("Cache-Control"))
        let storable = CachePolicy.isStorable(request: exchange.request, response: head, directives: directives)
        var headers = CachePolicy.storedHeaders(head.headers, directives: directives)
        var body = data
        var status = head.status
        switch exchange.cacher?.behavior ?? .cache {
        case .cache:
            guard storable else { return false }
        case .doNotCache:
            return false
        case .modify(let transform):
            // Only a final, complete answer to a plain GET is ever offered.
            guard status >= 200, status != 206, !CachePolicy.hasOwnConditions(exchange.request),
                let candidate = HTTPURLResponse(
                    url: exchange.request.url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers.dictionary),
                let changed = transform(CachedResponse(response: candidate, data: data, isStorable: storable)), changed.isStorable
            else { return false }
            headers = CachePolicy.storedHeaders(Self.headers(of: changed.response))
            directives = nil  // the cacher's fields: parsed anew by the entry
            status = changed.response.statusCode
            body = changed.data
            if let lifetime = changed.lifetime {
                let seconds = max(0, Int(lifetime.components.seconds))
                headers.set("Cache-Control", "max-age=\(seconds)")
                headers.remove("Expires")
            }
        }
        guard let names = CachePolicy.varyNames(headers) else { return false }
        // A field dropped from what is kept (a `Connection` or `no-cache="…"` may name
        // Cache-Control itself): the entry parses what it keeps.
        if headers.fields.count != head.headers.fields.count { directives = nil }
        let entryHead = CacheEntryHead(
            key: exchange.key, url: exchange.request.url.absoluteString, status: status,
            headers: headers, vary: CachePolicy.varyValues(names: names, request: exchange.request, secrets: secrets),
            requestTime: exchange.requestTime, responseTime: now, bodyLength: body.count, directives: directives)
        return storage.store(CacheEntry(head: entryHead, body: body))
    }

    /// Stores a `206` that answered a single-range request the cache let through, alone or
    /// combined with the variant's stored part (``CachePolicy/partialToStore(_:body:stored:)``).
    /// The cacher is not offered parts (only complete answers); `.doNotCache` still stores none.
    private func storePartial(_ head: CacheResponseHead, data: Data, exchange: CacheExchange, now: Date) {
        guard CachePolicy.requestedRange(exchange.request) != nil else { return }
        if case .doNotCache = exchange.cacher?.behavior { return }
        // The rules a complete answer meets (no-store, Vary, something making reuse possible);
        // 206 is heuristically cacheable like 200 (RFC 9110 §15.1).
        var whole = exchange.request
        whole.headers.remove("Range")
        guard CachePolicy.isStorable(request: whole, response: CacheResponseHead(status: 200, headers: head.headers)) else { return }
        let headers = CachePolicy.storedHeaders(head.headers)
        guard let names = CachePolicy.varyNames(headers) else { return }
        let incoming = CacheEntryHead(
            key: exchange.key, url: exchange.request.url.absoluteString, status: 206, headers: headers,
            vary: CachePolicy.varyValues(names: names, request: exchange.request, secrets: secrets),
            requestTime: exchange.requestTime, responseTime: now, bodyLength: data.count)
        let stored = storage.entries(for: exchange.key).first { $0.head.variant == incoming.variant }
        if let entry = CachePolicy.partialToStore(incoming, body: data, stored: stored) { storage.store(entry) }
    }

    /// `outcome` answered by the cache: its response and body, no error.
    private func answered(_ outcome: TransferOutcome, with answer: CacheAnswer) -> TransferOutcome {
        var outcome = outcome
        outcome.response = answer.response
        outcome.data = answer.data
        outcome.error = nil
        outcome.metrics.cacheOutcome = answer.outcome
        return outcome
    }

    /// `outcome` with a `Cache-Status` field added to its response.
    private func stamped(_ outcome: TransferOutcome, _ cacheStatus: String, _ result: ResponseCache.Outcome) -> TransferOutcome {
        var outcome = mark(outcome, result)
        guard let response = outcome.response, let url = response.url else { return outcome }
        var fields: [String: String] = [:]
        for (key, value) in response.allHeaderFields {
            if let name = key as? String { fields[name] = value as? String ?? String(describing: value) }
        }
        fields["Cache-Status"] = cacheStatus
        outcome.response = HTTPURLResponse(url: url, statusCode: response.statusCode, httpVersion: "HTTP/1.1", headerFields: fields)
        return outcome
    }

    private func mark(_ outcome: TransferOutcome, _ result: ResponseCache.Outcome) -> TransferOutcome {
        var outcome = outcome
        outcome.metrics.cacheOutcome = result
        return outcome
    }
}
