import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The driver of a split download's crew (Docs/SegmentedDownloads.md): it starts the crew when a
/// 206 allows it, feeds it its connections' callbacks, its ticks and the disk's answers with the
/// time they happened, and does what it decides. The crew (``SplitCrew``) is a value in the file
/// body, changed under the transfer's one lock; the transfer's own decisions about it are
/// TransferState+Segments.swift's.
///
/// Of a crew's actions, the writes and records join the file body's outbox
/// (``FileBody/diskRequests``) with the transfer's own, which `TransferTask.locked(_:)` hands to
/// the writer before the lock is let go, in the order decided, as the monitors' events are: the
/// writer's enqueue takes only its own lock and never calls back, and the lanes call back on
/// delegate queues of their own, so a record handed over after unlocking could overtake a write it claims.
/// Everything else (requests made and cancelled, progress delivered, the lanes released, the
/// transfer's follow-up) is done after unlocking, in order.
extension TransferTask {
    typealias Crew = SplitCrew<URLSessionTask>

    /// What a crew's event leaves the driver to do after unlocking.
    struct CrewWork {
        /// The crew's lanes and its number (for launches and late wake-ups).
        var lanes: LaneSessions.Lease?
        var number = 0
        /// Launches, cancels and disk waits, in the order decided.
        var later: [Crew.Action] = []
        var progress: ([ProgressObserver], Progress)?
        /// The crew ended or stopped: its timer and lanes go, then the transfer goes on.
        var ended: (lanes: LaneSessions.Lease, timer: (any DispatchSourceTimer)?, followUp: FollowUp?)?
    }

    /// The connections the transfer uses now (``CourierTask/connectionCount``).
    var connectionCount: Int {
        let (count, running) = locked { ($0.file?.split?.crew.connectionCount, $0.phase.state == .running) }
        if let count { return count }
        return running ? 1 : 0
    }

    /// Starts a crew over `map`, with `task` (this attempt, answered with a 206) as its first connection.
    func beginSegments(_ task: URLSessionTask, _ map: SegmentMap) {
        let lanes = core.lanes.lease()
        // The manager's per-host cap (maximumRunningTasksPerHost): the connections never exceed it.
        let perHost = core.table.cap
        let work = locked { state -> CrewWork? in
            // Stopped or replaced while the head was decided: one stream it stays.
            guard let file = state.file, state.phase.isRunning(task), file.split == nil, state.failure == nil else { return nil }
            let plan = file.plan
            var fixed: Int?
            if case .fixed(let wanted) = plan.policy.split.mode { fixed = wanted }
            let setup = Crew.Setup(
                map: map, primary: task, primaryID: TransferState.primaryConnection,
                request: state.currentRequest ?? originalRequest, fixed: fixed, cap: plan.policy.split.cap(perHost: perHost),
                recordInterval: plan.recordFile == nil ? .seconds(3600) : plan.policy.recordInterval,
                bufferLimit: plan.policy.bufferLimit, reports: events.isActive)
            let number = file.crews + 1
            state.file?.crews = number
            state.file?.split = FileBody.SplitRun(crew: Crew(setup, now: state.now), lanes: lanes, timer: nil, number: number)
            state.file?.segments = map.withoutConnections
            return apply(state.file!.split!.crew.start(now: state.now), to: &state, facts: AttemptFacts(invalidated: core.isInvalidated))
        }
        guard let work else {
            // Never used: the manager forgets it now rather than when it is invalidated.
            return lanes.release()
        }
        armCrewTimer(number: work.number)
        perform(work)
    }

