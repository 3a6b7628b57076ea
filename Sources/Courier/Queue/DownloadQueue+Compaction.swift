import Foundation

/// When a queue's journal is rewritten as one record per item, and what that snapshot holds: one
/// rule for both writers of the journal format, ``DownloadQueue`` (one process) and
/// ``JournalQueueStore``, each of which hands the snapshot to `Journal.compact(to:)`.
extension DownloadQueue.QueueState {
    /// The snapshot to replace a journal of `journalBytes` with, once it holds twice what the
    /// snapshot would (and more than ``compactionFloor``): appends stay O(1), and the file stays proportional
    /// to the queue, also after many items were removed. `nil` when it is not due.
    ///
    /// The snapshot is one `add` record per item in the order they were added, each with its
    /// state now; a running item is recorded as just started (its progress lives in its resume
    /// record), as a replay after a crash would start it. Each item's size is then its record in
    /// the snapshot: an item's state (a long failure message) can make it far larger than the
    /// `add` first written, and counted at that size the snapshot itself would be "twice the
    /// live bytes", compacted again at every change.
    mutating func compactionSnapshot(journalBytes: Int64) -> [Data]? {
        guard journalBytes > compactionFloor, journalBytes > 2 * max(liveBytes, 1) else { return nil }
        return items.values.sorted { $0.sequence < $1.sequence }.map { item -> Data in
            var item = item
            if case .running = item.state { item.state = .running(received: 0, total: nil) }
            let record = DownloadQueue.Record.add(item).encoded()
            noteSize(item.id, record.count)
            return record
        }
    }
}
