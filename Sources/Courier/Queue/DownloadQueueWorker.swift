import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
internal import CourierSupport

/// One worker of a download list shared through a ``DownloadQueueStore`` (a fleet's
/// `PostgresQueueStore`, or the one-process ``JournalQueueStore``): it leases items from the
/// store instead of ordering them itself, fetches them into its own directory, renews their
/// leases with a heartbeat, reports their progress and resume records, and publishes each file
/// under the store's fence — so a worker whose lease was taken over never publishes, and a file
/// is never published twice nor lost.
///
/// The rules, in order, for each item (Docs/DownloadQueue.md, "A fleet"):
/// 1. **Lease** (``DownloadQueueStore/lease(worker:duration:maximumPerHost:)``) while fewer than
///    ``Configuration/maximumRunning`` run; the store keeps the per-host cap fleet-wide, counting
///    each lease's connections (a split item's lease holds several:
///    ``DownloadQueue/Lease/connections``). With nothing to lease, wait for the store's wake-up
///    (``DownloadQueueStore/waitForWork(timeout:)``: an item added, a lease ended), or
///    ``Configuration/pollInterval`` for expired leases.
/// 2. **Look at the destination**: a file there that is the item's (its SHA-256, or marked by an
///    earlier lease as being published) completes the item; anything else there fails it.
/// 3. **Fetch**, split over exactly the lease's connections, into the worker's `parts` directory,
///    continuing its own partial file if one is there, or else a copy of the partial file the
///    lease's resume record names when this worker can read it (shared storage;
///    DownloadQueueWorker+TakeOver.swift), or else from zero.
///    Every heartbeat (a third of the lease) renews the lease and records the progress; a renewal
///    refused with ``CourierError/Code-swift.struct/leaseLost`` stops the download.
/// 4. **Publish, fenced**: ``DownloadQueueStore/beginPublishing(_:file:)`` under the lease, then
///    the link into place (never replacing a file), then ``DownloadQueueStore/complete(_:file:)``.
///    A refused mark stops the download before its file is linked: the item's change carries
///    ``CourierError/Code-swift.struct/leaseLost``.
///
/// Store calls run on the worker's own serial queue; they block it (libpq is synchronous), never
/// a caller. While idle, the worker waits on the store's wake-up and its heartbeat timer, and
/// nothing else. A store that cannot be reached (a database restarting) is asked again at the
/// next wake-up and beat: downloads go on, and whatever their leases lost meanwhile the fence
/// refuses. ``DownloadQueue/init(store:directory:manager:configuration:)`` runs one of these
/// behind the queue's API.
public final class DownloadQueueWorker: Sendable {
    /// How the worker runs.
    public struct Configuration: Sendable {
        /// The worker's name in the store (who holds a lease). Default: the host name and process id.
        public var name = DownloadQueueWorker.defaultName()
        /// The most downloads running at once in this worker (at least 1). Default 4.
        public var maximumRunning = 4
        /// The most connections at once on one host and port, held by the leases of every worker of
        /// the store (at least 1; a split item's lease holds several). Default 2.
        public var maximumRunningPerHost = 2
        /// How long a lease lasts unless renewed, in seconds. Default 30; renewed every third of it.
        public var leaseDuration: TimeInterval = 30
        /// The longest an idle worker waits for the store's wake-up before asking it again, in
        /// seconds: an expired lease sends no wake-up, so this bounds how late a dead worker's
        /// item is taken over by an idle one. Default 30 (a lease).
        public var pollInterval: TimeInterval = 30
        /// Asked for a fresh request when a URL seems to have expired; `nil` for none
        /// (``DownloadQueue/Configuration/refresher``). The fresh request serves this lease; the
        /// store keeps the item's URL, so a later lease asks again.
        public var refresher: DownloadQueue.URLRefresher?
        /// Also ask the refresher before every lease's first attempt.
        public var refreshesBeforeEachAttempt = false
        /// Statuses that suggest an expired URL and make the worker ask the refresher.
        public var refreshStatusCodes: Set<Int> = [401, 403, 410]
        /// How many refreshes in a row one lease may ask before its item fails. Default 3.
        public var maximumRefreshes = 3
        /// The policy each download starts from; the item's expected length and SHA-256, and the
        /// partial file in the worker's directory, are set per item, and so is its split: the
        /// item's, capped at the connections its lease was granted (``DownloadQueue/Lease/split``).
        public var policy = DownloadPolicy.default

