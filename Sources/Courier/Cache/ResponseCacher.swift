import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

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
