import Foundation
internal import CourierSupport

extension DownloadList {
    /// What a ``DownloadList`` has taken, one small mark per download line rather than the lines
    /// themselves: which file each line saves to, so a second line saving to the same file is
    /// caught as soon as it is read, and which queue item each line is, so the input's items are told
    /// from other items in the queue.
    ///
    /// The cost is one 16-byte digest of the output path, one of the item id and the line number per
    /// line read: 48 bytes, 64 to 128 with the dictionary's spare room (about 100 MB for a million
    /// lines).
    /// It grows with the lines read, which the command reads only as fast as downloads finish; the
    /// queue's own record of each item, kept for reruns, is several times larger.
    struct Ledger: Sendable {
        /// The first 128 bits of a SHA-256: no two of a run's paths or ids share one by chance.
        private struct Digest: Hashable, Sendable {
            let high: UInt64
            let low: UInt64

            init(_ text: String) {
                let hash = SHA256.hash(Data(text.utf8))
                high = hash[0..<8].reduce(0) { $0 << 8 | UInt64($1) }
                low = hash[8..<16].reduce(0) { $0 << 8 | UInt64($1) }
            }
        }

        private struct Mark: Sendable {
            let line: Int
            let item: Digest
        }

        /// By the output path's digest.
        private var marks: [Digest: Mark] = [:]

        /// Lines recorded.
        var count: Int { marks.count }

        /// Records that line `line` saves to `destination` as item `id`; returns the number of an
        /// earlier line that saves to the same file (and then records nothing).
        mutating func record(line: Int, destination: URL, id: String) -> Int? {
            let key = Digest(destination.path)
            if let earlier = marks[key] { return earlier.line }
            marks[key] = Mark(line: line, item: Digest(id))
            return nil
        }

        /// Whether a line read so far is this item (same output path, same id).
        func lists(_ item: DownloadQueue.Item) -> Bool {
            marks[Digest(item.destination.path)]?.item == Digest(item.id)
        }
    }
}
