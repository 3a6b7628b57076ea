import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// When a segmented download measures, asks its scheduler, keeps its record and minds the disk.
extension SegmentedDownload {
    /// The connections wanted now: the fixed split's count, or the automatic count; never above the cap.
    static func target(_ state: State) -> Int {
        min(state.count.target, state.count.cap)
    }

    /// Every tick: measure, adjust the count, schedule, keep the record, mind the disk.
    func tick() {
        let now = ContinuousClock.now
        let due = state.withLock { state -> (record: SegmentMap?, pauseDisk: Bool, report: Bool)? in
            guard !state.stopped else { return nil }
            Self.listen(&state, at: now)
            // Each connection's speed, for the scheduler, over at least a rate window of its own
            // since its answer was accepted (a connection just started is not measured as stalled).
            Self.measureConnections(&state, at: now)
            let measured = now - state.rateWindowStart >= Self.rateWindow
            if measured { state.rateWindowStart = now }
            // The total, for the automatic count (AdaptiveConnectionCount.windowSeconds).
            if state.isFixed || state.pausedForDisk {
                // Nothing to measure; after a pause, the next window starts when it ends, so the
                // paused time (no bytes) is not read as a step that did not pay.
                Self.restartWindow(&state, at: now)
            } else {
                if !state.windowComplete, Self.heard(state) >= Self.target(state) { Self.allHeard(&state, at: now) }
                let seconds = (now - state.windowStart).seconds
                let needed = AdaptiveConnectionCount.windowSeconds(
                    inSlowStart: state.count.isInSlowStart, quiet: Self.quiet(state, at: now).seconds,
                    connections: Self.target(state), configuration: state.count.configuration)
                if state.windowComplete, (now - state.windowHeard).seconds >= needed {
                    let clock = (now - state.started).seconds
                    state.count.observe(
                        Throughput(bytes: state.windowBytes, seconds: seconds), connections: Self.target(state), now: clock)
                    Self.restartWindow(&state, at: now)
                } else if !state.windowComplete, now - state.windowStart >= Self.answerWait {
                    Self.restartWindow(&state, at: now)
                }
            }
            var record: SegmentMap?
            if now - state.lastRecord >= setup.recordInterval {
                state.lastRecord = now
                state.bytesSinceRecord = 0
                record = state.map.withoutConnections
            }
            let pauseDisk = !state.pausedForDisk && writer.statistics.backlog > setup.bufferLimit
            return (record, pauseDisk, measured)
        }
        guard let due else { return }
        if let record = due.record { host?.segmentsRecord(record) }
        if due.pauseDisk { return pauseForDisk() }
        // The monitors hear of the connections when they change, and once per rate window.
        schedule(idle: nil, reporting: due.report)
    }

    /// Measures every answered connection whose rate window is over, and forgets those gone.
    static func measureConnections(_ state: inout State, at now: ContinuousClock.Instant) {
        for id in Array(state.links.keys) {
            guard let link = state.links[id], link.accepted, let since = link.rateStart, now - since >= rateWindow else {
                continue
            }
            let rate = Throughput(bytes: link.windowBytes, seconds: (now - since).seconds)
            state.rates[id] = rate
            if let speed = rate.bytesPerSecond { state.bestRate = max(state.bestRate ?? 0, speed) }
            state.links[id]?.windowBytes = 0
            state.links[id]?.heardBytes = 0
            state.links[id]?.rateStart = now
        }
        for id in state.rates.keys where state.links[id] == nil { state.rates[id] = nil }
    }

    /// Notes, at each tick, which answered connections received bytes since the last one, and
    /// the longest silence that ended: a server pacing in bursts shows its period here.
    static func listen(_ state: inout State, at now: ContinuousClock.Instant) {
        for (id, link) in state.links where link.accepted && link.windowBytes != link.heardBytes {
            if let last = link.lastHeard { state.quiet = max(state.quiet, now - last) }
            state.links[id]?.lastHeard = now
            state.links[id]?.heardBytes = link.windowBytes
        }
    }

    /// The longest silence of an answered connection lately: ended in this window or the one
    /// before, or going on now.
    static func quiet(_ state: State, at now: ContinuousClock.Instant) -> Duration {
        var longest = max(state.quiet, state.quietBefore)
        for link in state.links.values where link.accepted {
            if let last = link.lastHeard { longest = max(longest, now - last) }
        }
        return longest
    }

