import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
internal import CourierSupport

/// A download queue that survives restarts: Linux's answer to background `URLSession`s (which
/// FoundationNetworking does not have).
///
/// The queue lives in a directory of the caller's (mode 0700): its journal, its lock and the
/// partial files of its downloads. Every state change is written to the journal and flushed to
/// disk before it is acted on, so opening the same directory after a `kill -9` or a reboot
/// continues where the queue stood: completed items stay completed, running items continue from
/// their bytes on disk (the download rules of Docs/ResumableDownloads.md), queued items start in
/// order. One process at a time: a second `DownloadQueue` on the directory fails with a clear error.
///
/// At most ``Configuration/maximumRunning`` downloads run at once, and at most
/// ``Configuration/maximumRunningPerHost`` connections per host (a split item holds several); higher ``Item/priority`` first, FIFO within
/// a priority. A ``URLRefresher`` supplies a fresh request when a URL seems to have expired
/// (a signed URL), and the download continues with `Range` when the validator still matches.
///
/// The journal format and the crash-consistency argument are in Docs/DownloadQueue.md.
///
/// The same queue can run on a list shared by a fleet of processes instead
/// (``init(store:directory:manager:configuration:)``, Docs/DownloadQueue.md "A fleet"): its items
/// are then leased from a ``DownloadQueueStore`` — a PostgreSQL database with the
/// `CourierPostgres` product — and each is fetched by one live process at a time.
public final class DownloadQueue: Sendable {
    /// How the queue runs its downloads.
    public struct Configuration: Sendable {
        /// The most downloads running at once (at least 1). Default 4.
        public var maximumRunning = 4
        /// The most connections at once against one host and port (at least 1). Default 2:
        /// servers throttle or ban clients that open many connections. An item holds one, or up
        /// to its ``NewItem/split`` when that many are free; it starts only while one is free. On a
        /// shared store, counted over every worker of the store. The manager's
        /// ``SessionManager/Configuration/maximumRunningTasksPerHost`` should allow as many.
        public var maximumRunningPerHost = 2
        /// The policy each download starts from (retries, deadline, buffer); the item's expected
        /// length, SHA-256 and split (``Item/split``), and the partial file in the queue's
        /// directory, are set per item.
        public var policy = DownloadPolicy.default
        /// Asked for a fresh request when a URL seems to have expired; `nil` for none.
        public var refresher: URLRefresher?
        /// Also ask the refresher before every attempt (for URLs that expire quickly).
        public var refreshesBeforeEachAttempt = false
        /// Statuses that suggest an expired URL and make the queue ask the refresher.
        public var refreshStatusCodes: Set<Int> = [401, 403, 410]
        /// How many refreshes in a row an item may have before it fails. Default 3.
        public var maximumRefreshes = 3
        /// Where the queue delivers changes to observers. Default: a serial queue of the queue's own.
        public var callbackQueue: DispatchQueue?
        /// Start no item whose host has no route, and put back in the queue — with its bytes and
        /// no retry spent — an item whose download failed for want of one
        /// (``CourierError/Code-swift.struct/networkUnreachable``); they start again when the
        /// monitor sees a route come back. Default `true`. Docs/Reachability.md.
        public var pausesWhileOffline = true
        /// The monitor that tells the queue when routes change; `nil` for ``NetworkMonitor/shared``.
        public var networkMonitor: NetworkMonitor?
        /// How this process leases items from a shared store; used only by
        /// ``DownloadQueue/init(store:directory:manager:configuration:)``.
        public var leasing = Leasing()

        /// How a queue on a shared store leases its items (``DownloadQueueWorker/Configuration``
        /// says the same of a worker).
        public struct Leasing: Sendable {
            /// This process's name in the store (who holds a lease). Default: host name and process id.
            public var workerName = DownloadQueueWorker.defaultName()
            /// How long a lease lasts unless renewed, in seconds. Default 30; renewed every third of it.
            public var leaseDuration: TimeInterval = 30
            /// The longest an idle queue waits for the store's wake-up before asking again (expired
            /// leases send none), in seconds. Default 30.
            public var pollInterval: TimeInterval = 30

            /// The defaults.
            public init() {}
        }

        /// The defaults.
        public init() {}
    }

