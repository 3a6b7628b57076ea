import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
internal import CourierSupport

/// The connections of one split download (Docs/SegmentedDownloads.md): a crew working for the
/// download's `TransferTask`, which stays the task the caller sees.
///
/// The transfer's first request (`Range: bytes=0-`, or the rest of a map being continued) becomes
/// the first connection once its 206 proves the server serves ranges of one version
/// (`TransferState.segmentsToBegin`). From then on the crew owns the bytes: every connection's
/// chunks are checked against the map (``SegmentMap``), written at their own offsets by the
/// download's one writer, and counted only once handed to it, so a record (taken after) never
/// claims a byte that is not queued before it. The scheduler (``SegmentScheduler``) and the
/// connection count (``AdaptiveConnectionCount``) decide; the crew acts on their answers after
/// unlocking. When the map is complete, or a rule says restart or fail, or the transfer stops it,
/// the crew hands its map back to the transfer, whose retry model and completion take over.
///
/// One lock around one ``State``; URLSession, the writer's callbacks and the transfer are called
/// after it is released (the writer's enqueue takes only its own lock and never calls back).
final class SegmentedDownload: Sendable {
    /// How a crew ended by itself.
    enum Ending: Sendable {
        /// Every byte of the file is handed to the writer.
        case complete
        /// The connections failed (`error`), or an answer broke a rule: the transfer's retry model decides.
        case failed(CourierError)
        /// An answer proved the file changed: the transfer discards every byte and starts over.
        case restart(String)
    }

    /// What the transfer gives the crew.
    struct Setup: Sendable {
        /// The map, with the first connection already on its range.
        var map: SegmentMap
        /// The transfer's current URLSession task: the first connection, already answered.
        var primary: URLSessionTask
        /// The first connection's identity in the map.
        var primaryID: ConnectionID
        /// The request segments are asked with (their `Range` and `If-Range` are set per request).
        var request: URLRequest
        /// The split asked for, and the most connections allowed (the per-host cap applied).
        var split: DownloadSplit
        var cap: Int
        /// How often the record is brought up to date.
        var recordInterval: Duration
        /// The writer's backlog above which connections pause (``DownloadPolicy/maximumBufferedBytes``).
        var bufferLimit: Int64
    }

    /// What the crew did, for the download's report.
    struct Tally: Sendable {
        /// The most connections at once.
        var peakConnections = 1
        /// Times every connection stopped until the writer caught up.
        var diskPauses = 0
        /// Body bytes received from the network by every connection (clipped bytes included).
        var networkBytes: Int64 = 0
        /// The requests that ended, for the task's timeline (at most ``MetricsRecorder/segmentRequestLimit``).
        var requests: [RequestMark] = []
    }

    /// One request of a connection, for the timeline; the transfer turns its instants into offsets.
    struct RequestMark: Sendable {
        let connection: Int
        let range: Range<Int64>
        let start: ContinuousClock.Instant
        var end: ContinuousClock.Instant?
        var statusCode: Int?
        var bytesWritten: Int64 = 0
        var ending: TaskMetrics.SegmentRequest.Ending?
    }

    /// One connection: the lane it runs in and its current request.
    struct Link {
        let lane: Int
        /// The current request's URLSession task (`nil` while it is being made).
        var task: URLSessionTask?
        /// The range the current request asked for.
        var asked: Range<Int64>
        /// Its head passed the segment checks: its bytes may be written.
        var accepted: Bool
        /// Bytes received and not yet handed to the writer (written in batches).
        var pending = Data()
        /// Bytes received in the current rate window. Counted as they arrive, not as batches are
        /// handed to the writer: a slow connection gathers for seconds before its first batch,
        /// and must not look idle (unmeasured) meanwhile.
        var windowBytes: Int64 = 0
        /// Where the connection's current rate window began: when its answer was accepted, then
        /// at each measurement (a request still waiting for its head is not measured).
        var rateStart: ContinuousClock.Instant?
        /// `windowBytes` at the last tick, and the tick its bytes last grew at: how long it went
        /// silent, for the length of the count's windows (``AdaptiveConnectionCount/windowSeconds(inSlowStart:quiet:configuration:)``).
        var heardBytes: Int64 = 0
        var lastHeard: ContinuousClock.Instant?
        /// The crew cancelled the current request: its ending is not a failure.
        var cancelled = false
        /// A connection the automatic count added, whose first request has no answer yet: the
        /// next new connection waits for it (``SegmentedDownload/schedule(idle:reporting:)``).
        var awaitingFirstAnswer = false
        /// The current request, for the timeline; `nil` once it is recorded as ended.
        var mark: RequestMark?
    }

