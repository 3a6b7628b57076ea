import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
internal import CourierSupport

/// A private HTTP cache (RFC 9111) for a ``SessionManager``'s data tasks, in memory or on disk.
///
/// Set it as ``SessionManager/Configuration/responseCache`` (the default, `nil`, caches nothing).
/// Data and upload tasks — and so `decodable` and ``HTTPClient`` calls — look it up after their
/// adapters ran: a fresh stored answer completes the task without a round trip; a stale one with
/// a validator is revalidated (`If-None-Match`/`If-Modified-Since`, the `304` merged); a stored
/// answer is used when the origin cannot be reached where RFC 9111 and RFC 5861 allow it.
/// Streams, event streams and split downloads never use it; file downloads only under
/// ``DownloadPolicy/responseCache``. Every answer that went through the cache
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
    /// Variants being revalidated in the background (`stale-while-revalidate`): one request each,
    /// however many stale answers are served meanwhile.
    private let revalidating = Locked(Set<CacheVariant>())

    init(storage: any CacheStorage) {
        self.storage = storage
    }

    /// Whether a background revalidation of `variant` may start now (none runs); the caller
    /// calls ``endRevalidation(_:)`` when it ends.
    func beginRevalidation(_ variant: CacheVariant) -> Bool {
        revalidating.withLock { $0.insert(variant).inserted }
    }

    func endRevalidation(_ variant: CacheVariant) {
        _ = revalidating.withLock { $0.remove(variant) }
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
        // A stored part (a 206) is never a whole answer.
        guard let entry = entries.first(where: { $0.head.status != 206 && CachePolicy.varyMatches($0.head, request: cacheRequest) }),
            let response = HTTPURLResponse(
                url: url, statusCode: entry.head.status, httpVersion: "HTTP/1.1", headerFields: entry.head.headers.dictionary)
        else { return nil }
        return CachedResponse(response: response, data: entry.body, isStorable: true)
    }
}