    /// Starts a measuring window at a step of the count: it counts every connection's bytes from
    /// now, and ends a window's length after the last wanted connection received its first bytes.
    static func restartWindow(_ state: inout State, at now: ContinuousClock.Instant) {
        state.windowBytes = 0
        state.windowStart = now
        state.quietBefore = state.quiet
        state.quiet = .zero
        state.windowComplete = false
        if heard(state) >= target(state) { allHeard(&state, at: now) }
    }

    /// The answered connections that received bytes since their answer. A connection counts from
    /// its first bytes, not its head: a server that paces in bursts may send none for a period.
    static func heard(_ state: State) -> Int {
        state.links.values.filter { $0.accepted && $0.lastHeard != nil }.count
    }

    /// Every wanted connection received bytes: the window keeps the bytes it counted (the first
    /// bytes of those heard earlier are part of the step) and measures on from `now`.
    static func allHeard(_ state: inout State, at now: ContinuousClock.Instant) {
        state.windowComplete = true
        state.windowHeard = now
    }

    /// The per-connection view for the event monitors (``TaskConnectionsEvent``).
    static func connectionsEvent(_ state: State) -> TaskConnectionsEvent {
        let connections = state.links.keys.sorted().compactMap { id -> TaskConnectionsEvent.Connection? in
            guard let index = state.map.index(of: id) else { return nil }
            let segment = state.map.segments[index]
            let isOwner = segment.owner == id
            let range = isOwner ? segment.start..<segment.end : (segment.duplicate?.from ?? segment.start)..<segment.end
            return TaskConnectionsEvent.Connection(
                id: id.rawValue, range: range, written: isOwner ? segment.written : segment.duplicate?.written ?? 0,
                bytesPerSecond: state.rates[id]?.bytesPerSecond, racing: isOwner ? nil : segment.owner?.rawValue)
        }
        return TaskConnectionsEvent(
            connections: connections, wanted: target(state), bytesWritten: state.map.writtenBytes, length: state.map.length)
    }

    /// The map for the record, when enough was written since the last one: after a crash, each
    /// connection fetches again at most about ``recordBytesPerConnection`` (plus its unwritten batch).
    func recordIfDue(_ state: inout State) -> SegmentMap? {
        guard state.bytesSinceRecord >= Self.recordBytesPerConnection * Int64(max(1, state.links.count)) else { return nil }
        let now = ContinuousClock.now
        guard now - state.lastRecord >= Self.recordSpacing else { return nil }
        state.lastRecord = now
        state.bytesSinceRecord = 0
        return state.map.withoutConnections
    }

    /// A refused request (an error status, a reset before the answer) or a reset: halve the
    /// connections wanted (AIMD) and hold; with a `Retry-After`, start no request before it.
    func backOff(retryAfter: Duration?) {
        state.withLock { state in
            let now = ContinuousClock.now
            let clock = (now - state.started).seconds
            let working = state.links.values.filter(\.accepted).count
            state.count.backOff(now: clock, retryAfter: retryAfter?.seconds, working: working)
            if let retryAfter { state.quietUntil = max(state.quietUntil ?? now, now + retryAfter) }
        }
        // The scheduler stops the extra connections at once, not one per round trip.
        schedule(idle: nil)
    }

