import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The chunks a stream holds for its consumer, copied into one ring in an anonymous mapping of
/// Courier's own, with their lengths kept so the consumer gets them as the network cut them.
///
/// Why not keep the `Data` chunks: they are allocated on whichever thread libcurl ran and freed
/// on the consumer's, so with a slow consumer each of glibc's per-thread arenas in turn ends up
/// holding up to a buffer's worth of chunks, and keeps those pages after they are freed. Measured
/// with `courier-bench stream --overflow pause --consume-mib-s 80` over 256 MiB: a 16 MiB limit
/// peaked at 87 MiB RSS with 8 arenas and 55 MiB with one. A chunk copied in here is freed at
/// once (in its own arena), and the ring's pages are returned with `munmap` when the stream ends.
///
/// Not thread-safe: ``StreamBuffer`` uses it under its lock only.
final class ByteRing {
    private var base: UnsafeMutableRawPointer?
    private var capacity = 0
    /// Whether `base` came from `mmap` (else from the allocator, when mapping failed).
    private var isMapped = false
    /// Offset of the first byte held.
    private var start = 0
    /// Bytes held.
    private(set) var count = 0
    private var lengths: [Int] = []
    private var lengthsHead = 0

    /// The smallest mapping: 64 KiB.
    private static let minimumCapacity = 64 * 1024
    /// What the ring is expected to hold at most (the stream's limit plus a chunk): growth stops
    /// there instead of doubling past it, because a ring touches every page of its mapping in turn.
    private let expectedMaximum: Int

    init(expectedMaximum: Int) {
        self.expectedMaximum = expectedMaximum
    }

    deinit {
        release()
    }

    /// Whether no chunk is held.
    var isEmpty: Bool { lengthsHead == lengths.count }

    /// Copies `data` in as the last chunk (an empty one is ignored).
    func append(_ data: Data) {
        guard !data.isEmpty else { return }
        if count + data.count > capacity { grow(toHold: count + data.count) }
        guard let base else { return }
        var end = (start + count) % capacity
        data.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let run = min(bytes.count - offset, capacity - end)
                (base + end).copyMemory(from: bytes.baseAddress! + offset, byteCount: run)
                offset += run
                end = (end + run) % capacity
            }
        }
        count += data.count
        lengths.append(data.count)
    }

    /// Takes the first chunk out, as a new `Data`.
    func removeFirst() -> Data? {
        guard !isEmpty, let base else { return nil }
        let length = lengths[lengthsHead]
        lengthsHead += 1
        if lengthsHead == lengths.count {
            lengths.removeAll(keepingCapacity: true)
            lengthsHead = 0
        } else if lengthsHead >= 1024, lengthsHead * 2 >= lengths.count {
            lengths.removeFirst(lengthsHead)
            lengthsHead = 0
        }
        var chunk = Data(count: length)
        chunk.withUnsafeMutableBytes { out in
            var offset = 0
            while offset < length {
                let run = min(length - offset, capacity - start)
                out.baseAddress!.advanced(by: offset).copyMemory(from: base + start, byteCount: run)
                offset += run
                start = (start + run) % capacity
            }
        }
        count -= length
        if count == 0 { start = 0 }
        return chunk
    }

    /// Drops every chunk (the mapping stays for reuse).
    func removeAll() {
        lengths.removeAll()
        lengthsHead = 0
        count = 0
        start = 0
    }

    /// Returns the mapping's pages.
    func release() {
        if let base { Self.free(base, capacity: capacity, mapped: isMapped) }
        base = nil
        capacity = 0
        removeAll()
    }

    /// Moves the bytes held into a mapping that holds at least `needed` bytes.
    private func grow(toHold needed: Int) {
        var newCapacity = max(Self.minimumCapacity, capacity * 2, needed)
        if newCapacity > expectedMaximum { newCapacity = max(needed, expectedMaximum) }
        let page = 64 * 1024
        newCapacity = (newCapacity + page - 1) / page * page
        // A mapping of its own, so the pages go back to the system when it is unmapped; the
        // allocator only if mapping fails (which then fails as any allocation would).
        var mappedFresh = true
        var mapped: UnsafeMutableRawPointer
        if let region = mmap(nil, newCapacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
            region != MAP_FAILED
        {
            mapped = region
        } else {
            mapped = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
            mappedFresh = false
        }
        if let base, count > 0 {
            let first = min(count, capacity - start)
            mapped.copyMemory(from: base + start, byteCount: first)
            if first < count { (mapped + first).copyMemory(from: base, byteCount: count - first) }
        }
        if let base { Self.free(base, capacity: capacity, mapped: isMapped) }
        base = mapped
        capacity = newCapacity
        isMapped = mappedFresh
        start = 0
    }

    private static func free(_ base: UnsafeMutableRawPointer, capacity: Int, mapped: Bool) {
        if mapped { munmap(base, capacity) } else { base.deallocate() }
    }
}