    /// Ticks crew `number` every ``SplitCrew/tickInterval`` on the call queue, with the time and
    /// the writer's backlog, until it ends.
    private func armCrewTimer(number: Int) {
        let timer = DispatchSource.makeTimerSource(queue: core.callQueue)
        let interval = Crew.tickInterval.seconds
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(20))
        let writer = self.writer
        timer.setEventHandler { [weak self] in
            let backlog = writer?.statistics.backlog ?? 0
            self?.crewStep(number: number) { $0.tick(now: $1, backlog: backlog) }
        }
        let armed = locked { state -> Bool in
            guard state.file?.split?.number == number else { return false }
            state.file?.split?.timer = timer
            return true
        }
        if armed { timer.resume() }
    }

    /// Runs one event of the crew under the lock with the time now (only for crew `number` when
    /// given), then does what it decided. `false` when no crew (that crew) runs.
    @discardableResult
    func crewStep(
        number: Int? = nil, facts: AttemptFacts? = nil, _ event: (inout Crew, ContinuousClock.Instant) -> [Crew.Action]
    ) -> Bool {
        let facts = facts ?? AttemptFacts(invalidated: core.isInvalidated)
        let work = locked { state -> CrewWork? in
            // Only the number is read: a copy of the crew here would copy its tables at every event.
            guard let current = state.file?.split?.number, number == nil || current == number else { return nil }
            // The event's time is the one `locked` gave the state: one clock for the transfer and its crew.
            return apply(event(&state.file!.split!.crew, state.now), to: &state, facts: facts)
        }
        guard let work else { return false }
        perform(work)
        return true
    }

    /// The transfer's own URLSession task ended while a crew runs: it is the crew's first
    /// connection, whose ending the crew decides. `false` when no crew runs (the transfer decides).
    func segmentsTookEnding(_ task: URLSessionTask, _ error: (any Error)?) -> Bool {
        // Only a download has a file body, and so a crew: every other task's ending is the
        // transfer's, without the two locks below.
        guard writer != nil else { return false }
        var mine = false
        // The route is asked only when a crew runs and the connection failed (the transfer asks it
        // again itself when no crew takes the ending).
        let crewFailed = error != nil && locked { $0.file?.split != nil }
        let facts = crewFailed ? attemptFacts(after: error, url: task.currentRequest?.url ?? originalRequest.url) : nil
        crewStep(facts: facts) { crew, now in
            let problem = error.map { CourierError.transport($0, url: task.originalRequest?.url, response: nil, tls: nil) }
            let ended = crew.ended(crew.setup.primaryID, task, error: problem, now: now)
            mine = ended.mine
            return ended.actions
        }
        return mine
    }

    /// Stops a running crew for the task (cancel, pause, a stop from outside) after the task
    /// decided what the stop means: what the connections gathered is written, their requests are
    /// cancelled, and the transfer keeps the map. When the crew's first connection (the transfer's
    /// own URLSession task) had ended already, through the crew, no completion will come for this
    /// attempt: it ends here, as stopped.
    func stopSegments() {
        let work = locked { state -> CrewWork? in
            guard let run = state.file?.split else { return nil }
            let (actions, handover) = state.file!.split!.crew.stop(now: state.now)
            var work = apply(actions, to: &state, facts: AttemptFacts(invalidated: core.isInvalidated))
            state.file?.split = nil
            state.adoptSegments(handover.map, tally: handover.tally)
            var followUp: FollowUp?
            let primary = run.crew.setup.primary
            if handover.primaryEnded, state.phase.isCurrent(primary) {
                followUp = state.attemptEnded(URLError(.cancelled), facts: AttemptFacts(invalidated: core.isInvalidated))
            }
            work.ended = (run.lanes, run.timer, followUp)
            return work
        }
        if let work { perform(work) }
    }

    /// Does under the lock what must keep the crew's order (writes, records, events) and the
    /// transfer's decisions about the crew; returns the rest.
    /// `facts`: what the driver knew when the event came (an ending of the crew is decided with them).
    private func apply(_ actions: [Crew.Action], to state: inout TransferState, facts: AttemptFacts) -> CrewWork {
        var work = CrewWork(lanes: state.file?.split?.lanes, number: state.file?.split?.number ?? 0)
        for action in actions {
            switch action {
            // In the one outbox with the transfer's own operations, so the lock's order is the disk's.
            case .write(let data, let offset): state.file?.diskRequests.append(.write(data, at: offset))
            case .record(let map):
                // Taken after the writes it counts were handed to the writer: the record says so.
                state.file?.segments = map
                if let plan = state.file?.plan { state.writeRecord(plan, force: true) }
            case .progress(let written): work.progress = state.segmentsProgressed(written: written) ?? work.progress
            case .report(let event): state.emit(.connections(event))
            case .retry(let retry): state.announce(retry)
            case .launch, .cancel, .waitForDisk: work.later.append(action)
            case .end(let ending, let handover):
                guard let run = state.file?.split else { break }
                state.file?.split = nil
                state.adoptSegments(handover.map, tally: handover.tally)
                let followUp = state.segmentsEnded(ending, primary: run.crew.setup.primary, facts: facts)
                work.ended = (run.lanes, run.timer, followUp)
            }
        }
        return work
    }

    /// Does what a crew's event left for after unlocking, in order.
    private func perform(_ work: CrewWork) {
        for action in work.later {
            switch action {
            case .cancel(let lane, let task): session(lane, work.lanes)?.cancel(task)
            case .launch(let id, let lane, let request):
                if let lanes = work.lanes { launchConnection(id, lane: lane, request, lanes: lanes, number: work.number) }
            case .waitForDisk(let threshold):
                writer?.whenBacklog(atMost: threshold) { [weak self, number = work.number] in
                    self?.crewStep(number: number) { $0.diskDrained(now: $1) }
                }
            default: break
            }
        }
        if let (observers, snapshot) = work.progress { deliver(snapshot, to: observers) }
        if let ended = work.ended {
            ended.timer?.cancel()
            // After the cancels (both go through the call queue, in order): closes the lanes' idle connections.
            ended.lanes.release()
            perform(ended.followUp)
        }
    }

    /// The session a lane's requests run in: the manager's own for lane 0, a lane session otherwise.
    private func session(_ lane: Int, _ lanes: LaneSessions.Lease?) -> SessionCore? {
        lane == 0 ? core : lanes?.lane(lane)
    }

    /// Makes and starts connection `id`'s request on its lane, on that session's call queue.
    private func launchConnection(_ id: ConnectionID, lane: Int, _ request: URLRequest, lanes: LaneSessions.Lease, number: Int) {
        let invalidated = CourierError.sessionInvalidated(url: request.url)
        guard let session = session(lane, lanes) else {
            crewStep(number: number) { $0.launchFailed(id, nil, invalidated, now: $1) }
            return
        }
        session.table.noteStarting()
        session.callQueue.async { [self] in
            guard let task = session.makeTask({ $0.dataTask(with: session.tls.handedOver(request)) }) else {
                session.table.dropStarting()
                crewStep(number: number) { $0.launchFailed(id, nil, invalidated, now: $1) }
                return
            }
            let wanted = locked { state -> Bool in
                guard state.file?.split?.number == number else { return false }
                return state.file!.split!.crew.launched(id, task)
            }
            guard wanted else {
                // Stopped meanwhile: never resumed, so nothing will report it.
                session.table.dropStarting()
                return
            }
            let origin = RedirectPolicy.origin(of: request.url) ?? ""
            guard session.start(task, origin: origin, delegate: SplitLinkDelegate(transfer: self, id: id)) else {
                crewStep(number: number) { $0.launchFailed(id, task, invalidated, now: $1) }
                return
            }
            // Stopped while it was being started: its completion ends it.
            if !locked({ $0.file?.split?.crew.owns(id, task) == true }) { session.cancel(task) }
        }
    }
}
