import Foundation

/// When a split download measures, asks its scheduler, keeps its record and minds the disk: the
/// tick (every ``SplitCrew/tickInterval``, `now` and the writer's backlog given by the driver) and
/// what it decides.
extension SplitCrew {
    /// Every tick: measure, adjust the count, schedule, keep the record, mind the disk. `backlog`
    /// is what the writer has not written yet.
    mutating func tick(now: ContinuousClock.Instant, backlog: Int64) -> [Action] {
        var actions: [Action] = []
        guard !stopped else { return actions }
        listen(at: now)
        // Each connection's speed, for the scheduler, over at least a rate window of its own
        // since its answer was accepted (a connection just started is not measured as stalled).
        measureConnections(at: now)
        let measured = now - rateWindowStart >= Self.rateWindow
        if measured { rateWindowStart = now }
        // The total, for the automatic count (AdaptiveConnectionCount.windowSeconds).
        if isFixed || pausedForDisk {
            // Nothing to measure; after a pause, the next window starts when it ends, so the
            // paused time (no bytes) is not read as a step that did not pay.
            restartWindow(at: now)
        } else {
            if !windowComplete, heard >= target { allHeard(at: now) }
            let seconds = (now - windowStart).seconds
            let needed = AdaptiveConnectionCount.windowSeconds(
                inSlowStart: count.isInSlowStart, quiet: quiet(at: now).seconds, connections: target,
                configuration: count.configuration)
            if windowComplete, (now - windowHeard).seconds >= needed {
                count.observe(Throughput(bytes: windowBytes, seconds: seconds), connections: target, now: (now - started).seconds)
                restartWindow(at: now)
            } else if !windowComplete, now - windowStart >= Self.answerWait {
                restartWindow(at: now)
            }
        }
        if now - lastRecord >= setup.recordInterval {
            lastRecord = now
            bytesSinceRecord = 0
            actions.append(.record(map.withoutConnections))
        }
        if !pausedForDisk, backlog > setup.bufferLimit {
            pauseForDisk(now: now, into: &actions)
            return actions
        }
        // The monitors hear of the connections when they change, and once per rate window.
        schedule(idle: nil, now: now, reporting: measured, into: &actions)
        return actions
    }

    /// Measures every answered connection whose rate window is over, and forgets those gone.
    private mutating func measureConnections(at now: ContinuousClock.Instant) {
        for id in Array(links.keys) {
            guard let link = links[id], link.accepted, let since = link.rateStart, now - since >= Self.rateWindow else {
                continue
            }
            let rate = Throughput(bytes: link.windowBytes, seconds: (now - since).seconds)
            rates[id] = rate
            if let speed = rate.bytesPerSecond { bestRate = max(bestRate ?? 0, speed) }
            links[id]?.windowBytes = 0
            links[id]?.heardBytes = 0
            links[id]?.rateStart = now
        }
        for id in rates.keys where links[id] == nil { rates[id] = nil }
    }

    /// Notes, at each tick, which answered connections received bytes since the last one, and
    /// the longest silence that ended: a server pacing in bursts shows its period here.
    private mutating func listen(at now: ContinuousClock.Instant) {
        for (id, link) in links where link.accepted && link.windowBytes != link.heardBytes {
            if let last = link.lastHeard { quiet = max(quiet, now - last) }
            links[id]?.lastHeard = now
            links[id]?.heardBytes = link.windowBytes
        }
    }

    /// The longest silence of an answered connection lately: ended in this window or the one
    /// before, or going on now.
    func quiet(at now: ContinuousClock.Instant) -> Duration {
        var longest = max(quiet, quietBefore)
        for link in links.values where link.accepted {
            if let last = link.lastHeard { longest = max(longest, now - last) }
        }
        return longest
    }

    /// Starts a measuring window at a step of the count: it counts every connection's bytes from
    /// now, and ends a window's length after the last wanted connection received its first bytes.
    private mutating func restartWindow(at now: ContinuousClock.Instant) {
        windowBytes = 0
        windowStart = now
        quietBefore = quiet
        quiet = .zero
        windowComplete = false
        if heard >= target { allHeard(at: now) }
    }

