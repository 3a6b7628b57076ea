import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
internal import CourierSupport

/// Write-ahead: a change is decided under the lock as records plus actions; the writer appends
/// the records (one `fsync` for every change waiting) and only then performs the actions, in
/// order. So nothing is done — a download started, a file removed, a change announced — that the
/// journal could forget in a crash.
extension DownloadQueue {
    /// Decides a change under the lock; its records are journaled and its actions performed later.
    func commit(_ change: (inout QueueState) -> Void) {
        let startWriter = state.withLock { state -> Bool in
            change(&state)
            guard !state.records.isEmpty || !state.actions.isEmpty else { return false }
            state.pending.append((state.records, state.actions))
            state.records = []
            state.actions = []
            guard !state.flushing else { return false }
            state.flushing = true
            return true
        }
        if startWriter { writer.async { [self] in flush() } }
    }

    /// Decides a change and waits until it is durable.
    func commitAndWait(_ change: (inout QueueState) -> Void) throws(CourierError) {
        dispatchPrecondition(condition: .notOnQueue(writer))
        let done = DispatchSemaphore(value: 0)
        let outcome = Locked<CourierError?>(nil)
        var refused: CourierError?
        commit { state in
            if let broken = state.broken {
                refused = broken
                return
            }
            if state.stopping || state.closed {
                refused = CourierError(code: .invalidRequest, message: "the download queue in \(directory.path) was stopped")
                return
            }
            change(&state)
            state.actions.append(
                .signal { error in
                    outcome.withLock { $0 = error }
                    done.signal()
                })
        }
        if let refused { throw refused }
        done.wait()
        if let error = outcome.withLock({ $0 }) { throw error }
    }

    /// The writer: journals each waiting batch, then performs its actions.
    private func flush() {
        while true {
            let batches = state.withLock { state -> [(records: [Data], actions: [Action])] in
                if state.pending.isEmpty { state.flushing = false }
                defer { state.pending = [] }
                return state.pending
            }
            guard !batches.isEmpty else { return }
            let records = batches.flatMap(\.records)
            var failure: CourierError?
            if !records.isEmpty {
                do throws(CourierError) {
                    try journal?.append(contentsOf: records)
                } catch {
                    failure = error
                }
            }
            if let failure {
                journalFailed(failure, dropping: batches.flatMap(\.actions))
                continue
            }
            for action in batches.flatMap(\.actions) { perform(action) }
            compactIfNeeded()
        }
    }

    /// The journal cannot be written: nothing more is acted on (waiters get the error), and the
    /// running downloads stop keeping their bytes, so a later open continues from the journal as
    /// it is on disk.
    private func journalFailed(_ error: CourierError, dropping actions: [Action]) {
        let tasks = state.withLock { state -> [DownloadTask] in
            if state.broken == nil { state.broken = error }
            return state.running.values.compactMap(\.task)
        }
        for task in tasks { task.cancel(producingResumeData: { _ in }) }
        for action in actions {
            switch action {
            case .signal(let signal): signal(error)
            case .stopped(let waiters):
                journal?.close()
                for waiter in waiters { waiter() }
            default: break
            }
        }
    }

    private func perform(_ action: Action) {
        switch action {
        case .start(let run): start(run)
        case .launch(let run, let request): launch(run, request: request)
        case .refresh(let run, let reason): refresh(run, reason)
        case .emit(let item, let retry): deliver(Change(item: item, retry: retry))
        case .stopTask(let task, let keepingBytes):
            if keepingBytes { task.cancel(producingResumeData: { _ in }) } else { task.cancel() }
        case .removePartialFiles(let id):
            let partial = partialFile(for: id)
            unlink(partial.path)
            unlink(DownloadPolicy.recordFile(for: partial).path)
        case .signal(let signal): signal(nil)
        case .recheckHosts: networkMonitor.queue.async { [weak self] in self?.recheckHosts() }
        case .stopped(let waiters):
            unwatchConnectivity()
            let continuations = state.withLock { state -> [AsyncStream<Change>.Continuation] in
                state.closed = true
                defer { state.continuations = [:] }
                return Array(state.continuations.values)
            }
            journal?.close()
            for continuation in continuations { continuation.finish() }
            for waiter in waiters { waiter() }
        }
    }

    // MARK: - Scheduling

