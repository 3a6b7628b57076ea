import Foundation

/// Where a ``ResponseCache`` keeps its entries: in memory, or in a directory. Every method is
/// safe from any thread; none calls user code.
protocol CacheStorage: AnyObject, Sendable {
    /// The stored variants of `key`, most recently stored first. An entry that cannot be read
    /// whole (damaged, truncated) is left out and removed: a miss, never wrong bytes.
    func entries(for key: String) -> [CacheEntry]
    /// Stores `entry`, replacing the variant with the same request values; evicts the least
    /// recently used entries past the limit. `false` when it was not stored (larger than the
    /// limit, or the disk refused it).
    @discardableResult func store(_ entry: CacheEntry) -> Bool
    /// Replaces the stored head of `head.variant` (a 304 or a HEAD refreshed it), keeping the body.
    func update(_ head: CacheEntryHead)
    /// Notes a use of `variant`, for the eviction order.
    func touch(_ variant: CacheVariant)
    /// Removes one variant.
    func remove(_ variant: CacheVariant)
    /// Removes every variant of `key`.
    func remove(key: String)
    func removeAll()
    /// The bytes held (bodies, fields and bookkeeping).
    var byteCount: Int { get }
    /// The limit ``byteCount`` is kept under.
    var maximumBytes: Int { get }
}