    /// The answered connections that received bytes since their answer. A connection counts from
    /// its first bytes, not its head: a server that paces in bursts may send none for a period.
    var heard: Int { links.values.filter { $0.accepted && $0.lastHeard != nil }.count }

    /// Every wanted connection received bytes: the window keeps the bytes it counted (the first
    /// bytes of those heard earlier are part of the step) and measures on from `now`.
    private mutating func allHeard(at now: ContinuousClock.Instant) {
        windowComplete = true
        windowHeard = now
    }

    /// The per-connection view for the event monitors (``TaskConnectionsEvent``).
    var connectionsEvent: TaskConnectionsEvent {
        let connections = links.keys.sorted().compactMap { id -> TaskConnectionsEvent.Connection? in
            guard let index = map.index(of: id) else { return nil }
            let segment = map.segments[index]
            let isOwner = segment.owner == id
            let range = isOwner ? segment.start..<segment.end : (segment.duplicate?.from ?? segment.start)..<segment.end
            return TaskConnectionsEvent.Connection(
                id: id.rawValue, range: range, written: isOwner ? segment.written : segment.duplicate?.written ?? 0,
                bytesPerSecond: rates[id]?.bytesPerSecond, racing: isOwner ? nil : segment.owner?.rawValue)
        }
        return TaskConnectionsEvent(connections: connections, wanted: target, bytesWritten: map.writtenBytes, length: map.length)
    }

    /// The map for the record, when enough was written since the last one: after a crash, each
    /// connection fetches again at most about ``recordBytesPerConnection`` (plus its unwritten batch).
    mutating func recordIfDue(now: ContinuousClock.Instant) -> SegmentMap? {
        guard bytesSinceRecord >= Self.recordBytesPerConnection * Int64(max(1, links.count)) else { return nil }
        guard now - lastRecord >= Self.recordSpacing else { return nil }
        lastRecord = now
        bytesSinceRecord = 0
        return map.withoutConnections
    }

    /// A refused request (an error status, a reset before the answer) or a reset: halve the
    /// connections wanted (AIMD) and hold; with a `Retry-After`, start no request before it.
    mutating func backOff(retryAfter: Duration?, now: ContinuousClock.Instant, into actions: inout [Action]) {
        let working = links.values.filter(\.accepted).count
        count.backOff(now: (now - started).seconds, retryAfter: retryAfter?.seconds, working: working)
        if let retryAfter { quietUntil = max(quietUntil ?? now, now + retryAfter) }
        // The scheduler stops the extra connections at once, not one per round trip.
        schedule(idle: nil, now: now, into: &actions)
    }

    /// Asks the scheduler until it has nothing more to do, and acts on its answers; `idle` is a
    /// connection whose range is done and that can take more. Ends the crew once the map is complete.
    mutating func schedule(idle: ConnectionID?, now: ContinuousClock.Instant, reporting: Bool = false, into actions: inout [Action]) {
        guard !stopped else { return }
        if map.isComplete { return finish(now: now, into: &actions) }
        guard !pausedForDisk else { return }
        var changed = false
        var idle = idle
        // While the server asked to wait, only stops: the connections streaming go on, an idle
        // one leaves, and ticks start the rest once the wait is over.
        let waiting = quietUntil.map { now < $0 } ?? false
        for _ in 0..<(2 * DownloadSplit.maximumConnections) {
            let newID = ConnectionID(nextID)
            let action = scheduler.decide(
                map: map, rates: rates, fresh: bestRate, target: waiting ? min(target, map.connections.count) : target,
                idle: waiting ? nil : idle, newConnection: newID)
            if action == .none { break }
            // The automatic count adds connections one answer at a time: a server that refuses
            // the one above its limit sees one refused request, not the rest of a step already on
            // their way (the chain goes on from `answered`, a round trip each).
            if !isFixed, Self.startsConnection(action, newID), links.values.contains(where: \.awaitingFirstAnswer) { break }
            // The one rule of hand-overs: no request starts while the cap's worth may still be
            // open at the server (``held``); the ending of the one it replaces schedules again.
            if Self.worker(of: action) != nil, held >= setup.cap { break }
            var range: Range<Int64>?
            var stopping: [ConnectionID] = []
            switch action {
            case .start(_, let asked): range = asked
            case .steal(let owner, let offset, _): range = map.position(of: owner).map { offset..<$0.upperBound }
            case .duplicate, .none: break
            case .stop(let id): stopping.append(id)
            }
            do {
                if let partner = try map.apply(action) { stopping.append(partner) }
            } catch {
                break  // an action the map refuses: nothing more to do this round
            }
            if case .duplicate(let id, _) = action { range = map.position(of: id) }
            for id in stopping {
                recordEnd(id, .stopped, now: now)
                if let link = links.removeValue(forKey: id), let request = link.request {
                    cancel(request, lane: link.lane, into: &actions)
                    changed = true
                }
                if id == idle { idle = nil }
            }
            if !stopping.isEmpty { giveBack() }
            guard let worker = Self.worker(of: action), let range else { continue }
            if worker == idle { idle = nil }
            if worker == newID { nextID += 1 }
            let lane = links[worker]?.lane ?? freeLane
            recordEnd(worker, .completed, now: now)
            links[worker] = Link(
                lane: lane, request: nil, launching: true, asked: range, accepted: false,
                awaitingFirstAnswer: worker == newID && !isFixed,
                mark: RequestMark(connection: worker.rawValue, range: range, start: now))
            actions.append(.launch(worker, lane: lane, request(for: range, lane: lane)))
            changed = true
        }
        // A connection left with nothing to do stops.
        if let idle, links[idle]?.request == nil, map.position(of: idle) == nil { links[idle] = nil }
        if links.values.filter(\.accepted).count < target { windowComplete = false }
        if setup.reports, reporting || changed { actions.append(.report(connectionsEvent)) }
        if map.isComplete { finish(now: now, into: &actions) }
    }