    /// Fills free slots with queued items: best priority first, FIFO within it, per-host cap kept.
    /// The per-host cap counts connections: each item starts with what ``grant(_:hostConnections:perHost:)``
    /// gives it, and a host with none free starts nothing.
    func scheduleLocked(_ state: inout QueueState) {
        guard !state.stopping, state.broken == nil else { return }
        while state.running.count < configuration.maximumRunning {
            let perHost = configuration.maximumRunningPerHost
            let counts = state.connectionsPerHost
            let unreachable = state.unreachableHosts
            // Every item needs one connection at least: a host has room when one would be granted.
            let hasRoom = { (host: String) in
                !unreachable.contains(host) && Self.grant(.off, hostConnections: counts[host] ?? 0, perHost: perHost) != nil
            }
            guard let id = state.order.popNext(hasRoom: hasRoom), let item = state.items[id] else { return }
            guard state.running[id] == nil else {
                // Its previous run is still stopping (paused and resumed at once): it waits for that.
                state.deferred.insert(id)
                continue
            }
            guard let grant = Self.grant(item.split, hostConnections: counts[item.hostKey] ?? 0, perHost: perHost) else {
                // Not reached: `hasRoom` asked the same rule. Back in its place rather than lost.
                state.order.insert(item)
                return
            }
            state.nextToken += 1
            state.running[id] = Running(
                host: item.hostKey, token: state.nextToken, connections: grant.connections, split: grant.split)
            state.connectionsPerHost[item.hostKey, default: 0] += grant.connections
            state.set(id, .running(received: 0, total: nil))
            state.actions.append(.start(Run(id: id, token: state.nextToken)))
        }
    }

    /// The item's download begins (its `running` state is durable by now).
    private func start(_ run: Run) {
        if configuration.refreshesBeforeEachAttempt, configuration.refresher != nil {
            refresh(run, .beforeAttempt)
        } else {
            launch(run, request: nil)
        }
    }

    /// Creates and resumes the item's download task, unless it was stopped meanwhile.
    private func launch(_ run: Run, request: URLRequest?) {
        let started = state.withLock { state -> (Item, DownloadSplit)? in
            guard let entry = state.entry(run), entry.phase == .active, let item = state.items[run.id] else { return nil }
            return (item, entry.split)
        }
        guard let (item, split) = started else { return }
        let task = makeTask(item, split: split, run: run, request: request)
        let launched = state.withLock { state -> Bool in
            guard var entry = state.entry(run), entry.phase == .active, entry.task == nil else { return false }
            entry.task = task
            state.running[run.id] = entry
            return true
        }
        if launched { task.resume() }
    }

    /// The partial file of an item, inside the queue's directory (named after a hash of the id,
    /// which may hold any character).
    func partialFile(for id: String) -> URL {
        partsDirectory.appendingPathComponent(Self.partialFileName(for: id))
    }

    /// The item's download, with `split` (the connections its run was granted) as its policy's split.
    private func makeTask(_ item: Item, split: DownloadSplit, run: Run, request: URLRequest?) -> DownloadTask {
        var request = request ?? URLRequest(url: item.url)
        for (name, value) in item.headers where request.value(forHTTPHeaderField: name) == nil {
            request.setValue(value, forHTTPHeaderField: name)
        }
        var policy = configuration.policy
        policy.expectedLength = item.expectedLength
        policy.expectedSHA256 = item.sha256.flatMap(DownloadPolicy.sha256(hex:))
        // The item's, capped at what its host had free: never the configuration's.
        policy.split = split
        let partial = partialFile(for: item.id)
        policy.partialFile = partial
        // The gate: the run publishes only if no pause, cancel or remove came first (and if one
        // comes later, it changes nothing). A queue already gone lets it publish: the journal
        // still has the item running, and reopening recognises the file.
        let destination = DownloadDestination.file(item.destination, options: [.createIntermediateDirectories])
            .checking { [weak self] () throws(CourierError) in
                guard let self, !self.state.withLock({ $0.beginPublishing(run) }) else { return }
                throw CourierError(
                    code: .cancelled, message: "the item \(item.id) was paused, cancelled or removed before its file was published",
                    url: item.url)
            }
        let progress: @Sendable (Progress) -> Void = { [weak self] progress in self?.progressed(run, progress) }
        let completion: @Sendable (DownloadResponse) -> Void = { [weak self] response in self?.finished(run, response) }
        // A record made for an earlier URL of this item (before a refresh) continues with the
        // new one: If-Range still proves it is the same version.
        if let record = Self.recordForRefreshedURL(beside: partial, request: request) {
            return manager.downloadTask(
                resumingFrom: record, request: request, to: destination, policy: policy, queue: .immediate,
                progress: progress, completion: completion)
        }
        return manager.downloadTask(
            with: request, to: destination, policy: policy, queue: .immediate, progress: progress, completion: completion)
    }

