import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The connections of one split download (Docs/SegmentedDownloads.md) as a value machine: events
/// in, actions out, in the shape of AsyncHTTPClient's `HTTPConnectionPool.StateMachine`.
///
/// The transfer's first request (`Range: bytes=0-`, or the rest of a map being continued) becomes
/// the first connection once its 206 proves the server serves ranges of one version
/// (`TransferState.segmentsToBegin`). From then on the crew owns the bytes: every connection's
/// chunks are checked against the map (``SegmentMap``), handed out as writes at their own
/// offsets, and counted only as they are handed out, so a record (decided after) never claims a
/// byte whose write is not ordered before it. The scheduler (``SegmentScheduler``) and the
/// connection count (``AdaptiveConnectionCount``) decide.
///
/// It is a value kept in the transfer's file body (`FileBody.split`) and changed under the
/// transfer's one lock. It holds no lock, timer, clock, writer or session, and no reference to the
/// transfer: every event takes `now`, and returns the ``Action``s the driver
/// (TransferTask+Segments.swift) performs in order. `Request` is the type of a request's handle
/// (`URLSessionTask` in the library; tests use a class of their own): the machine compares
/// handles by identity and hands them back in ``Action/cancel(lane:_:)``, nothing more.
struct SplitCrew<Request: AnyObject> {
    /// How a crew ended by itself.
    enum Ending {
        /// Every byte of the file is handed out to be written.
        case complete
        /// The connections failed (`error`), or an answer broke a rule: the transfer's retry model decides.
        case failed(CourierError)
        /// An answer proved the file changed: the transfer discards every byte and starts over.
        case restart(String)
    }

    /// What the transfer gives the crew.
    struct Setup {
        /// The map, with the first connection already on its range.
        var map: SegmentMap
        /// The first connection's request: the transfer's current attempt, already answered.
        var primary: Request
        /// The first connection's identity in the map.
        var primaryID: ConnectionID
        /// The request segments are asked with (their `Range` and `If-Range` are set per request).
        var request: URLRequest
        /// A fixed split's count; `nil` for the automatic count.
        var fixed: Int?
        /// The most connections allowed (the per-host cap applied).
        var cap: Int
        /// How often the record is brought up to date.
        var recordInterval: Duration
        /// The writer's backlog above which connections pause (``DownloadPolicy/maximumBufferedBytes``).
        var bufferLimit: Int64
        /// Someone listens to the task's events: build ``Action/report(_:)`` only then.
        var reports = true
    }

    /// What the crew did, for the download's report.
    struct Tally {
        /// The most connections at once.
        var peakConnections = 1
        /// Times every connection stopped until the writer caught up.
        var diskPauses = 0
        /// Body bytes received from the network by every connection (clipped bytes included).
        var networkBytes: Int64 = 0
        /// The requests that ended, for the task's timeline (at most ``TaskMetrics/segmentRequestLimit``).
        var requests: [RequestMark] = []
    }

    /// One request of a connection, for the timeline; the transfer turns its instants into offsets.
    struct RequestMark {
        let connection: Int
        let range: Range<Int64>
        let start: ContinuousClock.Instant
        var end: ContinuousClock.Instant?
        var statusCode: Int?
        var bytesWritten: Int64 = 0
        var ending: TaskMetrics.SegmentRequest.Ending?
    }

    /// What the crew leaves the transfer when it ends or is stopped.
    struct Handover {
        /// The map to keep, without connections.
        var map: SegmentMap
        var tally: Tally
        /// The transfer's own request (the first connection's) already ended through the crew:
        /// its completion will not come again.
        var primaryEnded: Bool
    }