    /// Every byte is handed out: requests still running are past their ranges and are cancelled,
    /// and the crew ends once none of its requests may still be open at the server (``held``),
    /// so that whoever granted its connections (a queue's per-host cap) hands them on only once
    /// the server let them go. The last ending schedules again, and lands here.
    private mutating func finish(now: ContinuousClock.Instant, into actions: inout [Action]) {
        for id in links.keys.sorted() {
            guard let link = links[id], let request = link.request else { continue }
            flush(id, into: &actions)
            recordEnd(id, .stopped, now: now)
            if closing[ObjectIdentifier(request)] == nil { cancel(request, lane: link.lane, into: &actions) }
        }
        links = [:]
        if closing.isEmpty { end(.complete, now: now, into: &actions) }
    }

    /// The connection that works after `action`, if it starts one.
    private static func worker(of action: SegmentAction) -> ConnectionID? {
        switch action {
        case .start(let id, _), .duplicate(let id, _): return id
        case .steal(_, _, let thief): return thief
        case .stop, .none: return nil
        }
    }

    /// Whether `action` starts connection `newID`, a new one.
    static func startsConnection(_ action: SegmentAction, _ newID: ConnectionID) -> Bool {
        worker(of: action) == newID
    }

    /// The lowest lane no connection of this download runs in (lane 0 is the manager's own session).
    var freeLane: Int {
        let used = Set(links.values.map(\.lane))
        var lane = 0
        while used.contains(lane) { lane += 1 }
        return lane
    }

    /// The writer fell behind: every connection stops (their ranges stay, with what they wrote)
    /// until half the backlog is written, then scheduling starts them again.
    private mutating func pauseForDisk(now: ContinuousClock.Instant, into actions: inout [Action]) {
        for id in links.keys.sorted() {
            flush(id, into: &actions)
            recordEnd(id, .stopped, now: now)
        }
        pausedForDisk = true
        tally.diskPauses += 1
        for id in links.keys.sorted() {
            guard let link = links[id] else { continue }
            _ = map.release(id)
            if let request = link.request { cancel(request, lane: link.lane, into: &actions) }
        }
        links = [:]
        actions.append(.waitForDisk(atMost: setup.bufferLimit / 2))
    }

    /// The writer caught up after a pause for the disk: scheduling starts the connections again.
    mutating func diskDrained(now: ContinuousClock.Instant) -> [Action] {
        var actions: [Action] = []
        guard !stopped, pausedForDisk else { return actions }
        pausedForDisk = false
        schedule(idle: nil, now: now, into: &actions)
        return actions
    }
}