    private func progressed(_ run: Run, _ progress: Progress) {
        let id = run.id
        commit { state in
            guard let entry = state.entry(run), entry.phase == .active, var item = state.items[id] else { return }
            item.state = .running(
                received: progress.completedUnitCount, total: progress.totalUnitCount > 0 ? progress.totalUnitCount : nil)
            state.items[id] = item
            state.emit(item)
        }
    }

    private func finished(_ run: Run, _ response: DownloadResponse) {
        commit { state in
            guard state.entry(run) != nil else { return }
            state.finish(run, with: response.result, configuration: configuration)
            state.finishStopIfIdle()
            scheduleLocked(&state)
        }
    }

    /// Asks the refresher for a new request, journals the new URL, then launches with it.
    private func refresh(_ run: Run, _ reason: RefreshReason) {
        guard let refresher = configuration.refresher, let item = self.item(run.id) else { return }
        Task { [weak self] in
            var outcome: Result<URLRequest?, any Error>
            do {
                outcome = .success(try await refresher(item, reason))
            } catch {
                outcome = .failure(error)
            }
            self?.refreshed(run, outcome, reason: reason)
        }
    }

    private func refreshed(_ run: Run, _ outcome: Result<URLRequest?, any Error>, reason: RefreshReason) {
        let id = run.id
        commit { state in
            guard let entry = state.entry(run), entry.phase == .active else { return }
            switch Self.refreshOutcome(outcome, reason: reason, url: state.items[id]?.url) {
            case .launch(let request):
                if let url = request?.url, url != state.items[id]?.url {
                    state.items[id]?.url = url
                    state.record(.url(id: id, url: url))
                }
                state.actions.append(.launch(run, request))
            case .fail(let error):
                state.release(id, entry)
                state.set(id, .failed(Failure(error)))
                scheduleLocked(&state)
            }
        }
    }

    // MARK: - Compaction

    /// Rewrites the journal as one record per item when the rule says so
    /// (DownloadQueue+Compaction.swift, the same as ``JournalQueueStore``'s).
    private func compactIfNeeded() {
        guard let journal else { return }
        let size = journal.byteCount
        guard let snapshot = state.withLock({ $0.compactionSnapshot(journalBytes: size) }) else { return }
        // On failure the old journal is intact (compaction replaces it atomically) and appends go
        // on; a journal that can no longer be written fails the next append, which stops the queue.
        try? journal.compact(to: snapshot)
    }

    // MARK: - Observing

    /// The changes of every item from now on, in order (a slow reader keeps the newest
    /// `bufferingNewest`, dropping older progress and states). It finishes when the queue stops.
    public func changes(bufferingNewest limit: Int = 4096) -> AsyncStream<Change> {
        let id = UUID()
        return AsyncStream(bufferingPolicy: .bufferingNewest(max(1, limit))) { continuation in
            let closed = state.withLock { state -> Bool in
                if state.closed { return true }
                state.continuations[id] = continuation
                return false
            }
            if closed { continuation.finish() }
            continuation.onTermination = { [weak self] _ in
                _ = self?.state.withLock { $0.continuations.removeValue(forKey: id) }
            }
        }
    }

    /// Calls `handler` with every change from now on, in order, on the queue's callback queue;
    /// returns a token for ``removeObserver(_:)``.
    @discardableResult
    public func addObserver(_ handler: @escaping @Sendable (Change) -> Void) -> UUID {
        let id = UUID()
        state.withLock { $0.observers[id] = handler }
        return id
    }

    /// Stops calling the observer `token` names.
    public func removeObserver(_ token: UUID) {
        _ = state.withLock { $0.observers.removeValue(forKey: token) }
    }
}