    /// A range handed over after its connection failed: the task's retry event, owned by a
    /// split connection (``RetryOwner/splitConnection``).
    struct RangeRetry {
        /// The connection that failed.
        let connection: ConnectionID
        let error: CourierError
        /// Failed requests in a row, this one included, and how many end the crew.
        let retry: Int
        let limit: Int
        /// No request starts before this (a `Retry-After`); zero otherwise.
        let delay: Duration
        /// Bytes of the file written by every connection, and where the range continues.
        let bytesWritten: Int64
        let continuesFrom: Int64
    }

    /// What the driver does, in order, after an event.
    enum Action {
        /// Make and start connection `id`'s request on `lane` (0: the manager's own session).
        case launch(ConnectionID, lane: Int, URLRequest)
        /// Cancel a request the crew no longer wants; its ending then only frees its place under
        /// the cap (``held``).
        case cancel(lane: Int, Request)
        /// Write these bytes at this offset of the partial file (counted in the map already).
        case write(Data, at: Int64)
        /// Bring the resume record up to date with this map (after the writes before it).
        case record(SegmentMap)
        /// The bytes of the file written so far: the task's progress.
        case progress(written: Int64)
        /// Tell the monitors about the connections.
        case report(TaskConnectionsEvent)
        /// Announce a range handed over after a failure (the task's retry event).
        case retry(RangeRetry)
        /// Every connection stopped for the disk: call ``diskDrained(now:)`` once the writer's
        /// backlog is down to this many bytes.
        case waitForDisk(atMost: Int64)
        /// The crew ended by itself; the transfer completes, retries or starts over. Nothing
        /// follows it.
        case end(Ending, Handover)
    }

    /// One connection: the lane it runs in and its current request.
    struct Link {
        let lane: Int
        /// The current request (`nil` while the driver makes it, and once it ended).
        var request: Request?
        /// A launch was decided and the driver makes its request: it counts as held (``held``).
        var launching = false
        /// The range the current request asked for.
        var asked: Range<Int64>
        /// Its head passed the segment checks: its bytes may be written.
        var accepted: Bool
        /// Bytes received and not yet handed out as a write (written in batches).
        var pending = Data()
        /// Bytes received in the current rate window. Counted as they arrive, not as batches are
        /// handed out: a slow connection gathers for seconds before its first batch, and must
        /// not look idle (unmeasured) meanwhile.
        var windowBytes: Int64 = 0
        /// Where the connection's current rate window began: when its answer was accepted, then
        /// at each measurement (a request still waiting for its head is not measured).
        var rateStart: ContinuousClock.Instant?
        /// `windowBytes` at the last tick, and the tick its bytes last grew at: how long it went
        /// silent, for the length of the count's windows (``AdaptiveConnectionCount/windowSeconds(inSlowStart:quiet:connections:configuration:)``).
        var heardBytes: Int64 = 0
        var lastHeard: ContinuousClock.Instant?
        /// The crew cancelled the current request: its ending is not a failure.
        var cancelled = false
        /// A connection the automatic count added, whose first request has no answer yet: the
        /// next new connection waits for it (``schedule(idle:now:reporting:into:)``).
        var awaitingFirstAnswer = false
        /// The current request, for the timeline; `nil` once it is recorded as ended.
        var mark: RequestMark?
    }