        /// The defaults.
        public init() {}
    }

    /// `host:pid`, from `gethostname(2)`: `ProcessInfo.hostName` on Linux may ask the resolver,
    /// which can take seconds on a machine without DNS.
    static func defaultName() -> String {
        var buffer = [UInt8](repeating: 0, count: 256)
        let named = buffer.withUnsafeMutableBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { gethostname($0.baseAddress!, $0.count - 1) == 0 }
        }
        let host = named ? String(decoding: buffer.prefix { $0 != 0 }, as: UTF8.self) : "worker"
        return "\(host):\(getpid())"
    }

    /// One leased item being fetched.
    struct Job {
        var lease: DownloadQueue.Lease
        var task: DownloadTask?
        var received: Int64 = 0
        /// A renewal found the lease taken over and stopped the download.
        var lost = false
        /// Refreshes asked in a row under this lease.
        var refreshes = 0
    }

    /// Everything that changes, behind the one lock.
    struct WorkerState {
        var jobs: [String: Job] = [:]
        /// The heartbeat timer, set by ``start()``, cancelled by ``stop()``.
        var timers: [any DispatchSourceTimer] = []
        /// A wait for the store's wake-up is under way (one at a time).
        var waiting = false
        var started = false
        var stopping = false
        var stopWaiters: [@Sendable () -> Void] = []
        var observers: [UUID: @Sendable (DownloadQueue.Change) -> Void] = [:]
    }

    /// The worker's directory: its partial files live in `parts` inside it.
    public let directory: URL
    /// The store the items are leased from.
    public let store: any DownloadQueueStore
    let manager: SessionManager
    let configuration: Configuration
    let state = Locked(WorkerState())
    /// Runs the store's calls and the timers, one at a time.
    let queue = DispatchQueue(label: "courier.download-queue-worker")
    let callbackQueue = DispatchQueue(label: "courier.download-queue-worker.callbacks")

    /// A worker on `store` whose partial files go under `directory` (created 0700).
    ///
    /// - Throws: ``CourierError/Code-swift.struct/fileSystem`` when the directory cannot be created.
    public init(
        store: any DownloadQueueStore, directory: URL, manager: SessionManager, configuration: Configuration = Configuration()
    ) throws(CourierError) {
        var configuration = configuration
        configuration.maximumRunning = max(1, configuration.maximumRunning)
        configuration.maximumRunningPerHost = max(1, configuration.maximumRunningPerHost)
        configuration.leaseDuration = max(0.1, configuration.leaseDuration)
        configuration.pollInterval = max(0.01, configuration.pollInterval)
        configuration.maximumRefreshes = max(0, configuration.maximumRefreshes)
        self.store = store
        self.directory = directory
        self.manager = manager
        self.configuration = configuration
        do {
            try FileManager.default.createDirectory(
                at: directory.appendingPathComponent("parts", isDirectory: true), withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
        } catch {
            throw CourierError(code: .fileSystem, message: "cannot create \(directory.path)/parts: \(error)", underlyingError: error)
        }
    }

    deinit {
        for timer in state.withLock({ $0.timers }) { timer.cancel() }
    }

    /// The worker's name in the store.
    public var name: String { configuration.name }

    /// Starts leasing and fetching (once; later calls do nothing).
    public func start() {
        let first = state.withLock { state -> Bool in
            defer { state.started = true }
            return !state.started && !state.stopping
        }
        guard first else { return }
        queue.async { [weak self] in self?.fill() }
        let beat = Self.heartbeatInterval(leaseDuration: configuration.leaseDuration)
        let heartbeat = DispatchSource.makeTimerSource(queue: queue)
        heartbeat.schedule(deadline: .now() + beat, repeating: beat, leeway: .milliseconds(10))
        heartbeat.setEventHandler { [weak self] in self?.renewAll() }
        state.withLock { $0.timers = [heartbeat] }
        heartbeat.resume()
    }

    /// Stops: no new lease, every running download stops keeping its bytes and its item is
    /// released to the store (queued, with its progress) for any worker; returns when all are.
    public func stop() async {
        let timers = state.withLock { state in
            defer { state.timers = [] }
            return state.timers
        }
        for timer in timers { timer.cancel() }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let tasks = state.withLock { state -> [DownloadTask] in
                state.stopping = true
                state.stopWaiters.append { continuation.resume() }
                return state.jobs.values.compactMap(\.task)
            }
            for task in tasks { task.cancel(producingResumeData: { _ in }) }
            queue.async { [self] in finishStopIfIdle() }
        }
    }

    /// Calls `handler` with every change this worker makes to an item (leased, progress, and how
    /// it ended, ``CourierError/Code-swift.struct/leaseLost`` included), in order, on a serial
    /// queue of the worker's; returns a token for ``removeObserver(_:)``.
    @discardableResult
    public func addObserver(_ handler: @escaping @Sendable (DownloadQueue.Change) -> Void) -> UUID {
        let id = UUID()
        state.withLock { $0.observers[id] = handler }
        return id
    }

    /// Stops calling the observer `token` names.
    public func removeObserver(_ token: UUID) {
        _ = state.withLock { $0.observers.removeValue(forKey: token) }
    }

    /// The ids of the items this worker holds leases on now.
    public var leasedItems: [String] {
        state.withLock { Array($0.jobs.keys) }.sorted()
    }

    // MARK: - On the worker's queue

    /// Leases items while slots are free. When the store has none to give (or cannot be
    /// reached), waits for its wake-up; a download's end asks again.
    func fill() {
        dispatchPrecondition(condition: .onQueue(queue))
        while state.withLock({ !$0.stopping && $0.jobs.count < configuration.maximumRunning }) {
            let lease: DownloadQueue.Lease?
            do throws(CourierError) {
                lease = try store.lease(
                    worker: configuration.name, duration: configuration.leaseDuration,
                    maximumPerHost: configuration.maximumRunningPerHost)
            } catch {
                lease = nil
            }
            guard let lease else { return awaitWork() }
            begin(lease)
        }
    }

    /// Asks `fill()` again once the store says work may be there, or after ``Configuration/pollInterval``
    /// (expired leases send no wake-up). One wait at a time; none while stopping. Nothing polls:
    /// a PostgreSQL store waits on its `LISTEN` socket.
    private func awaitWork() {
        let begins = state.withLock { state -> Bool in
            guard !state.waiting, !state.stopping else { return false }
            state.waiting = true
            return true
        }
        guard begins else { return }
        let store = self.store
        let timeout = configuration.pollInterval
        Task { [weak self] in
            _ = await store.waitForWork(timeout: timeout)
            guard let self else { return }
            self.state.withLock { $0.waiting = false }
            self.queue.async { self.fill() }
        }
    }

    /// Asks the store again now (an item was added through this process).
    func wake() {
        queue.async { [weak self] in self?.fill() }
    }

    /// Starts a lease: the destination decides (``start(destination:markedPublishing:)``), then
    /// the download.
    private func begin(_ lease: DownloadQueue.Lease) {
        let item = lease.item
        let existing = DownloadQueue.ExistingFile.inspect(item.destination, hashing: item.sha256 != nil)
        var verdict: DownloadQueue.ExistingFile.Verdict?
        var marked = false
        if existing != .absent {
            verdict = existing.check(expectedLength: item.expectedLength, sha256: item.sha256)
            marked = (try? store.publishingFile(of: lease))?.standardizedFileURL == item.destination.standardizedFileURL
        }
        switch Self.start(destination: verdict, markedPublishing: marked) {
        case .complete:
            end(lease, .complete(item.destination))
            return
        case .fail(let reason):
            end(lease, .fail(DownloadQueue.Failure(CourierError(code: .fileSystem, message: reason, url: item.url))))
            return
        case .download:
            break
        }
        // A taken-over item continues from the previous holder's bytes when they can be read here.
        let adopted = adoptRecordedPartial(of: lease)
        state.withLock { $0.jobs[item.id] = Job(lease: lease, received: adopted) }
        emit(item.with(state: .running(received: max(adopted, lease.received), total: item.expectedLength)))
        if configuration.refreshesBeforeEachAttempt, configuration.refresher != nil {
            refresh(lease, .beforeAttempt)
        } else {
            launch(lease, request: nil)
        }
    }

    /// Creates and resumes the lease's download, unless the lease ended or the worker is stopping.
    private func launch(_ lease: DownloadQueue.Lease, request: URLRequest?) {
        let id = lease.item.id
        let task = makeTask(lease, request: request)
        // A lease lost meanwhile (found by a renewal while the refresher worked) still runs the
        // task to its end: stopped at once, it ends the lease as lost, as any stopped download does.
        let launch = state.withLock { state -> Bool in
            guard let job = state.jobs[id], job.lease.token == lease.token else { return false }
            state.jobs[id]?.task = task
            return !state.stopping && !job.lost
        }
        if launch { task.resume() } else { task.cancel(producingResumeData: { _ in }) }
    }

    /// The partial file of an item in this worker's directory (named as the queue names it).
    func partialFile(for id: String) -> URL {
        directory.appendingPathComponent("parts/\(DownloadQueue.partialFileName(for: id))")
    }

    private func makeTask(_ lease: DownloadQueue.Lease, request: URLRequest?) -> DownloadTask {
        let item = lease.item
        var request = request ?? URLRequest(url: item.url)
        for (name, value) in item.headers where request.value(forHTTPHeaderField: name) == nil {
            request.setValue(value, forHTTPHeaderField: name)
        }
        var policy = configuration.policy
        policy.expectedLength = item.expectedLength
        policy.expectedSHA256 = item.sha256.flatMap(DownloadPolicy.sha256(hex:))
        // Exactly the connections the store granted the lease, counted fleet-wide on its host.
        policy.split = lease.split
        policy.partialFile = partialFile(for: item.id)
        let store = self.store
        // The fence: the mark is set under the lease, or the file is not linked. The link that
        // follows never replaces a file, so a late second publisher fails rather than overwrites.
        let destination = DownloadDestination.file(item.destination, options: [.createIntermediateDirectories])
            .checking { () throws(CourierError) in try store.beginPublishing(lease, file: item.destination) }
        let id = item.id
        let progress: @Sendable (Progress) -> Void = { [weak self] progress in
            self?.state.withLock { $0.jobs[id]?.received = progress.completedUnitCount }
        }
        let completion: @Sendable (DownloadResponse) -> Void = { [weak self] response in
            guard let self else { return }
            self.queue.async { self.finished(id, token: lease.token, response.result) }
        }
        if let record = DownloadQueue.recordForRefreshedURL(beside: partialFile(for: id), request: request) {
            return manager.downloadTask(
                resumingFrom: record, request: request, to: destination, policy: policy, queue: .immediate, progress: progress,
                completion: completion)
        }
        return manager.downloadTask(
            with: request, to: destination, policy: policy, queue: .immediate, progress: progress, completion: completion)
    }

    /// A download ended: its lease ends as ``end(_:lost:stopping:)`` decides.
    private func finished(_ id: String, token: Int64, _ result: Result<URL, CourierError>) {
        let refreshes = configuration.refresher != nil
        let job = state.withLock { state -> (Job, stopping: Bool, refresh: DownloadQueue.RefreshReason?)? in
            guard let job = state.jobs[id], job.lease.token == token else { return nil }
            if case .failure(let error) = result, refreshes, !job.lost, !state.stopping,
                let reason = DownloadQueue.refreshReason(
                    after: error, hasRefresher: true, statusCodes: configuration.refreshStatusCodes,
                    refreshesSoFar: job.refreshes, maximum: configuration.maximumRefreshes)
            {
                // The lease stays this worker's while the refresher works (the heartbeat renews it).
                state.jobs[id]?.refreshes += 1
                state.jobs[id]?.task = nil
                return (job, false, reason)
            }
            state.jobs[id] = nil
            return (job, state.stopping, nil)
        }
        guard let (job, stopping, reason) = job else { return }
        if let reason {
            emit(job.lease.item.with(state: .running(received: job.received, total: job.lease.item.expectedLength)), retry: .queueRefresh)
            return refresh(job.lease, reason)
        }
        end(job.lease, Self.end(result, lost: job.lost, stopping: stopping))
        finishStopIfIdle()
        if !stopping { fill() }
    }

    /// Tells the store how the lease ended, and the observers what became of the item. A store
    /// that refuses or cannot be reached changes nothing here: the lease runs out and the item's
    /// next lease decides again from what is at the destination.
    private func end(_ lease: DownloadQueue.Lease, _ end: LeaseEnd) {
        let item = lease.item
        var outcome: DownloadQueue.State
        do throws(CourierError) {
            switch end {
            case .complete(let file):
                outcome = .completed(file)
                try store.complete(lease, file: file)
            case .fail(let failure):
                outcome = .failed(failure)
                try store.fail(lease, failure)
            case .release:
                outcome = .queued
                try store.release(lease)
            case .lost:
                outcome = .failed(DownloadQueue.Failure(Self.lostError(lease)))
            }
        } catch {
            outcome = .failed(DownloadQueue.Failure(error))
        }
        emit(item.with(state: outcome))
    }

    static func lostError(_ lease: DownloadQueue.Lease) -> CourierError {
        CourierError(
            code: .leaseLost,
            message:
                "lease \(lease.token) of item \(lease.item.id) was taken over or expired: its download stopped and its file was not published",
            url: lease.item.url)
    }

    /// The heartbeat: renews each running lease and records its progress; a lease found lost
    /// stops its download.
    private func renewAll() {
        let jobs = state.withLock { Array($0.jobs.values) }
        // A lease waiting for the refresher (no task yet) is renewed too: it is still this worker's.
        for job in jobs where !job.lost {
            do throws(CourierError) {
                let renewed = try store.renew(job.lease, duration: configuration.leaseDuration)
                let record = try? ResumeData.record(beside: partialFile(for: job.lease.item.id))
                try store.recordProgress(renewed, received: job.received, resumeRecord: record?.encoded())
                emit(job.lease.item.with(state: .running(received: job.received, total: job.lease.item.expectedLength)))
            } catch  where Self.renewalStopsDownload(error) {
                let task = state.withLock { state -> DownloadTask? in
                    guard state.jobs[job.lease.item.id]?.lease.token == job.lease.token else { return nil }
                    state.jobs[job.lease.item.id]?.lost = true
                    return state.jobs[job.lease.item.id]?.task
                }
                task?.cancel()
            } catch {
                continue  // the store is unreachable: try again at the next beat
            }
        }
    }

    private func finishStopIfIdle() {
        let waiters = state.withLock { state -> [@Sendable () -> Void] in
            guard state.stopping, state.jobs.isEmpty else { return [] }
            defer { state.stopWaiters = [] }
            return state.stopWaiters
        }
        for waiter in waiters { waiter() }
    }

    /// Asks the refresher (off the worker's queue: it may take its time), then launches with its
    /// request or ends the lease with the failure ``DownloadQueue/refreshOutcome(_:reason:url:)`` decides.
    private func refresh(_ lease: DownloadQueue.Lease, _ reason: DownloadQueue.RefreshReason) {
        guard let refresher = configuration.refresher else { return }
        Task { [weak self] in
            var outcome: Result<URLRequest?, any Error>
            do {
                outcome = .success(try await refresher(lease.item, reason))
            } catch {
                outcome = .failure(error)
            }
            guard let self else { return }
            let decided = DownloadQueue.refreshOutcome(outcome, reason: reason, url: lease.item.url)
            self.queue.async { self.refreshed(lease, decided) }
        }
    }

    private func refreshed(_ lease: DownloadQueue.Lease, _ outcome: DownloadQueue.RefreshOutcome) {
        let id = lease.item.id
        switch outcome {
        case .launch(let request):
            launch(lease, request: request)
        case .fail(let error):
            let ended = state.withLock { state -> Bool in
                guard state.jobs[id]?.lease.token == lease.token else { return false }
                state.jobs[id] = nil
                return true
            }
            guard ended else { return }
            end(lease, .fail(DownloadQueue.Failure(error)))
            finishStopIfIdle()
            fill()
        }
    }

    private func emit(_ item: DownloadQueue.Item, retry: RetryOwner? = nil) {
        let observers = state.withLock { Array($0.observers.values) }
        guard !observers.isEmpty else { return }
        let change = DownloadQueue.Change(item: item, retry: retry)
        callbackQueue.async { for observer in observers { observer(change) } }
    }
}