    /// Asks the scheduler until it has nothing more to do, and acts on its answers; `idle` is a
    /// connection whose range is done and that can take more.
    func schedule(idle: ConnectionID?, reporting: Bool = false) {
        var launches: [(ConnectionID, Int, Range<Int64>)] = []
        var cancels: [(Int, URLSessionTask)] = []
        var report: TaskConnectionsEvent?
        let reports = host?.events.isActive == true
        let complete = state.withLock { state -> Bool in
            guard !state.stopped else { return false }
            if state.map.isComplete { return true }
            guard !state.pausedForDisk else { return false }
            defer {
                if reports, reporting || !launches.isEmpty || !cancels.isEmpty { report = Self.connectionsEvent(state) }
            }
            var idle = idle
            // While the server asked to wait, only stops: the connections streaming go on, an
            // idle one leaves, and ticks start the rest once the wait is over.
            let quiet = state.quietUntil.map { ContinuousClock.now < $0 } ?? false
            for _ in 0..<(2 * DownloadSplit.maximumConnections) {
                let newID = ConnectionID(state.nextID)
                let action = state.scheduler.decide(
                    map: state.map, rates: state.rates, fresh: state.bestRate,
                    target: quiet ? min(Self.target(state), state.map.connections.count) : Self.target(state),
                    idle: quiet ? nil : idle, newConnection: newID)
                if action == .none { break }
                // The automatic count adds connections one answer at a time: a server that
                // refuses the one above its limit sees one refused request, not the rest of a step
                // already on their way (the chain goes on from linkResponse, a round trip each).
                if !state.isFixed, Self.startsConnection(action, newID), state.links.values.contains(where: \.awaitingFirstAnswer) {
                    break
                }
                var range: Range<Int64>?
                var stopping: [ConnectionID] = []
                switch action {
                case .start(_, let asked): range = asked
                case .steal(let owner, let offset, _):
                    range = state.map.position(of: owner).map { offset..<$0.upperBound }
                case .duplicate, .none: break
                case .stop(let id): stopping.append(id)
                }
                do {
                    if let partner = try state.map.apply(action) { stopping.append(partner) }
                } catch {
                    break  // an action the map refuses: nothing more to do this round
                }
                if case .duplicate(let id, _) = action { range = state.map.position(of: id) }
                for id in stopping {
                    Self.recordEnd(id, .stopped, &state)
                    if let link = state.links.removeValue(forKey: id), let task = link.task { cancels.append((link.lane, task)) }
                    if id == idle { idle = nil }
                }
                if !stopping.isEmpty { Self.giveBack(&state) }
                let worker: ConnectionID? = {
                    switch action {
                    case .start(let id, _): return id
                    case .steal(_, _, let thief): return thief
                    case .duplicate(let id, _): return id
                    default: return nil
                    }
                }()
                guard let worker, let range else { continue }
                if worker == idle { idle = nil }
                if worker == newID { state.nextID += 1 }
                let lane = state.links[worker]?.lane ?? Self.freeLane(state)
                Self.recordEnd(worker, .completed, &state)
                state.links[worker] = Link(
                    lane: lane, task: nil, asked: range, accepted: false,
                    mark: RequestMark(connection: worker.rawValue, range: range, start: .now))
                let added = worker == newID && !state.isFixed
                state.links[worker]?.awaitingFirstAnswer = added
                launches.append((worker, lane, range))
            }
            // A connection left with nothing to do stops.
            if let idle, state.links[idle]?.task == nil, state.map.position(of: idle) == nil {
                state.links[idle] = nil
            }
            if state.links.values.filter(\.accepted).count < Self.target(state) { state.windowComplete = false }
            return state.map.isComplete
        }
        cancel(cancels)
        for (id, lane, range) in launches { launch(id, lane: lane, range: range) }
        if let report { host?.segmentsReport(report) }
        if complete { end(.complete) }
    }

    /// Whether `action` starts connection `newID`, a new one.
    static func startsConnection(_ action: SegmentAction, _ newID: ConnectionID) -> Bool {
        switch action {
        case .start(let id, _), .duplicate(let id, _): return id == newID
        case .steal(_, _, let thief): return thief == newID
        case .stop, .none: return false
        }
    }

    /// The lowest lane no connection of this download runs in (lane 0 is the manager's own session).
    static func freeLane(_ state: State) -> Int {
        let used = Set(state.links.values.map(\.lane))
        var lane = 0
        while used.contains(lane) { lane += 1 }
        return lane
    }

    /// The writer fell behind: every connection stops (their ranges stay, with what they wrote)
    /// until half the backlog is written, then scheduling starts them again.
    func pauseForDisk() {
        let cancels = state.withLock { state -> [(Int, URLSessionTask)] in
            guard !state.stopped else { return [] }
            for id in Array(state.links.keys) {
                flush(id, &state)
                Self.recordEnd(id, .stopped, &state)
            }
            state.pausedForDisk = true
            state.tally.diskPauses += 1
            var cancels: [(Int, URLSessionTask)] = []
            for (id, link) in state.links {
                _ = state.map.release(id)
                if let task = link.task { cancels.append((link.lane, task)) }
            }
            state.links = [:]
            return cancels
        }
        cancel(cancels)
        writer.whenBacklog(atMost: setup.bufferLimit / 2) { [weak self] in
            guard let self else { return }
            state.withLock { $0.pausedForDisk = false }
            schedule(idle: nil)
        }
    }
}
