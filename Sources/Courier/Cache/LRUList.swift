/// The order of use of a store's entries, least recent first, with O(1) touch, insert and
/// removal: a doubly linked list threaded through a dictionary (no class nodes, so the value
/// is `Sendable` and lives inside a store's one locked state).
struct LRUList<Key: Hashable & Sendable>: Sendable {
    private struct Links: Sendable {
        var previous: Key?
        var next: Key?
    }
    private var links: [Key: Links] = [:]
    private(set) var oldest: Key?
    private var newest: Key?

    var count: Int { links.count }

    func contains(_ key: Key) -> Bool { links[key] != nil }

    /// Makes `key` the most recently used (inserting it when absent).
    mutating func touch(_ key: Key) {
        if links[key] != nil {
            guard newest != key else { return }
            remove(key)
        }
        links[key] = Links(previous: newest, next: nil)
        if let newest { links[newest]?.next = key }
        newest = key
        if oldest == nil { oldest = key }
    }

    /// Removes `key` if present.
    mutating func remove(_ key: Key) {
        guard let link = links.removeValue(forKey: key) else { return }
        if let previous = link.previous { links[previous]?.next = link.next } else { oldest = link.next }
        if let next = link.next { links[next]?.previous = link.previous } else { newest = link.previous }
    }

    mutating func removeAll() {
        links.removeAll()
        oldest = nil
        newest = nil
    }
}
