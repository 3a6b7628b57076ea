import Foundation

/// A body held in memory — a data or upload task's, or the error page of a stream whose head was
/// refused — and the one bound on it.
///
/// URLSession on Linux has no back-pressure and decodes gzip without limit (Docs/Platform.md §2.9):
/// the cap on decoded bytes is the only bound on memory, checked against the length a response
/// announces and against every chunk. A pure value, kept in `TransferTask`'s state and changed
/// under its lock; what it refuses the task turns into the attempt's failure
/// (`MemoryBodyTests`).
struct MemoryBody {
    /// The most bytes held (``SessionManager/Configuration/maximumResponseSize``).
    let limit: Int
    /// The bytes held.
    private(set) var data = Data()

    init(limit: Int) { self.limit = limit }

    /// A new body starts, announcing `expectedLength` bytes: `false` when that is over the limit
    /// (refused before any of it arrives); otherwise room is made for it.
    mutating func expect(_ expectedLength: Int64?) -> Bool {
        guard let expectedLength else { return true }
        guard expectedLength <= Int64(limit) else { return false }
        if expectedLength > 0, data.isEmpty { data.reserveCapacity(Int(expectedLength)) }
        return true
    }

    /// What became of a chunk.
    enum Chunk: Equatable {
        case appended
        /// The chunk goes on past the end (exclusive) of the range a 206 announced.
        case pastRange(end: Int64)
        /// The body would grow past ``limit``.
        case tooLarge
    }

    /// Appends `chunk` to a body of which `received` bytes are held (a body continued with `Range`
    /// counts what earlier attempts brought), whose current 206 ends at `spanEnd`.
    mutating func append(_ chunk: Data, received: Int64, spanEnd: Int64?) -> Chunk {
        let after = received + Int64(chunk.count)
        if let spanEnd, after > spanEnd { return .pastRange(end: spanEnd) }
        guard after <= Int64(limit) else { return .tooLarge }
        data.append(chunk)
        return .appended
    }

    /// Drops the bytes held (a new body starts), keeping the room made for them.
    mutating func reset() { data.removeAll(keepingCapacity: true) }

    /// Hands the bytes over at completion and holds nothing more.
    mutating func take() -> Data {
        defer { data = Data() }
        return data
    }
}