    let setup: Setup
    var map: SegmentMap
    var scheduler = SegmentScheduler()
    var count: AdaptiveConnectionCount
    var links: [ConnectionID: Link] = [:]
    var nextID: Int
    let started: ContinuousClock.Instant
    /// When the count's window began (when its last step was decided), and the bytes every
    /// connection received since.
    var windowStart: ContinuousClock.Instant
    var windowBytes: Int64 = 0
    /// Every wanted connection received bytes since its answer; since `windowHeard`.
    var windowComplete = true
    var windowHeard: ContinuousClock.Instant
    /// The longest silence of a connection that ended in this window, and in the one before.
    var quiet: Duration = .zero
    var quietBefore: Duration = .zero
    /// When the monitors last heard of the connections (once per rate window).
    var rateWindowStart: ContinuousClock.Instant
    /// Each connection's speed over its last rate window: kept across its requests.
    var rates: [ConnectionID: Throughput] = [:]
    /// The best speed one connection reached: what a new connection is expected to reach.
    var bestRate: Double?
    var lastRecord: ContinuousClock.Instant
    /// Bytes counted since the record was last brought up to date.
    var bytesSinceRecord: Int64 = 0
    /// No request starts before this: a refusal's `Retry-After` (the server asked to wait).
    var quietUntil: ContinuousClock.Instant?
    /// Failed requests since the last byte was written: bounded (``failureLimit``).
    var failuresWithoutProgress = 0
    /// The crew ended or was stopped: nothing is written, started or counted any more.
    private(set) var stopped = false
    /// The transfer's own request ended (its completion came through the crew).
    var primaryEnded = false
    var tally = Tally()
    /// Connections were stopped until the writer catches up.
    var pausedForDisk = false
    /// Requests the crew cancelled whose ending has not come yet: until it comes the server may
    /// still be answering each one, so each still counts against the cap (``held``). Kept by
    /// reference, so that a new request can never take a gone one's identity.
    var closing: [ObjectIdentifier: Request] = [:]
    /// The request whose ending is being decided: a stop it causes (a back-off may stop its own
    /// connection) cancels nothing open, and waits for no second ending.
    var endingNow: ObjectIdentifier?

    /// Bytes of one connection gathered before they are handed out as a write (and counted).
    static var batchBytes: Int { 256 * 1024 }
    /// How often the driver ticks the crew.
    static var tickInterval: Duration { .milliseconds(10) }
    /// A window still waiting for a wanted connection's first bytes after this long starts
    /// afresh: a connection that never sends holds no window open for ever.
    static var answerWait: Duration { .seconds(2) }
    /// The window each connection's speed is measured over, for the scheduler.
    static var rateWindow: Duration { .milliseconds(250) }
    /// A record is due once every connection wrote this much on average since the last one…
    static var recordBytesPerConnection: Int64 { 512 * 1024 }
    /// …but not more often than this (each record is written and synced).
    static var recordSpacing: Duration { .milliseconds(100) }

    /// A crew over `setup.map`, whose first connection (`setup.primary`) was answered at `now`.
    init(_ setup: Setup, now: ContinuousClock.Instant) {
        self.setup = setup
        self.map = setup.map
        self.count = AdaptiveConnectionCount(cap: setup.cap, initial: setup.fixed ?? 1)
        self.nextID = setup.primaryID.rawValue + 1
        self.started = now
        self.windowStart = now
        self.windowHeard = now
        self.rateWindowStart = now
        self.lastRecord = now
        let range = setup.map.position(of: setup.primaryID) ?? 0..<0
        links[setup.primaryID] = Link(
            lane: 0, request: setup.primary, asked: range, accepted: true, rateStart: now,
            mark: RequestMark(connection: setup.primaryID.rawValue, range: range, start: now, statusCode: 206))
    }

    /// A fixed split: the count starts at it, is never raised, and backs off like the automatic one.
    var isFixed: Bool { setup.fixed != nil }

    /// The most failed requests in a row (no byte written between them) before the crew gives
    /// the failure to the transfer's retry model.
    var failureLimit: Int { 3 + setup.cap }

    /// Connections working now.
    var connectionCount: Int { stopped ? 0 : links.count }

    /// The requests the server may be answering now: every connection's current request (or the
    /// one being made for it) and every cancelled one whose ending has not come. The one rule of
    /// hand-overs: a request starts only while this is below the cap (``schedule(idle:now:reporting:into:)``),
    /// so a connection that replaces another starts once the one it replaces has ended, and the
    /// server never counts more connections than were granted, not even for a moment.
    var held: Int {
        var live = closing.count
        for link in links.values {
            if let request = link.request {
                if closing[ObjectIdentifier(request)] == nil { live += 1 }
            } else if link.launching {
                live += 1
            }
        }
        return live
    }

