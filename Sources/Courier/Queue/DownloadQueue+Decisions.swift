import Foundation

extension DownloadQueue {
    /// What a caller asks of one item: ``DownloadQueue/pause(_:)``, ``DownloadQueue/resume(_:)``,
    /// ``DownloadQueue/cancel(_:)`` or ``DownloadQueue/remove(_:)``.
    enum Request: Equatable, CaseIterable {
        case pause, resume, cancel, remove
    }
}

/// The caller's requests, the publication gate and a run's completion: the one place where a
/// pause, a cancel or a remove meets a download publishing its file. Requests and the gate are
/// decided under the queue's lock, so one of them comes first, and the item's state always says
/// what is on disk (Docs/DownloadQueue.md, "Pause, cancel and remove against publishing"):
///
/// - A request that comes first stops the run before its rename: the gate then refuses it, the
///   file is never published, and the item is paused, cancelled or gone.
/// - A run that passes the gate first publishes, and its outcome is the item's state: a late
///   pause or cancel changes nothing (the item completes; a published file is never deleted),
///   and a late remove forgets the item and leaves its file.
///
/// Nothing here is journaled or done yet: the records and actions decided are (write-ahead).
extension DownloadQueue.QueueState {
    /// Decides what `request` does to the item `id`. A request that does not apply to the
    /// item's state (pausing a finished item, resuming a running one) changes nothing.
    mutating func apply(_ request: DownloadQueue.Request, to id: String) {
        guard let item = items[id] else { return }
        // Only the item's current run can be publishing (the gate admits no other).
        let publishing = running[id]?.phase == .publishing
        switch (request, item.state) {
        case (.pause, .queued):
            order.remove(item)
            set(id, .paused)
        case (.pause, .running):
            // Past the gate the file is being published: completion wins over a late pause.
            guard !publishing else { return }
            set(id, .paused)
            stopRunning(id, as: .ending, keepingBytes: true)
        case (.pause, .paused), (.pause, .failed), (.pause, .cancelled), (.pause, .completed):
            return

        case (.resume, .paused), (.resume, .failed), (.resume, .cancelled):
            refreshes[id] = nil
            set(id, .queued)
            // An item whose previous run is still stopping waits for it (`deferred`).
            if let queued = items[id] { order.insert(queued) }
        case (.resume, .queued), (.resume, .running), (.resume, .completed):
            return

        case (.cancel, .running) where publishing:
            // Past the gate the item completes: cancel never deletes a published file.
            return
        case (.cancel, .cancelled), (.cancel, .completed):
            return
        case (.cancel, .queued), (.cancel, .running), (.cancel, .paused), (.cancel, .failed):
            if case .queued = item.state { order.remove(item) }
            stopRunning(id, as: .ending, keepingBytes: false)
            set(id, .cancelled)
            actions.append(.removePartialFiles(id))

        case (.remove, _):
            if case .queued = item.state { order.remove(item) }
            if publishing {
                // The run finishes its rename, but its outcome is no item's now (an item added
                // again with this id must not inherit it). Its own cleanup removes its files.
                running[id]?.phase = .ending
            } else {
                stopRunning(id, as: .ending, keepingBytes: false)
            }
            items[id] = nil
            refreshes[id] = nil
            record(.remove(id: id))
            if !publishing { actions.append(.removePartialFiles(id)) }
        }
    }

    /// The publication gate, asked by a run right before its file is renamed into place (the
    /// body complete, validated and checked). Yes while the run is still its item's, active or
    /// stopped by a shutdown (the journal still has the item running); from then on its outcome
    /// is the item's state. No once the item was paused, cancelled or removed: the run must not
    /// publish, and fails without touching the destination.
    mutating func beginPublishing(_ run: DownloadQueue.Run) -> Bool {
        guard var entry = entry(run), entry.phase == .active || entry.phase == .stopping else { return false }
        entry.phase = .publishing
        running[run.id] = entry
        return true
    }

