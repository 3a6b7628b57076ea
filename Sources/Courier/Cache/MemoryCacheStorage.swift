import Foundation
internal import CourierSupport

/// Entries in memory, bounded by bytes, the least recently used evicted first.
final class MemoryCacheStorage: CacheStorage {
    private struct State {
        var variants: [String: [CacheVariant]] = [:]
        var entries: [CacheVariant: CacheEntry] = [:]
        var order = LRUList<CacheVariant>()
        var bytes = 0
    }

    let maximumBytes: Int
    private let state = Locked(State())

    init(maximumBytes: Int) {
        self.maximumBytes = max(0, maximumBytes)
    }

    var byteCount: Int { state.withLock { $0.bytes } }

    func entries(for key: String) -> [CacheEntry] {
        state.withLock { state in (state.variants[key] ?? []).compactMap { state.entries[$0] } }
    }

    @discardableResult func store(_ entry: CacheEntry) -> Bool {
        let size = entry.byteCount
        guard size <= maximumBytes else {
            remove(entry.head.variant)
            return false
        }
        state.withLock { state in
            let variant = entry.head.variant
            // Replaced in place (every miss of a stored URL replaces its entry): one hash of the
            // variant instead of a removal and an insertion. The newest variant of a key is first.
            if let replaced = state.entries.updateValue(entry, forKey: variant) {
                state.bytes -= replaced.byteCount
                if state.variants[variant.key]?.first != variant {
                    state.variants[variant.key]?.removeAll { $0 == variant }
                    state.variants[variant.key, default: []].insert(variant, at: 0)
                }
            } else {
                state.variants[variant.key, default: []].insert(variant, at: 0)
            }
            state.order.touch(variant)
            state.bytes += size
            while state.bytes > maximumBytes, let oldest = state.order.oldest { Self.remove(oldest, from: &state) }
        }
        return true
    }

    func update(_ head: CacheEntryHead) {
        state.withLock { state in
            guard var entry = state.entries[head.variant] else { return }
            state.bytes -= entry.byteCount
            entry.head = head
            state.bytes += entry.byteCount
            state.entries[head.variant] = entry
            state.order.touch(head.variant)
            while state.bytes > maximumBytes, let oldest = state.order.oldest { Self.remove(oldest, from: &state) }
        }
    }

    func touch(_ variant: CacheVariant) {
        state.withLock { state in if state.entries[variant] != nil { state.order.touch(variant) } }
    }

    func remove(_ variant: CacheVariant) {
        state.withLock { Self.remove(variant, from: &$0) }
    }

    func remove(key: String) {
        state.withLock { state in
            for variant in state.variants[key] ?? [] { Self.remove(variant, from: &state) }
        }
    }

    func removeAll() {
        state.withLock { $0 = State() }
    }

    private static func remove(_ variant: CacheVariant, from state: inout State) {
        guard let entry = state.entries.removeValue(forKey: variant) else { return }
        state.bytes -= entry.byteCount
        state.order.remove(variant)
        state.variants[variant.key]?.removeAll { $0 == variant }
        if state.variants[variant.key]?.isEmpty == true { state.variants[variant.key] = nil }
    }
}