    /// Cancels `request` on `lane`, and counts it held until its ending comes (``held``).
    mutating func cancel(_ request: Request, lane: Int, into actions: inout [Action]) {
        if ObjectIdentifier(request) != endingNow { closing[ObjectIdentifier(request)] = request }
        actions.append(.cancel(lane: lane, request))
    }

    /// The connections wanted now: the fixed split's count, or the automatic count; never above the cap.
    var target: Int { min(count.target, count.cap) }

    /// Whether `request` is connection `id`'s current request: its callbacks are the crew's.
    func owns(_ id: ConnectionID, _ request: Request) -> Bool {
        !stopped && links[id]?.request === request
    }

    // MARK: - Starting and stopping

    /// The first decisions, once the crew is installed: the first connection already runs.
    mutating func start(now: ContinuousClock.Instant) -> [Action] {
        var actions: [Action] = []
        schedule(idle: nil, now: now, into: &actions)
        return actions
    }

    /// Stops every connection for the transfer (cancel, pause, deadline, a failure of its own):
    /// gathered bytes are handed out as writes first, then every request is cancelled. Returns
    /// those actions and what the transfer takes back; a crew that ended by itself hands its map
    /// over once more.
    mutating func stop(now: ContinuousClock.Instant) -> (actions: [Action], handover: Handover) {
        var actions: [Action] = []
        stopAll(now: now, into: &actions)
        return (actions, handover)
    }

    /// What the transfer takes back now.
    var handover: Handover { Handover(map: map.withoutConnections, tally: tally, primaryEnded: primaryEnded) }

    /// Ends the crew by itself: stops every connection and tells the transfer, once.
    mutating func end(_ ending: Ending, now: ContinuousClock.Instant, into actions: inout [Action]) {
        guard !stopped else { return }
        stopAll(now: now, into: &actions)
        actions.append(.end(ending, handover))
    }

    /// Marks the crew stopped, writes what every accepted connection gathered, and cancels every request.
    private mutating func stopAll(now: ContinuousClock.Instant, into actions: inout [Action]) {
        for id in links.keys.sorted() {
            flush(id, into: &actions)
            recordEnd(id, .stopped, now: now)
        }
        stopped = true
        for id in links.keys.sorted() {
            if let link = links[id], let request = link.request { actions.append(.cancel(lane: link.lane, request)) }
        }
        links = [:]
    }

    /// Records the end of connection `id`'s current request for the timeline, once.
    mutating func recordEnd(_ id: ConnectionID, _ ending: TaskMetrics.SegmentRequest.Ending, now: ContinuousClock.Instant) {
        guard var mark = links[id]?.mark else { return }
        mark.end = now
        mark.ending = ending
        links[id]?.mark = nil
        if tally.requests.count < TaskMetrics.segmentRequestLimit { tally.requests.append(mark) }
    }

    // MARK: - Bytes

    /// Hands out what connection `id` gathered as a write at its position and counts it in the
    /// map (clipped to its range). Returns the map's answer, or `nil` when nothing was written.
    @discardableResult
    mutating func flush(_ id: ConnectionID, into actions: inout [Action]) -> SegmentMap.Advance? {
        guard let link = links[id], link.accepted, !link.pending.isEmpty, !stopped else { return nil }
        let data = link.pending
        links[id]?.pending = Data()
        guard let position = map.position(of: id) else { return nil }
        guard let advance = try? map.advance(id, by: Int64(data.count)) else { return nil }
        if advance.accepted > 0 {
            links[id]?.mark?.bytesWritten += advance.accepted
            actions.append(
                .write(advance.accepted == Int64(data.count) ? data : data.prefix(Int(advance.accepted)), at: position.lowerBound))
            bytesSinceRecord += advance.accepted
            failuresWithoutProgress = 0
        }
        return advance
    }
}
