internal import CourierSupport
import Foundation

/// The ``DownloadQueueStore`` of one process: the download queue's own journal file, in a
/// directory of the caller's, written with the records ``DownloadQueue`` writes — byte for byte
/// the same format (Docs/DownloadQueue.md, "The journal format"), so either can open what the
/// other wrote, one at a time (the directory's `lock`).
///
/// One process holds every lease, so leases, tokens and progress live in memory: the journal
/// records an item as `running` when it is leased, and as `completed`, `failed` or `queued` when
/// its lease ends, as the queue does. Reopening after a crash finds the items that were leased
/// `running` and queues them again (their leases died with the process). A lease past its
/// expiry is taken over by the next ``lease(worker:duration:maximumPerHost:)`` as the store
/// protocol says, with a greater token.
public final class JournalQueueStore: DownloadQueueStore {
    /// One lease as the store holds it.
    struct Held {
        var worker: String
        var token: Int64
        var expires: Date
        var received: Int64 = 0
        var resumeRecord: Data?
        /// The connections it holds on its item's host (``DownloadQueue/Lease/connections``).
        var connections = 1
    }

    /// Everything that changes, behind the one lock.
    struct Inner {
        var queue = DownloadQueue.QueueState()
        var leases: [String: Held] = [:]
        var tokens: [String: Int64] = [:]
        /// Files a lease began publishing (``beginPublishing(_:file:)``), until the item's lease ends.
        var publishing: [String: URL] = [:]
        /// The progress of released items, for their next lease (the protocol keeps it).
        var released: [String: (received: Int64, resumeRecord: Data?)] = [:]
        /// Tasks in ``waitForWork(timeout:)``, and a wake-up that came while none waited.
        var waiters: [UUID: CheckedContinuation<Bool, Never>] = [:]
        var wakePending = false
        var closed = false
    }

    /// The queue's directory.
    public let directory: URL
    let journal: Journal
    let clock: @Sendable () -> Date
    let inner: Locked<Inner>

    /// Opens (or creates) the journal in `directory`, as ``DownloadQueue/init(directory:manager:configuration:)``
    /// does, and holds its lock until ``close()``.
    ///
    /// - Parameters:
    ///   - directory: the queue's directory (created 0700 when missing; its parent must exist).
    ///   - clock: the time leases expire by (tests pass their own).
    /// - Throws: ``CourierError/Code-swift.struct/fileSystem`` when the directory cannot be
    ///   created or locked, or its journal is not one this version reads.
    public init(directory: URL, clock: @escaping @Sendable () -> Date = { Date() }) throws(CourierError) {
        let (journal, records, _) = try Journal.open(directory: directory)
        var inner = Inner()
        var skipped: [String] = []
        inner.queue.replay(records, skipped: &skipped)
        self.directory = journal.directory
        self.journal = journal
        self.clock = clock
        self.inner = Locked(inner)
    }

    deinit {
        journal.close()
    }

    /// Releases the directory's lock; later calls throw.
    public func close() {
        let waiters = inner.withLock { inner in
            inner.closed = true
            defer { inner.waiters = [:] }
            return Array(inner.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: false) }
        journal.close()
    }

