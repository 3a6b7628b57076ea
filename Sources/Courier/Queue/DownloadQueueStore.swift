import Foundation

/// The durable list under a download queue: what a worker needs from it, and nothing about how
/// it is kept. ``JournalQueueStore`` keeps it in the queue's journal file for one process;
/// `PostgresQueueStore` (the `CourierPostgres` product) keeps it in a PostgreSQL database for a
/// fleet of workers. Docs/DownloadQueue.md ("A fleet") says the same in prose.
///
/// ## The rules every store keeps
/// - **Add** (``add(_:)``) is all or none, and durable when it returns. An id already stored, or
///   an item ``DownloadQueue/add(_:)`` would refuse, fails the whole call with
///   ``CourierError/Code-swift.struct/invalidRequest``. A new item is `queued`.
/// - **Lease** (``lease(worker:duration:maximumPerHost:)``) claims the next runnable item for one
///   worker until the lease expires: higher ``DownloadQueue/Item/priority`` first, then the order
///   items were added. Runnable means `queued`, or leased by anyone with the lease expired (taken
///   over). No two unexpired leases ever hold one item. Each lease of an item carries a
///   **fencing token** greater than every earlier lease's of that item.
/// - **Per-host caps count connections**, over every worker of the store. A lease holds
///   ``DownloadQueue/Lease/connections`` on its item's host (``DownloadQueue/Item`` `host:port`):
///   its item's split (``DownloadQueue/Item/split``), capped at what the host has free, never
///   below one — the rule the one-process queue grants by (DownloadQueue+Decisions.swift). A host
///   whose unexpired leases hold `maximumPerHost` connections is granted no lease; so the
///   connections its leases hold never exceed the cap. The worker fetches the item with exactly
///   the lease's connections (``DownloadQueue/Lease/split``).
/// - **Renew** (``renew(_:duration:)``), **progress** (``recordProgress(_:received:resumeRecord:)``),
///   **publishing** (``beginPublishing(_:file:)``), **complete** (``complete(_:file:)``), **fail** (``fail(_:_:)``) and **release**
///   (``release(_:)``) act only while the lease is the item's current one and has not expired:
///   the check and the change are one atomic step. Otherwise they throw
///   ``CourierError/Code-swift.struct/leaseLost`` and change nothing. So a worker whose lease was
///   taken over — paused past its expiry, cut off from the store — can never mark the item
///   complete: it must not publish its file before ``complete(_:file:)`` has returned.
/// - **Publishing** is fenced twice: ``beginPublishing(_:file:)`` under the lease, then the
///   file linked into place (never replacing one), then ``complete(_:file:)``. A worker paused
///   or cut off before the first step never publishes; one that dies between the link and the
///   completion leaves the mark, and the item's next lease completes it from the file it finds.
/// - Complete, fail and release end the lease: the item is `completed`, `failed`, or `queued`
///   again (continuing from the recorded resume record, when the next worker can reach the
///   partial file).
/// - A store's errors are ``CourierError``s; none of their text holds a credential.
///
/// Renewing is the worker's job: a heartbeat well inside the lease (a third of it, say). The time
/// that decides expiry is the store's own (the database server's clock), never the worker's.
public protocol DownloadQueueStore: AnyObject, Sendable {
    /// Adds `items` durably, all or none; returns them as stored (ids given, sequence numbered).
    @discardableResult
    func add(_ items: [DownloadQueue.NewItem]) throws(CourierError) -> [DownloadQueue.Item]
    /// Claims the next runnable item for `worker` for `duration` seconds, or returns `nil` when
    /// none may run now (none queued, or every host with one at `maximumPerHost` connections held
    /// by unexpired leases). The lease holds the connections granted to it.
    func lease(worker: String, duration: TimeInterval, maximumPerHost: Int) throws(CourierError) -> DownloadQueue.Lease?
    /// Extends a lease that is still the item's and unexpired to `duration` seconds from now.
    func renew(_ lease: DownloadQueue.Lease, duration: TimeInterval) throws(CourierError) -> DownloadQueue.Lease
    /// Records how far the download got, and the resume record of its partial file (the bytes of
    /// ``ResumeData``'s record, or `nil`), so that a worker taking the item over can continue.
    func recordProgress(_ lease: DownloadQueue.Lease, received: Int64, resumeRecord: Data?) throws(CourierError)
    /// Marks the item `completed` at `file`, only if `lease` is still the item's (fencing):
    /// otherwise ``CourierError/Code-swift.struct/leaseLost``. Call it before publishing.
    func complete(_ lease: DownloadQueue.Lease, file: URL) throws(CourierError)
    /// Marks the item `failed` with `failure`, only if `lease` is still the item's.
    func fail(_ lease: DownloadQueue.Lease, _ failure: DownloadQueue.Failure) throws(CourierError)
    /// Marks the item as publishing `file` under `lease` (fenced like ``complete(_:file:)``): the
    /// step between a finished download and linking its file into place. A worker that dies
    /// after this leaves a mark the next lease of the item reads with ``publishingFile(of:)``, so
    /// that a file it finds at the destination is known to be this item's and is completed, never
    /// fetched and published a second time.
    func beginPublishing(_ lease: DownloadQueue.Lease, file: URL) throws(CourierError)
    /// The file a lease of this item marked with ``beginPublishing(_:file:)`` and did not
    /// complete, or `nil`. Asked by the holder of `lease` only when it finds its destination taken.
    func publishingFile(of lease: DownloadQueue.Lease) throws(CourierError) -> URL?
    /// Gives the item back (`queued`, keeping its recorded progress) for any worker to lease.
    func release(_ lease: DownloadQueue.Lease) throws(CourierError)
    /// Every item, in the order they were added, with its state as the store has it.
    func items() throws(CourierError) -> [DownloadQueue.Item]
    /// Waits until work may be there — an item added, or a lease completed, failed or released
    /// (which frees a slot on its host) by any user of the store — or `timeout` seconds. `true`
    /// for a wake-up (also one that came since the previous call returned), `false` for the
    /// timeout. An expired lease sends no wake-up: an idle worker waits at most about a lease.
    /// The default (for a store that cannot tell) sleeps `timeout` and returns `false`.
    func waitForWork(timeout: TimeInterval) async -> Bool
}

