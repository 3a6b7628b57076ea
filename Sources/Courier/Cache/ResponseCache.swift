import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A private HTTP cache (RFC 9111) for a ``SessionManager``'s data tasks, in memory or on disk.
///
/// Set it as ``SessionManager/Configuration/responseCache`` (the default, `nil`, caches nothing).
/// Data and upload tasks — and so `decodable` and ``HTTPClient`` calls — look it up after their
/// adapters ran: a fresh stored answer completes the task without a round trip; a stale one with
/// a validator is revalidated (`If-None-Match`/`If-Modified-Since`, the `304` merged); a stored
/// answer is used when the origin cannot be reached where RFC 9111 and RFC 5861 allow it.
/// Streams, event streams and downloads never use it. Every answer that went through the cache
/// carries a `Cache-Status` field (RFC 9211) and says where it came from in
/// ``DataResponse/cacheOutcome``. Docs/Caching.md has the rules.
///
/// One cache may serve several managers; a disk cache's directory may be shared by several
/// processes.
public final class ResponseCache: Sendable {
    /// Where an answer came from.
    public enum Outcome: String, Sendable, Codable, Equatable {
        /// A fresh stored answer; nothing was sent.
        case hit
        /// A stored answer the origin confirmed with `304 Not Modified`.
        case revalidated
        /// The origin's answer (stored if the rules allow).
        case miss
        /// A stale stored answer: allowed by the request (`max-stale`, `returnCacheDataElseLoad`)
        /// or the response (`stale-while-revalidate`), or served because the origin failed.
        case stale
    }

    let storage: any CacheStorage

    init(storage: any CacheStorage) {
        self.storage = storage
    }

    /// A cache in this process's memory, holding at most `maximumBytes` (bodies and fields); the
    /// least recently used answers go first.
    public static func memory(maximumBytes: Int) -> ResponseCache {
        ResponseCache(storage: MemoryCacheStorage(maximumBytes: maximumBytes))
    }

    /// A cache in `directory` (created 0700 when missing), holding at most `maximumBytes`.
    /// It survives restarts and a crash at any moment (an entry is whole or absent, checked on
    /// every read), and processes sharing the directory are safe (Docs/Caching.md). Throws
    /// ``CourierError/Code-swift.struct/fileSystem`` when the directory cannot be created, is not
    /// a directory, or belongs to another user.
    public static func disk(directory: URL, maximumBytes: Int) throws -> ResponseCache {
        ResponseCache(storage: try DiskCacheStorage(directory: directory, maximumBytes: maximumBytes))
    }

    /// The bytes held now (bodies, fields and bookkeeping). For a disk cache: as this process
    /// last counted them (another process's writes are counted at its next eviction).
    public var currentBytes: Int { storage.byteCount }

    /// The most bytes held.
    public var maximumBytes: Int { storage.maximumBytes }

    /// Removes every stored answer.
    public func removeAll() { storage.removeAll() }

    /// Removes every stored answer (all variants) for `request`'s URL.
    public func removeResponse(for request: URLRequest) {
        guard let url = request.url else { return }
        removeResponse(for: url)
    }

    /// Removes every stored answer (all variants) for `url`.
    public func removeResponse(for url: URL) {
        storage.remove(key: CachePolicy.key(for: url))
    }

    /// The stored answer `request` would get now without going to the network — fresh or
    /// not — or `nil`. Nothing changes (no eviction order, no revalidation).
    public func storedResponse(for request: URLRequest) -> CachedResponse? {
        guard let url = request.url else { return nil }
        let cacheRequest = CacheRequest(method: "GET", url: url, headers: CacheHeaders(request.allHTTPHeaderFields.map { Array($0) } ?? []))
        let entries = storage.entries(for: CachePolicy.key(for: url))
        guard let entry = entries.first(where: { CachePolicy.varyMatches($0.head, request: cacheRequest) }),
            let response = HTTPURLResponse(url: url, statusCode: entry.head.status, httpVersion: "HTTP/1.1", headerFields: entry.head.headers.dictionary)
        else { return nil }
        return CachedResponse(response: response, data: entry.body, isStorable: true)
    }
}

/// A response about to be stored, as a ``ResponseCacher`` sees it.
public struct CachedResponse: Sendable {
    /// The response as it will be stored (hop-by-hop fields already left out).
    public var response: HTTPURLResponse
    /// The body.
    public var data: Data
    /// Whether the rules of RFC 9111 let a private cache store it. A ``ResponseCacher/modify(_:)``
    /// closure may set it to `true` to store what the server marked `no-store` (or to `false`).
    public var isStorable: Bool
    /// A freshness lifetime replacing the server's (stored as `Cache-Control: max-age`); `nil`
    /// keeps the server's.
    public var lifetime: Duration?

    /// A response with `data`; `isStorable` says whether to store it.
    public init(response: HTTPURLResponse, data: Data, isStorable: Bool, lifetime: Duration? = nil) {
        self.response = response
        self.data = data
        self.isStorable = isStorable
        self.lifetime = lifetime
    }
}

/// Decides what a task stores in the ``ResponseCache`` (Alamofire's `ResponseCacher`,
/// AFNetworking's `setDataTaskWillCacheResponseBlock:`): per manager
/// (``SessionManager/Configuration/responseCacher``) or per task (``CourierTask/cacheResponse(using:)``).
/// Without one, the rules of RFC 9111 decide (``cache``). Overriding them is never the default.
public struct ResponseCacher: Sendable {
    enum Behavior: Sendable {
        case cache
        case doNotCache
        case modify(@Sendable (CachedResponse) -> CachedResponse?)
    }
    let behavior: Behavior

    /// Stores what the rules of RFC 9111 allow (the default).
    public static let cache = ResponseCacher(behavior: .cache)
    /// Stores nothing from this task.
    public static let doNotCache = ResponseCacher(behavior: .doNotCache)
    /// Lets `transform` change what is stored — the response, the body, whether it is stored
    /// (``CachedResponse/isStorable``, which may override `no-store`) and its lifetime; `nil`
    /// stores nothing. It runs once per storable candidate, off any lock, on the queue the
    /// transfer ended on; keep it quick.
    public static func modify(_ transform: @escaping @Sendable (CachedResponse) -> CachedResponse?) -> ResponseCacher {
        ResponseCacher(behavior: .modify(transform))
    }
}
