import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The driver's side of a split download (Docs/SegmentedDownloads.md): it starts the crew when a
/// 206 allows it, takes back its map when it ends or is stopped, and keeps the task's progress and
/// record current for it. The decisions are TransferState+Segments.swift's.
extension TransferTask {
    /// The connections the transfer uses now (``CourierTask/connectionCount``).
    var connectionCount: Int {
        let (crew, running) = locked { ($0.crew, $0.phase.state == .running) }
        if let crew { return crew.connectionCount }
        return running ? 1 : 0
    }

    /// Starts a crew over `map`, with `task` (this attempt, answered with a 206) as its first connection.
    func beginSegments(_ task: URLSessionTask, _ map: SegmentMap) {
        guard let (request, plan, writer) = locked({ state -> (URLRequest, DownloadPlan, DiskWriter)? in
            guard let file = state.file else { return nil }
            return (state.currentRequest ?? originalRequest, file.plan, file.writer)
        }) else { return }
        // The manager's per-host cap (maximumRunningTasksPerHost): the connections never exceed it.
        let perHost = core.table.cap
        let setup = SegmentedDownload.Setup(
            map: map, primary: task, primaryID: TransferState.primaryConnection, request: request,
            split: plan.policy.split, cap: plan.policy.split.cap(perHost: perHost),
            recordInterval: plan.recordFile == nil ? .seconds(3600) : plan.policy.recordInterval,
            bufferLimit: plan.policy.bufferLimit)
        let crew = SegmentedDownload(host: self, setup: setup, writer: writer, core: core)
        let installed = locked { state -> Bool in
            // Stopped or replaced while the head was decided: one stream it stays.
            guard state.phase.isRunning(task), state.crew == nil, state.failure == nil else { return false }
            state.crew = crew
            state.file?.segments = map.withoutConnections
            return true
        }
        if installed { crew.start() }
    }

    /// The crew's bytes so far: the task's progress.
    func segmentsProgressed(written: Int64) {
        let due = locked { state -> ([ProgressObserver], Progress)? in
            guard state.crew != nil else { return nil }
            state.received = written
            return state.dueProgress(.download)
        }
        if let (observers, snapshot) = due { deliver(snapshot, to: observers) }
    }

    /// The crew's connections, for the monitors.
    func segmentsReport(_ event: TaskConnectionsEvent) {
        guard let handle = locked({ $0.crew != nil ? $0.retainedHandle ?? $0.handle : nil }) else { return }
        events.emit(.connections(event), for: handle)
    }

    /// The crew's map, taken after the writes it counts were queued: the record says so.
    func segmentsRecord(_ map: SegmentMap) {
        locked { state in
            guard state.crew != nil, let plan = state.file?.plan else { return }
            state.file?.segments = map
            state.writeRecord(plan, force: true)
        }
    }

    /// The crew ended by itself: the transfer completes, retries or starts over as for one stream.
    func segmentsEnded(
        _ crew: SegmentedDownload, _ ending: SegmentedDownload.Ending, map: SegmentMap, tally: SegmentedDownload.Tally
    ) {
        let followUp = locked { state -> FollowUp? in
            guard state.crew === crew else { return nil }
            state.crew = nil
            state.adoptSegments(map, tally: tally)
            return state.segmentsEnded(ending, primary: crew.setup.primary, invalidated: core.isInvalidated)
        }
        perform(followUp)
    }

    /// Stops a running crew for the task (cancel, pause, a stop from outside) after the task
    /// decided what the stop means. Its first connection's own URLSession task may have ended
    /// already, through the crew: its completion will not come again, so it is ended here.
    func stopSegments() {
        guard let crew = locked({ state -> SegmentedDownload? in
            defer { state.crew = nil }
            return state.crew
        }) else { return }
        let (map, tally, primaryEnded) = crew.stop()
        locked { $0.adoptSegments(map, tally: tally) }
        if primaryEnded {
            urlTask(crew.setup.primary, didCompleteWithError: URLError(.cancelled))
        }
    }
}