extension DownloadQueueStore {
    /// Adds those of `items` whose ids the store does not hold yet, and returns them as stored:
    /// how each worker of a fleet puts one list into a shared store. Workers starting together may
    /// add at once; ``add(_:)`` is all or none, so the one that lost the race is refused whole
    /// (``CourierError/Code-swift.struct/invalidRequest``, an id stored meanwhile) and tries again
    /// with what is still missing, three times in all. An item without an id is always added.
    @discardableResult
    public func addMissing(_ items: [DownloadQueue.NewItem]) throws(CourierError) -> [DownloadQueue.Item] {
        for attempt in 1...3 {
            let stored = Set(try self.items().map(\.id))
            let missing = items.filter { $0.id.map { !stored.contains($0) } ?? true }
            guard !missing.isEmpty else { return [] }
            do throws(CourierError) {
                return try add(missing)
            } catch  where error.code == .invalidRequest && attempt < 3 {
                continue
            }
        }
        return []  // not reached: the third attempt returns or throws
    }

    /// Waits until every item of `ids` is finished in the store (completed, failed or cancelled),
    /// whichever worker finished it, and returns their states by id; `nil` when `shouldStop` said
    /// so first. How a fleet worker knows its list is done: the store decides, not what this
    /// worker ran. The store is read every `interval` seconds; a read that fails (a database
    /// restarting) is tried again at the next.
    public func waitUntilFinished(
        _ ids: Set<String>, pollingEvery interval: TimeInterval = 0.25, until shouldStop: () -> Bool
    ) -> [String: DownloadQueue.State]? {
        while !shouldStop() {
            if let items = try? self.items() {
                var finished: [String: DownloadQueue.State] = [:]
                for item in items where ids.contains(item.id) && item.state.isFinished { finished[item.id] = item.state }
                if finished.count == ids.count { return finished }
            }
            Thread.sleep(forTimeInterval: interval)
        }
        return nil
    }

