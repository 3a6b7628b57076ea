import Foundation
internal import CourierSupport

/// A response's status and header fields.
struct CacheResponseHead: Sendable, Equatable {
    var status: Int
    var headers: CacheHeaders
}

/// One stored response (a variant of a URL), without its body: what the rules read.
///
/// It never holds the request's `Authorization` or `Cookie` values: of the request it keeps only
/// the fields its `Vary` names, normalised, and a secret one (credentials, cookies, the
/// manager's sensitive headers) only as a SHA-256 (CachePolicy+Vary.swift).
struct CacheEntryHead: Sendable, Equatable, Codable {
    /// The URL key (``CachePolicy/key(for:)``).
    var key: String
    /// The URL as requested, to rebuild the `HTTPURLResponse`.
    var url: String
    var status: Int
    var headers: CacheHeaders {
        didSet {
            date = HTTPDate.parse(headers.values("Date").first)
            directives = CacheControl(lines: headers.values("Cache-Control"))
        }
    }
    /// The `Date` field parsed, once per change of ``headers`` (`nil`: none, or not a date): every
    /// lookup needs it, and parsing it each time cost a lookup a tenth of its time.
    private(set) var date: Date?
    /// The `Cache-Control` fields parsed, once per change of ``headers``: every lookup reads them.
    /// Not stored on disk (derived from ``headers``).
    private(set) var directives: CacheControl
    /// The request fields the response varies on, normalised (``CachePolicy/varyValues(names:request:secrets:)``).
    var vary: [VaryValue]
    /// When the request that fetched or last validated it was sent (RFC 9111 §4.2.3 `request_time`).
    var requestTime: Date
    /// When its head arrived (`response_time`).
    var responseTime: Date
    /// The body's length in bytes.
    var bodyLength: Int

    /// `directives`: the `Cache-Control` of `headers` when the caller parsed it already.
    init(
        key: String, url: String, status: Int, headers: CacheHeaders, vary: [VaryValue], requestTime: Date, responseTime: Date,
        bodyLength: Int, directives: CacheControl? = nil
    ) {
        self.key = key
        self.url = url
        self.status = status
        self.headers = headers
        self.date = HTTPDate.parse(headers.values("Date").first)
        self.directives = directives ?? CacheControl(lines: headers.values("Cache-Control"))
        self.vary = vary
        self.requestTime = requestTime
        self.responseTime = responseTime
        self.bodyLength = bodyLength
    }

    // The fields kept on disk: the derived ones (`date` is kept too, as it always was) come from `headers`.
    private enum CodingKeys: String, CodingKey {
        case key, url, status, headers, date, vary, requestTime, responseTime, bodyLength
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            key: try container.decode(String.self, forKey: .key), url: try container.decode(String.self, forKey: .url),
            status: try container.decode(Int.self, forKey: .status), headers: try container.decode(CacheHeaders.self, forKey: .headers),
            vary: try container.decode([VaryValue].self, forKey: .vary), requestTime: try container.decode(Date.self, forKey: .requestTime),
            responseTime: try container.decode(Date.self, forKey: .responseTime),
            bodyLength: try container.decode(Int.self, forKey: .bodyLength))
    }

    /// One request field `Vary` names: its normalised value, or `nil` when the request lacked it.
    struct VaryValue: Sendable, Hashable, Codable {
        var name: String
        var value: String?
    }

    /// The bytes this head accounts for in a store (fields and bookkeeping, not the body).
    var byteCount: Int {
        headers.byteCount + key.utf8.count + url.utf8.count + vary.reduce(0) { $0 + $1.name.utf8.count + ($1.value?.utf8.count ?? 0) } + 96
    }

    var response: CacheResponseHead { CacheResponseHead(status: status, headers: headers) }

    /// What tells two variants of one URL apart: a new response for the same request values
    /// replaces the old one.
    var variant: CacheVariant { CacheVariant(key: key, vary: vary) }
}

/// One variant of a URL key: the key and the request values its `Vary` named.
struct CacheVariant: Sendable, Hashable {
    var key: String
    var vary: [CacheEntryHead.VaryValue]
}

/// A stored response with its body.
struct CacheEntry: Sendable, Equatable {
    var head: CacheEntryHead
    var body: Data

    /// The bytes it costs a store.
    var byteCount: Int { head.byteCount + body.count }
}
