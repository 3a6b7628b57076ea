
/// The per-task delegate table: URLSession task identifier → the Courier object driving that
/// transfer. One lock around one dictionary; the router only looks things up here.
///
/// Identifiers restart at 1 in every URLSession (PLATFORM §2.8), so a table belongs to exactly
/// one session. Entries are added just before a task is resumed and removed when URLSession
/// reports the task complete, so the table is empty whenever nothing is running.
final class TaskDelegateTable: Sendable {
    private let entries = Locked<[Int: any TaskDelegate]>([:])

    func insert(_ delegate: any TaskDelegate, for taskIdentifier: Int) {
        entries.withLock { $0[taskIdentifier] = delegate }
    }

    func delegate(for taskIdentifier: Int) -> (any TaskDelegate)? {
        entries.withLock { $0[taskIdentifier] }
    }

    @discardableResult
    func remove(_ taskIdentifier: Int) -> (any TaskDelegate)? {
        entries.withLock { $0.removeValue(forKey: taskIdentifier) }
    }

    var count: Int { entries.withLock { $0.count } }
}