    /// Waits for an add, or a lease's end, in this process; or `timeout`.
    public func waitForWork(timeout: TimeInterval) async -> Bool {
        let id = UUID()
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let immediate = inner.withLock { inner -> Bool? in
                if inner.wakePending {
                    inner.wakePending = false
                    return true
                }
                if inner.closed { return false }
                inner.waiters[id] = continuation
                return nil
            }
            if let immediate { return continuation.resume(returning: immediate) }
            DispatchQueue.global().asyncAfter(deadline: .now() + max(0, timeout)) { [weak self] in
                self?.inner.withLock { $0.waiters.removeValue(forKey: id) }?.resume(returning: false)
            }
        }
    }

    /// Wakes every waiter (after the change that made work is journaled).
    private func wake() {
        let waiters = inner.withLock { inner -> [CheckedContinuation<Bool, Never>] in
            defer { inner.waiters = [:] }
            if inner.waiters.isEmpty { inner.wakePending = true }
            return Array(inner.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: true) }
    }

    /// Runs `change` under the lock, then appends the records it decided. The append happens under
    /// the lock too: records must reach the journal in the order they were decided, and one process
    /// is this store's only user, so there is no contention worth a writer queue.
    private func change<Value>(_ change: (inout Inner) throws(CourierError) -> Value) throws(CourierError) -> Value {
        let result = inner.withLock { inner -> Result<Value, CourierError> in
            guard !inner.closed else {
                return .failure(CourierError(code: .fileSystem, message: "the queue store in \(directory.path) is closed"))
            }
            do throws(CourierError) {
                let value = try change(&inner)
                let records = inner.queue.records
                inner.queue.records = []
                // Nobody observes this store's changes: what the queue would announce is dropped.
                inner.queue.actions = []
                try journal.append(contentsOf: records)
                // The one-process queue's rule and snapshot (DownloadQueue+Compaction.swift): a
                // long-lived store's journal grows with every lease and its end otherwise. Leases
                // live in memory; a leased item is `running` in the snapshot, as in the journal.
                if !records.isEmpty, let snapshot = inner.queue.compactionSnapshot(journalBytes: journal.byteCount) {
                    // A failure leaves the old journal whole (the next append reports a broken one).
                    try? journal.compact(to: snapshot)
                }
                return .success(value)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Adds `items` in one journal write (one sync); all or none.
    @discardableResult
    public func add(_ items: [DownloadQueue.NewItem]) throws(CourierError) -> [DownloadQueue.Item] {
        defer { wake() }
        return try change { (inner: inout Inner) throws(CourierError) -> [DownloadQueue.Item] in
            let ids = items.map { $0.id ?? UUID().uuidString.lowercased() }
            var seen = Set<String>()
            for (new, id) in zip(items, ids) {
                if let why = DownloadQueue.problem(with: new, id: id) {
                    throw CourierError(code: .invalidRequest, message: why, url: new.url)
                }
                guard inner.queue.items[id] == nil, seen.insert(id).inserted else {
                    throw CourierError(code: .invalidRequest, message: "the queue already has an item with id \(id)", url: new.url)
                }
            }
            for (new, id) in zip(items, ids) { _ = inner.queue.insert(new, id: id, completed: false) }
            return ids.compactMap { inner.queue.items[$0] }
        }
    }

    /// Leases the best runnable item: an expired lease's item or the first queued one, whichever
    /// comes first by priority and order, among hosts with a connection free. The lease holds the
    /// connections the one-process queue's grant rule (`DownloadQueue.grant`) gives its item.
    public func lease(worker: String, duration: TimeInterval, maximumPerHost: Int) throws(CourierError) -> DownloadQueue.Lease? {
        let now = clock()
        let cap = max(1, maximumPerHost)
        return try change { (inner: inout Inner) throws(CourierError) -> DownloadQueue.Lease? in
            var perHost: [String: Int] = [:]
            for (id, held) in inner.leases where held.expires >= now {
                if let item = inner.queue.items[id] { perHost[item.storeHostKey, default: 0] += held.connections }
            }
            // Every item needs one connection at least: a host has room when one would be granted.
            let hasRoom = { (host: String) in
                DownloadQueue.grant(.off, hostConnections: perHost[host, default: 0], perHost: cap) != nil
            }
            let expired = inner.leases.keys.compactMap { inner.queue.items[$0] }
                .filter { inner.leases[$0.id]!.expires < now && hasRoom($0.storeHostKey) }
                .min { JournalQueueStore.runsBefore($0, $1) }
            var chosen = expired
            if let next = inner.queue.order.popNext(hasRoom: hasRoom), let item = inner.queue.items[next] {
                if let expired, JournalQueueStore.runsBefore(expired, item) {
                    inner.queue.order.insert(item)  // the taken-over item runs first; this one waits
                } else {
                    chosen = item
                }
            }
            guard let item = chosen else { return nil }
            guard let grant = DownloadQueue.grant(item.split, hostConnections: perHost[item.storeHostKey, default: 0], perHost: cap)
            else {
                // Not reached: `hasRoom` asked the same rule. A queued item goes back in its place.
                if item.state == .queued { inner.queue.order.insert(item) }
                return nil
            }
            let token = (inner.tokens[item.id] ?? 0) + 1
            inner.tokens[item.id] = token
            let previous =
                inner.leases[item.id].map { (received: $0.received, resumeRecord: $0.resumeRecord) }
                ?? inner.released.removeValue(forKey: item.id)
            // A taken-over item is already `running` in the journal: only a new lease is recorded as such.
            if previous == nil { inner.queue.set(item.id, .running(received: 0, total: nil)) }
            let held = Held(
                worker: worker, token: token, expires: now.addingTimeInterval(duration), received: previous?.received ?? 0,
                resumeRecord: previous?.resumeRecord, connections: grant.connections)
            inner.leases[item.id] = held
            return DownloadQueue.Lease(
                item: inner.queue.items[item.id] ?? item, worker: worker, token: token, expires: held.expires,
                received: held.received, resumeRecord: held.resumeRecord, connections: held.connections)
        }
    }

    /// Higher priority first, then the order of adding.
    static func runsBefore(_ lhs: DownloadQueue.Item, _ rhs: DownloadQueue.Item) -> Bool {
        lhs.priority != rhs.priority ? lhs.priority > rhs.priority : lhs.sequence < rhs.sequence
    }

    /// Throws ``CourierError/Code-swift.struct/leaseLost`` unless `lease` is its item's current, unexpired lease.
    private static func check(_ lease: DownloadQueue.Lease, in inner: Inner, now: Date) throws(CourierError) {
        guard let held = inner.leases[lease.item.id], held.token == lease.token, held.worker == lease.worker, held.expires >= now
        else {
            throw CourierError(
                code: .leaseLost,
                message: "the lease \(lease.token) of item \(lease.item.id) held by \(lease.worker) has expired or was taken over")
        }
    }

    /// Extends the lease.
    public func renew(_ lease: DownloadQueue.Lease, duration: TimeInterval) throws(CourierError) -> DownloadQueue.Lease {
        let now = clock()
        return try change { (inner: inout Inner) throws(CourierError) -> DownloadQueue.Lease in
            try Self.check(lease, in: inner, now: now)
            inner.leases[lease.item.id]?.expires = now.addingTimeInterval(duration)
            return lease.renewed(until: now.addingTimeInterval(duration))
        }
    }

    /// Keeps the progress in memory: the journal never held counts, and in one process the resume
    /// record also lives beside the partial file.
    public func recordProgress(_ lease: DownloadQueue.Lease, received: Int64, resumeRecord: Data?) throws(CourierError) {
        let now = clock()
        try change { (inner: inout Inner) throws(CourierError) in
            try Self.check(lease, in: inner, now: now)
            inner.leases[lease.item.id]?.received = received
            inner.leases[lease.item.id]?.resumeRecord = resumeRecord
        }
    }

    /// Keeps the mark in memory: in one process, the journal's `running` record and the partial
    /// file beside the destination already tell a reopened queue what was being published.
    public func beginPublishing(_ lease: DownloadQueue.Lease, file: URL) throws(CourierError) {
        let now = clock()
        try change { (inner: inout Inner) throws(CourierError) in
            try Self.check(lease, in: inner, now: now)
            inner.publishing[lease.item.id] = file.standardizedFileURL
        }
    }

    /// The mark an earlier lease of the item left.
    public func publishingFile(of lease: DownloadQueue.Lease) throws(CourierError) -> URL? {
        inner.withLock { $0.publishing[lease.item.id] }
    }

    /// Journals `completed` under the lease's check.
    public func complete(_ lease: DownloadQueue.Lease, file: URL) throws(CourierError) {
        try end(lease, as: .completed(file.standardizedFileURL))
    }

    /// Journals `failed` under the lease's check.
    public func fail(_ lease: DownloadQueue.Lease, _ failure: DownloadQueue.Failure) throws(CourierError) {
        try end(lease, as: .failed(failure))
    }

    /// Journals `queued` under the lease's check; the item goes back in the order.
    public func release(_ lease: DownloadQueue.Lease) throws(CourierError) {
        try end(lease, as: .queued)
    }

    private func end(_ lease: DownloadQueue.Lease, as state: DownloadQueue.State) throws(CourierError) {
        let now = clock()
        defer { wake() }
        try change { (inner: inout Inner) throws(CourierError) in
            try Self.check(lease, in: inner, now: now)
            if state == .queued, let held = inner.leases[lease.item.id] {
                inner.released[lease.item.id] = (held.received, held.resumeRecord)
            }
            inner.leases[lease.item.id] = nil
            inner.publishing[lease.item.id] = nil
            inner.queue.set(lease.item.id, state)
            if state == .queued, let item = inner.queue.items[lease.item.id] { inner.queue.order.insert(item) }
        }
    }

    /// Every item in the order added; leased ones are `running`.
    public func items() throws(CourierError) -> [DownloadQueue.Item] {
        inner.withLock { Array($0.queue.items.values) }.sorted { $0.sequence < $1.sequence }
    }
}