    /// What opening the directory found in its journal.
    public struct OpenReport: Sendable, Equatable {
        /// Journal records replayed.
        public let records: Int
        /// Damaged records that were detected and skipped, with why.
        public let skipped: [String]
        /// Bytes of a record cut off by a crash mid-write, removed.
        public let truncatedTailBytes: Int
    }

    /// The largest ``NewItem/metadata`` accepted, in bytes.
    public static let maximumMetadataSize = 16 * 1024

    /// The queue's directory.
    public let directory: URL
    /// What opening found in the journal.
    public let openReport: OpenReport
    let manager: SessionManager
    let configuration: Configuration
    /// The journal of a one-process queue; `nil` on a shared store.
    let journal: Journal?
    /// The lease engine of a queue on a shared store; `nil` for a one-process queue.
    let shared: DownloadQueueWorker?
    let state: Locked<QueueState>
    /// Writes the journal and then performs what each record allows, in order.
    let writer = DispatchQueue(label: "courier.download-queue.journal")
    let callbackQueue: DispatchQueue
    /// The monitor's handler token while the queue pauses offline (DownloadQueue+Connectivity.swift).
    let connectivityWatch = Locked<UUID?>(nil)

    /// Opens (or creates) the queue in `directory` and starts the downloads it holds.
    ///
    /// - Throws: ``CourierError/Code-swift.struct/fileSystem`` when the directory cannot be
    ///   created or locked (another process has it open), or its journal is not one this
    ///   version reads. Damaged records do not throw: they are skipped and listed in ``openReport``.
    public init(directory: URL, manager: SessionManager, configuration: Configuration = Configuration()) throws(CourierError) {
        var configuration = configuration
        configuration.maximumRunning = max(1, configuration.maximumRunning)
        configuration.maximumRunningPerHost = max(1, configuration.maximumRunningPerHost)
        configuration.maximumRefreshes = max(0, configuration.maximumRefreshes)
        self.directory = directory
        self.manager = manager
        self.configuration = configuration
        self.callbackQueue = configuration.callbackQueue ?? DispatchQueue(label: "courier.download-queue.callbacks")
        let (journal, records, report) = try Journal.open(directory: directory)
        self.journal = journal
        self.shared = nil
        var initial = QueueState()
        var skipped = report.skipped.map { "record at byte \($0.offset): \($0.reason)" }
        let wasRunning = initial.replay(records, skipped: &skipped)
        self.openReport = OpenReport(records: report.records, skipped: skipped, truncatedTailBytes: report.truncatedTailBytes)
        self.state = Locked(initial)
        do {
            try FileManager.default.createDirectory(
                at: partsDirectory, withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
        } catch {
            journal.close()
            throw CourierError(code: .fileSystem, message: "cannot create \(partsDirectory.path): \(error)", underlyingError: error)
        }
        let published = wasRunning.compactMap { id in initial.items[id].flatMap(recoverPublished) }
        if configuration.pausesWhileOffline { watchConnectivity() }
        commit { state in
            for (id, outcome) in published {
                state.order.remove(state.items[id]!)
                state.set(id, outcome)
            }
            scheduleLocked(&state)
        }
    }

    /// An item that was running when the process died, whose download had already published its
    /// file (the partial file is gone, the destination is there) but not journaled it: completed
    /// when the file passes the item's checks, failed when it does not; `nil` when the download
    /// simply has to go on. The file's verdict is the one reconciling uses
    /// (``ExistingFile/check(expectedLength:sha256:)``); a file the queue itself was publishing
    /// needs no SHA-256 to be taken, one of unknown origin does.
    ///
    /// Publishing without replacing is `link(2)`, then `unlink(2)` of the partial file
    /// (FilePublisher.swift): a process killed between the two leaves one file under both names.
    /// That partial file is the published one, so its name and its record go, as they would have.
    private func recoverPublished(_ item: Item) -> (String, State)? {
        let destination = item.destination
        let partial = partialFile(for: item.id)
        var info = stat()
        if lstat(partial.path, &info) == 0 {
            var published = stat()
            guard lstat(destination.path, &published) == 0, published.st_dev == info.st_dev, published.st_ino == info.st_ino
            else { return nil }
            let record = DownloadPolicy.recordFile(for: partial)
            for leftover in [partial, record, AtomicFile.temporaryFile(for: record)] { unlink(leftover.path) }
        }
        let existing = ExistingFile.inspect(destination, hashing: item.sha256 != nil)
        guard case .file = existing else { return nil }
        switch existing.check(expectedLength: item.expectedLength, sha256: item.sha256) {
        case .proven, .unproven:
            return (item.id, .completed(destination))
        case .wrong(let problem):
            return (
                item.id,
                .failed(
                    Failure(
                        CourierError(
                            code: .integrityFailed, message: "\(destination.path) appeared while the download ran and \(problem)",
                            url: item.url)))
            )
        }
    }

    /// Runs the queue on a list shared through `store` (a fleet's `PostgresQueueStore`, or a
    /// ``JournalQueueStore``): items are leased from the store — one live process at a time holds
    /// each, and takes over the items of processes that died — fetched into `directory`, renewed
    /// with a heartbeat and published under the store's fence. The API is the queue's: ``add(_:)``,
    /// ``items``, ``changes(bufferingNewest:)``, observers, ``stop()``. What a shared store does
    /// not offer is refused with ``CourierError/Code-swift.struct/invalidRequest``: ``pause(_:)``,
    /// ``resume(_:)``, ``cancel(_:)``, ``remove(_:)`` and ``reconcile(_:unlisted:replacingExistingFiles:)``
    /// (Docs/DownloadQueue.md, "A fleet", says why). A split item is fetched over the connections
    /// its lease holds (``Lease/connections``, counted over the fleet), and
    /// ``Configuration/pausesWhileOffline`` does not apply. Fetching starts at once.
    ///
    /// - Parameters:
    ///   - store: the shared list.
    ///   - directory: this process's own directory for partial files (created 0700).
    ///   - manager: the session manager that runs the downloads.
    ///   - configuration: the queue's settings; ``Configuration/leasing`` says how it leases.
    /// - Throws: ``CourierError/Code-swift.struct/fileSystem`` when the directory cannot be created.
    public init(
        store: any DownloadQueueStore, directory: URL, manager: SessionManager, configuration: Configuration = Configuration()
    ) throws(CourierError) {
        let worker = try DownloadQueueWorker(
            store: store, directory: directory, manager: manager, configuration: Self.workerConfiguration(configuration))
        self.directory = directory
        self.manager = manager
        self.configuration = configuration
        self.callbackQueue = configuration.callbackQueue ?? DispatchQueue(label: "courier.download-queue.callbacks")
        self.journal = nil
        self.shared = worker
        self.openReport = OpenReport(records: 0, skipped: [], truncatedTailBytes: 0)
        self.state = Locked(QueueState())
        worker.addObserver { [weak self] change in self?.deliver(change) }
        worker.start()
    }

    deinit {
        if let watch = connectivityWatch.withLock({ $0 }) { networkMonitor.removeRefreshHandler(watch) }
        journal?.close()
    }

    /// Where partial files and their records live.
    var partsDirectory: URL { directory.appendingPathComponent("parts", isDirectory: true) }

    // MARK: - Reading

    /// The item with `id`, if the queue has it.
    public func item(_ id: String) -> Item? {
        if shared != nil { return items.first { $0.id == id } }
        return state.withLock { $0.items[id] }
    }

    /// Every item, in the order they were added. On a shared store: as the store has them, or
    /// none while it cannot be reached.
    public var items: [Item] {
        if let shared { return (try? shared.store.items()) ?? [] }
        return state.withLock { Array($0.items.values) }.sorted { $0.sequence < $1.sequence }
    }

    // MARK: - Changing

    /// Adds a download; returns once it is journaled (durable). It starts when a slot is free.
    ///
    /// - Throws: ``CourierError/Code-swift.struct/invalidRequest`` for an id already in the
    ///   queue, metadata over ``maximumMetadataSize``, a SHA-256 that is not 64 hex digits or a
    ///   URL that is not http(s); the journal's error when it cannot be written.
    @discardableResult
    public func add(_ item: NewItem) throws(CourierError) -> Item {
        try add(contentsOf: [item])[0]
    }

    /// Adds downloads with one journal write (one `fsync` for all); returns once they are durable.
    @discardableResult
    public func add(contentsOf newItems: [NewItem]) throws(CourierError) -> [Item] {
        if let shared {
            let added = try shared.store.add(newItems)
            shared.wake()
            return added
        }
        var added: [Item] = []
        var problem: CourierError?
        let ids = newItems.map { $0.id ?? UUID().uuidString.lowercased() }
        // Hosts with no route are held back from the start (DownloadQueue+Connectivity.swift).
        let unreachable = configuration.pausesWhileOffline ? Self.unreachableHosts(of: newItems.map(\.url)) : []
        try commitAndWait { state in
            state.unreachableHosts.formUnion(unreachable)
            // A route that came back between the lookup and now is seen by asking again.
            if !unreachable.isEmpty { state.actions.append(.recheckHosts) }
            var seen = Set<String>()
            for (new, id) in zip(newItems, ids) {
                if let why = Self.problem(with: new, id: id), problem == nil {
                    problem = CourierError(code: .invalidRequest, message: why, url: new.url)
                }
                if state.items[id] != nil || !seen.insert(id).inserted, problem == nil {
                    problem = CourierError(code: .invalidRequest, message: "the queue already has an item with id \(id)", url: new.url)
                }
            }
            // All or none: checked above, so none of these is refused.
            guard problem == nil else { return }
            for (new, id) in zip(newItems, ids) where state.insert(new, id: id, completed: false) == nil {
                if let item = state.items[id] { added.append(item) }
            }
            scheduleLocked(&state)
        }
        if let problem { throw problem }
        return added.map { self.item($0.id) ?? $0 }
    }

    /// Pauses an item: a queued one stays put, a running one stops and keeps its bytes. Returns
    /// once journaled. Does nothing to an item that is finished or already paused, nor to one
    /// whose download is already publishing its file: completion wins over a late pause.
    public func pause(_ id: String) throws(CourierError) {
        try refuseOnSharedStore("pause")
        try commitAndWait { $0.apply(.pause, to: id) }
    }

    /// Queues a paused, failed or cancelled item again (it continues from its bytes, if any).
    public func resume(_ id: String) throws(CourierError) {
        try refuseOnSharedStore("resume")
        try commitAndWait { state in
            state.apply(.resume, to: id)
            scheduleLocked(&state)
        }
    }

    /// Stops an item and discards its bytes; it stays in the queue as cancelled until removed.
    /// An item whose download is already publishing its file is not cancelled: it completes (a
    /// cancel never deletes a published file). Returns once journaled.
    public func cancel(_ id: String) throws(CourierError) {
        try refuseOnSharedStore("cancel")
        try commitAndWait { $0.apply(.cancel, to: id) }
    }

    /// Removes an item from the queue (stopping it and discarding its bytes). A published file
    /// stays, also one whose download was already publishing it.
    public func remove(_ id: String) throws(CourierError) {
        try refuseOnSharedStore("remove")
        try commitAndWait { $0.apply(.remove, to: id) }
    }

    /// Stops the queue for a graceful shutdown (SIGTERM in a container): no new download starts,
    /// every running one stops keeping its bytes and resume record, and this returns once every
    /// record is durable. The journal still lists them as running, so the next open continues
    /// them. The queue is unusable afterwards (its lock is released).
    public func stop() async {
        if let shared { return await stopShared(shared) }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            commit { state in
                state.stopping = true
                for id in Array(state.running.keys) { state.stopRunning(id, as: .stopping, keepingBytes: true) }
                state.stopWaiters.append { continuation.resume() }
                state.finishStopIfIdle()
            }
        }
    }

    static func problem(with item: NewItem, id: String) -> String? {
        guard let scheme = item.url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            return "only http and https URLs can be queued (\(item.url.absoluteString))"
        }
        if id.isEmpty || id.utf8.count > 1024 { return "an item id must be 1 to 1024 bytes" }
        if let sha256 = item.sha256, DownloadPolicy.sha256(hex: sha256) == nil {
            return "the SHA-256 \(sha256.debugDescription) is not 64 hex digits"
        }
        if let metadata = item.metadata, metadata.count > maximumMetadataSize {
            return "the metadata is \(metadata.count) bytes; at most \(maximumMetadataSize) are stored with an item"
        }
        return nil
    }
}