    struct State {
        var map: SegmentMap
        var scheduler = SegmentScheduler()
        var count: AdaptiveConnectionCount
        /// A fixed split: the count starts at it, is never raised, and backs off like the automatic one.
        let isFixed: Bool
        var links: [ConnectionID: Link] = [:]
        var nextID: Int
        let started = ContinuousClock.now
        /// When the count's window began (when its last step was decided), and the bytes every
        /// connection received since.
        var windowStart = ContinuousClock.now
        var windowBytes: Int64 = 0
        /// Every wanted connection received bytes since its answer; since `windowHeard`.
        var windowComplete = true
        var windowHeard = ContinuousClock.now
        /// The longest silence of a connection that ended in this window, and in the one before.
        var quiet: Duration = .zero
        var quietBefore: Duration = .zero
        /// When the monitors last heard of the connections (once per rate window).
        var rateWindowStart = ContinuousClock.now
        /// Each connection's speed over its last rate window: kept across its requests.
        var rates: [ConnectionID: Throughput] = [:]
        /// The best speed one connection reached: what a new connection is expected to reach.
        var bestRate: Double?
        var lastRecord = ContinuousClock.now
        /// Bytes counted since the record was last brought up to date.
        var bytesSinceRecord: Int64 = 0
        /// No request starts before this: a refusal's `Retry-After` (the server asked to wait).
        var quietUntil: ContinuousClock.Instant?
        /// Failed requests since the last byte was written: bounded (``failureLimit``).
        var failuresWithoutProgress = 0
        var lastFailure: CourierError?
        /// The crew ended or was stopped: nothing is written, started or counted any more.
        var stopped = false
        /// The transfer's own URLSession task ended (its completion came through the crew).
        var primaryEnded = false
        var tally = Tally()
        /// Connections were stopped until the writer catches up.
        var pausedForDisk = false
        var timer: (any DispatchSourceTimer)?
    }

    /// Bytes of one connection gathered before they are handed to the writer (and counted).
    static let batchBytes = 256 * 1024
    /// How often the crew measures and schedules.
    static let tickInterval: Duration = .milliseconds(10)
    /// A window still waiting for a wanted connection's first bytes after this long starts
    /// afresh: a connection that never sends holds no window open for ever.
    static let answerWait: Duration = .seconds(2)
    /// The window each connection's speed is measured over, for the scheduler.
    static let rateWindow: Duration = .milliseconds(250)
    /// A record is due once every connection wrote this much on average since the last one…
    static let recordBytesPerConnection: Int64 = 512 * 1024
    /// …but not more often than this (each record is written and synced).
    static let recordSpacing: Duration = .milliseconds(100)

    /// The transfer the crew works for (it keeps the crew while the crew works).
    weak let host: TransferTask?
    let setup: Setup
    let writer: DiskWriter
    let mainCore: SessionCore
    /// The crew's own lane sessions, released when it ends (LaneSessions.swift).
    let lanes: LaneSessions.Lease
    let state: Locked<State>

    init(host: TransferTask, setup: Setup, writer: DiskWriter, core: SessionCore) {
        self.host = host
        self.setup = setup
        self.writer = writer
        self.mainCore = core
        self.lanes = core.lanes.lease()
        var fixed: Int?
        if case .fixed(let wanted) = setup.split.mode { fixed = wanted }
        let count = AdaptiveConnectionCount(cap: setup.cap, initial: fixed ?? 1)
        var initial = State(map: setup.map, count: count, isFixed: fixed != nil, nextID: setup.primaryID.rawValue + 1)
        let primaryRange = setup.map.position(of: setup.primaryID) ?? 0..<0
        initial.links[setup.primaryID] = Link(
            lane: 0, task: setup.primary, asked: primaryRange, accepted: true, rateStart: .now,
            mark: RequestMark(connection: setup.primaryID.rawValue, range: primaryRange, start: .now, statusCode: 206))
        self.state = Locked(initial)
    }

    /// The most failed requests in a row (no byte written between them) before the crew gives
    /// the failure to the transfer's retry model.
    var failureLimit: Int { 3 + setup.cap }

    /// Connections working now.
    var connectionCount: Int { state.withLock { $0.stopped ? 0 : $0.links.count } }

