import Foundation

/// A request as the cache's rules see it: method, URL, header fields and the caller's
/// `URLRequest.cachePolicy`, with no I/O behind it.
struct CacheRequest: Sendable, Equatable {
    var method: String
    var url: URL
    var headers: CacheHeaders
    var mode: CacheMode = .protocolPolicy

    init(method: String, url: URL, headers: CacheHeaders = CacheHeaders(), mode: CacheMode = .protocolPolicy) {
        self.method = method.uppercased()
        self.url = url
        self.headers = headers
        self.mode = mode
    }
}

/// `URLRequest.CachePolicy` as Darwin documents its five cases.
enum CacheMode: Sendable, Equatable {
    /// The rules of RFC 9111.
    case protocolPolicy
    /// Never read the cache (the answer may still be stored).
    case reloadIgnoringCache
    /// Validate any stored answer with the origin before using it.
    case reloadRevalidating
    /// Use a stored answer whatever its age; load only without one.
    case returnCacheElseLoad
    /// Use a stored answer whatever its age; never load (a miss is a 504).
    case returnCacheDontLoad
}