    /// Sleeps `timeout` seconds and returns `false`: a store without wake-ups is polled.
    public func waitForWork(timeout: TimeInterval) async -> Bool {
        try? await Task.sleep(for: .seconds(max(0, timeout)))
        return false
    }
}

extension DownloadQueue {
    /// One worker's claim on one item, from ``DownloadQueueStore/lease(worker:duration:maximumPerHost:)``.
    public struct Lease: Sendable, Equatable {
        /// The item leased (its state is `running`).
        public let item: Item
        /// The worker that holds it.
        public let worker: String
        /// The fencing token: greater than every earlier lease's of this item. The store accepts a
        /// change only under the item's current token.
        public let token: Int64
        /// When the lease ends unless renewed, by the store's clock.
        public let expires: Date
        /// The bytes received so far, as last recorded by any worker.
        public let received: Int64
        /// The resume record last recorded for the item (``DownloadQueueStore/recordProgress(_:received:resumeRecord:)``).
        public let resumeRecord: Data?
        /// The connections the lease holds on its item's host, counted against the fleet-wide
        /// per-host cap until it ends: 1 for an unsplit item, up to the item's
        /// ``DownloadQueue/Item/split`` for a split one, fewer when fewer were free (the rule the
        /// one-process queue grants by). The download uses exactly these (``split``).
        public let connections: Int

        /// A lease as a store hands it out; `connections` below 1 is read as 1.
        public init(
            item: Item, worker: String, token: Int64, expires: Date, received: Int64 = 0, resumeRecord: Data? = nil,
            connections: Int = 1
        ) {
            self.item = item
            self.worker = worker
            self.token = token
            self.expires = expires
            self.received = received
            self.resumeRecord = resumeRecord
            self.connections = max(1, connections)
        }

        /// The split the lease's download uses: the item's, capped at ``connections``
        /// (``DownloadSplit/off`` for one).
        public var split: DownloadSplit { DownloadQueue.grantedSplit(item.split, connections: connections) }

        /// The same lease with a new expiry (after a renewal).
        public func renewed(until expires: Date) -> Lease {
            Lease(
                item: item, worker: worker, token: token, expires: expires, received: received, resumeRecord: resumeRecord,
                connections: connections)
        }
    }
}

extension DownloadQueue.Item {
    /// The item a store keeps for `new` under `id`: checked as ``DownloadQueue/add(_:)`` checks it
    /// (``CourierError/Code-swift.struct/invalidRequest`` when refused), queued, numbered `sequence`.
    package static func stored(_ new: DownloadQueue.NewItem, id: String, sequence: UInt64) throws(CourierError) -> Self {
        if let why = DownloadQueue.problem(with: new, id: id) {
            throw CourierError(code: .invalidRequest, message: why, url: new.url)
        }
        let destination = new.destination.standardizedFileURL
        return Self(
            id: id, url: new.url, headers: new.headers, destination: destination, expectedLength: new.expectedLength,
            sha256: new.sha256?.lowercased(), priority: new.priority, metadata: new.metadata, state: .queued,
            sequence: sequence, splitArgument: Self.splitArgument(for: new.split))
    }

    /// The same item in `state` (a store reads an item's fields and its state separately).
    package func with(state: DownloadQueue.State) -> Self {
        var copy = self
        copy.state = state
        return copy
    }

    /// The `host:port` a store counts leases by (the per-host cap's key).
    package var storeHostKey: String { hostKey }
}

extension DownloadQueue.Item {
    /// An item with only an id, for a store to name a row whose stored item it cannot read.
    package static func placeholder(id: String) -> Self {
        Self(
            id: id, url: URL(string: "http://invalid.invalid/")!, headers: [:], destination: URL(fileURLWithPath: "/dev/null"),
            expectedLength: nil, sha256: nil, priority: 0, metadata: nil, state: .queued, sequence: 0)
    }
}