    /// Starts measuring and scheduling; the first connection is already running.
    func start() {
        let timer = DispatchSource.makeTimerSource(queue: mainCore.callQueue)
        let interval = Self.tickInterval.seconds
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(20))
        timer.setEventHandler { [weak self] in self?.tick() }
        let armed = state.withLock { state -> Bool in
            guard !state.stopped else { return false }
            state.timer = timer
            return true
        }
        if armed { timer.resume() }
        schedule(idle: nil)
    }

    /// Stops every connection for the transfer (cancel, pause, deadline, a failure of its own):
    /// gathered bytes are handed to the writer first. Returns the map to keep, and whether the
    /// transfer's own URLSession task already ended through the crew (its completion will not
    /// come again: the transfer ends that attempt itself).
    func stop() -> (map: SegmentMap, tally: Tally, primaryEnded: Bool) {
        // Never nil: `again` lets a crew that ended by itself hand its map over once more.
        halt(again: true)!
    }

    /// Ends the crew by itself and tells the transfer.
    func end(_ ending: Ending) {
        guard let (map, tally, _) = halt(again: false) else { return }
        host?.segmentsEnded(self, ending, map: map, tally: tally)
    }

    /// Stops every connection and returns what the transfer takes back; `nil` when the crew had
    /// stopped already, unless `again`.
    private func halt(again: Bool) -> (map: SegmentMap, tally: Tally, primaryEnded: Bool)? {
        let halted = state.withLock { state -> (SegmentMap, Tally, Bool, [(Int, URLSessionTask)])? in
            guard again || !state.stopped else { return nil }
            let cancels = stopAll(&state)
            return (state.map.withoutConnections, state.tally, state.primaryEnded, cancels)
        }
        guard let (map, tally, primaryEnded, cancels) = halted else { return nil }
        cancel(cancels)
        // After the cancels (both go through the call queue, in order): closes the lanes' idle connections.
        lanes.release()
        return (map, tally, primaryEnded)
    }

    /// Marks the crew stopped, flushes what every accepted connection gathered, and returns the
    /// requests to cancel.
    private func stopAll(_ state: inout State) -> [(Int, URLSessionTask)] {
        for id in Array(state.links.keys) {
            flush(id, &state)
            Self.recordEnd(id, .stopped, &state)
        }
        state.stopped = true
        state.timer?.cancel()
        state.timer = nil
        var cancels: [(Int, URLSessionTask)] = []
        for (_, link) in state.links {
            if let task = link.task { cancels.append((link.lane, task)) }
        }
        state.links = [:]
        return cancels
    }

    /// Cancels requests, each through its lane's call queue.
    func cancel(_ tasks: [(Int, URLSessionTask)]) {
        for (lane, task) in tasks { core(for: lane)?.cancel(task) }
    }

    /// The session a lane's requests run in: the manager's own for lane 0, a lane session otherwise.
    func core(for lane: Int) -> SessionCore? {
        lane == 0 ? mainCore : lanes.lane(lane)
    }

    /// Records the end of connection `id`'s current request for the timeline, once.
    static func recordEnd(_ id: ConnectionID, _ ending: TaskMetrics.SegmentRequest.Ending, _ state: inout State) {
        guard var mark = state.links[id]?.mark else { return }
        mark.end = .now
        mark.ending = ending
        state.links[id]?.mark = nil
        if state.tally.requests.count < MetricsRecorder.segmentRequestLimit { state.tally.requests.append(mark) }
    }

    // MARK: - Bytes

    /// Hands what connection `id` gathered to the writer at its position and counts it in the
    /// map (clipped to its range). Returns the map's answer, or `nil` when nothing was written.
    @discardableResult
    func flush(_ id: ConnectionID, _ state: inout State) -> SegmentMap.Advance? {
        guard var link = state.links[id], link.accepted, !link.pending.isEmpty, !state.stopped else { return nil }
        defer { state.links[id] = link }
        let data = link.pending
        link.pending = Data()
        guard let position = state.map.position(of: id) else { return nil }
        guard let advance = try? state.map.advance(id, by: Int64(data.count)) else { return nil }
        if advance.accepted > 0 {
            link.mark?.bytesWritten += advance.accepted
            writer.write(advance.accepted == Int64(data.count) ? data : data.prefix(Int(advance.accepted)), at: position.lowerBound)
            state.bytesSinceRecord += advance.accepted
            state.failuresWithoutProgress = 0
        }
        return advance
    }
}