    /// Decides what a run's completion does to its item. A run past the gate ends its item
    /// (completed, or failed when the rename failed), also during a shutdown; one paused,
    /// cancelled, removed or stopped before the gate changes nothing. An active run that failed
    /// with a status suggesting an expired URL keeps its slot and asks the refresher.
    mutating func finish(
        _ run: DownloadQueue.Run, with result: Result<URL, CourierError>, configuration: DownloadQueue.Configuration
    ) {
        guard let entry = entry(run) else { return }
        let id = run.id
        guard entry.phase == .publishing || (entry.phase == .active && !stopping) else {
            release(id, entry)
            return
        }
        switch result {
        case .success(let url):
            release(id, entry)
            refreshes[id] = nil
            set(id, .completed(url))
        case .failure(let error):
            if entry.phase == .active,
                let reason = DownloadQueue.refreshReason(
                    after: error, hasRefresher: configuration.refresher != nil, statusCodes: configuration.refreshStatusCodes,
                    refreshesSoFar: refreshes[id] ?? 0, maximum: configuration.maximumRefreshes)
            {
                // The slot stays the item's while the refresher works.
                refreshes[id, default: 0] += 1
                running[id]?.task = nil
                // Announced (its state unchanged) so that a monitor sees who tries again.
                if let item = items[id] { emit(item, retry: .queueRefresh) }
                actions.append(.refresh(run, reason))
                return
            }
            release(id, entry)
            if error.code == .networkUnreachable, configuration.pausesWhileOffline, let item = items[id] {
                // The network's fault, not the item's: back in its place, its bytes and record
                // kept, until a route to its host returns (DownloadQueue+Connectivity.swift).
                unreachableHosts.insert(entry.host)
                set(id, .queued, retry: .routeWait)
                if running[id] == nil { order.insert(item) }
                actions.append(.recheckHosts)
                return
            }
            set(id, .failed(DownloadQueue.Failure(error)))
        }
    }
}

/// The per-host cap counts connections, not downloads: a split item uses several
/// (Docs/DownloadQueue.md, "Split items and the per-host cap").
extension DownloadQueue {
    /// What an item starts with: the connections it holds on its host until its run ends, and
    /// the split its download may use (never more connections than it holds).
    package struct ConnectionGrant: Equatable {
        /// Counted against the host's cap from the run's start to its release.
        package let connections: Int
        /// The item's split, capped at ``connections``.
        package let split: DownloadSplit
    }

    /// The one admission rule of the per-host cap: an item whose host already runs
    /// `hostConnections` connections of `perHost` may start only while one is free, and its
    /// split is capped at what is free (never below one). So the connections held on a host never
    /// exceed its cap, whatever mix of split and single items runs there. `nil`: the host is full,
    /// the item waits. A fleet's stores grant by the same rule, fleet-wide
    /// (``grantedConnections(wanting:hostConnections:perHost:)``, ``grantedSplit(_:connections:)``).
    package static func grant(_ split: DownloadSplit, hostConnections: Int, perHost: Int) -> ConnectionGrant? {
        guard
            let connections = grantedConnections(
                wanting: connectionsWanted(by: split), hostConnections: hostConnections, perHost: perHost)
        else { return nil }
        return ConnectionGrant(connections: connections, split: grantedSplit(split, connections: connections))
    }

    /// The most connections `split` asks for on its host, whatever is free: what a store keeps
    /// beside an item so that it can grant by counts alone.
    package static func connectionsWanted(by split: DownloadSplit) -> Int {
        split.cap(perHost: nil)
    }

    /// The count half of ``grant(_:hostConnections:perHost:)``: an item wanting `wanted`
    /// connections, on a host where `hostConnections` of `perHost` are held, gets what is free up
    /// to `wanted` (never below one), or `nil` when none is free. `PostgresQueueStore`'s
    /// `courier_lease` computes this in SQL, inside its transaction (`least(wanted, cap - held)`
    /// while `cap - held >= 1`); its tests check it against this function.
    package static func grantedConnections(wanting wanted: Int, hostConnections: Int, perHost: Int) -> Int? {
        let free = perHost - max(hostConnections, 0)
        guard free >= 1 else { return nil }
        return max(1, min(wanted, free))
    }

    /// The split half: the split a download of `split` uses when granted `connections` (fixed:
    /// that many; automatic: finding its count up to that many; one connection: no split).
    package static func grantedSplit(_ split: DownloadSplit, connections: Int) -> DownloadSplit {
        let connections = split.cap(perHost: max(1, connections))
        guard connections > 1 else { return .off }
        switch split.mode {
        case .fixed: return .connections(connections)
        case .automatic: return .automatic(upTo: connections)
        }
    }
}
