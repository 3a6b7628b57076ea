/// Decides which connection fetches which bytes of a segmented download, from the map, each
/// connection's observed throughput and the wanted connection count. Pure and deterministic:
/// the same inputs give the same action (Docs/SegmentedDownloads.md, "Rules").
///
/// - More connections than wanted: stop the slowest.
/// - A connection with nothing to do takes, in order: the largest idle range; else the tail
///   of the range with the most time left, split so both finish together (a slow connection's
///   untouched tail goes to a faster one); else, near the end, a duplicate of the tail with the
///   most time left, whatever its size, when it would finish that tail sooner than its owner
///   (the end game); else it stops.
/// - Fewer connections than wanted: a new one takes the largest idle range, else the largest
///   working range's untouched tail from its midpoint (another connection works just before it),
///   else the end game's duplicate, at the speed the download's connections reached.
/// - A connection measured at no bytes in a window is stalled, not unknown: its tail is the first
///   taken over.
struct SegmentScheduler: Sendable, Equatable {
    struct Configuration: Sendable, Equatable {
        /// The smallest range split off for another connection: below it, a new request costs
        /// more than it saves.
        var minimumSplit: Int64 = 1 << 20
        /// A tail taken over by a thief at least as fast as its owner may be smaller, down to this,
        /// when the thief moves less than ``minimumSplit`` in ``stealSeconds``: a request costs a
        /// round trip, small beside what a slow link takes to move a megabyte.
        var minimumSteal: Int64 = 256 << 10
        /// How long a stolen part must take at the thief's speed, at least (between the two floors).
        var stealSeconds: Double = 0.25
        /// How much sooner a duplicate must be expected to finish a tail than its owner: a race
        /// costs a request and bytes fetched twice, so a small lead is not worth one.
        var endGameSpeedup: Double = 2
        /// Split offsets are rounded down to a multiple of this (page-aligned writes) when the
        /// rounded offset is still inside the tail.
        var alignment: Int64 = 4096
    }

    var configuration = Configuration()

    /// The next action.
    /// - Parameters:
    ///   - map: the download's map, with its connections.
    ///   - rates: each connection's recent throughput; a connection missing here counts at
    ///     `fresh`, else at the mean of those measured.
    ///   - fresh: the speed a new connection is expected to reach (the best one connection of
    ///     this download reached), if known.
    ///   - target: the connections wanted now (``AdaptiveConnectionCount``, already capped).
    ///   - idle: a connection that finished its range and can take more, if any.
    ///   - newConnection: the identity a new connection gets, if one is started.
    func decide(
        map: SegmentMap, rates: [ConnectionID: Throughput], fresh: Double? = nil, target: Int, idle: ConnectionID?,
        newConnection: ConnectionID
    ) -> SegmentAction {
        let working = map.connections
        let speed = Speeds(rates, fresh: fresh)
        if working.count > max(target, 1) {
            // The slowest first; among equals the newest, whose range is the least advanced.
            let slowest = working.min { (speed[$0], -$0.rawValue) < (speed[$1], -$1.rawValue) }
            return slowest.map(SegmentAction.stop) ?? .none
        }
        if let idle {
            guard working.count < max(target, 1) else { return .stop(idle) }
            if let range = largestIdleRange(map) { return .start(idle, range: range) }
            if let steal = steal(map, speed, to: idle) { return steal }
            if let duplicate = endGame(map, speed, by: idle) { return duplicate }
            return .stop(idle)
        }
        guard working.count < target else { return .none }
        if let range = largestIdleRange(map) { return .start(newConnection, range: range) }
        if let range = midpointTail(map) { return .start(newConnection, range: range) }
        if let duplicate = endGame(map, speed, by: newConnection) { return duplicate }
        return .none
    }

    /// The largest untouched rest of a range no connection works on.
    private func largestIdleRange(_ map: SegmentMap) -> Range<Int64>? {
        map.segments.filter { $0.owner == nil && $0.remaining > 0 }
            .max { ($0.remaining, -$0.start) < ($1.remaining, -$1.start) }
            .map { $0.next..<$0.end }
    }

    /// The largest working range's untouched tail from its midpoint, when both halves are at
    /// least the minimum split.
    private func midpointTail(_ map: SegmentMap) -> Range<Int64>? {
        guard
            let segment = map.segments.filter({ $0.owner != nil && $0.duplicate == nil })
                .max(by: { ($0.remaining, -$0.start) < ($1.remaining, -$1.start) }),
            segment.remaining >= 2 * configuration.minimumSplit
        else { return nil }
        let offset = aligned(segment.next + segment.remaining / 2, within: segment)
        return offset..<segment.end
    }

    /// The tail of the range with the most time left, split so its owner and `thief` finish
    /// together at their observed speeds, when the stolen part is at least the minimum split, or
    /// takes the thief at least ``Configuration/stealSeconds`` (never under
    /// ``Configuration/minimumSteal``).
    private func steal(_ map: SegmentMap, _ speed: Speeds, to thief: ConnectionID) -> SegmentAction? {
        guard let (segment, owner) = slowestTail(map, speed) else { return nil }
        let ownerSpeed = speed[owner]
        let thiefSpeed = speed[thief]
        // Keep `kept` bytes for the owner: kept / ownerSpeed == (remaining - kept) / thiefSpeed.
        let kept = Int64((Double(segment.remaining) * ownerSpeed / (ownerSpeed + thiefSpeed)).rounded(.down))
        let offset = aligned(segment.next + max(kept, 1), within: segment)
        // A thief slower than the owner takes only a large part: a small one would end the
        // download on the slower connection.
        let floor =
            thiefSpeed < ownerSpeed
            ? configuration.minimumSplit
            : min(configuration.minimumSplit, max(configuration.minimumSteal, Int64(thiefSpeed * configuration.stealSeconds)))
        guard segment.end - offset >= floor else { return nil }
        return .steal(from: owner, at: offset, to: thief)
    }

    /// The end game: `connection` duplicates the tail with the most time left, whatever its
    /// size, when it would finish it ``Configuration/endGameSpeedup`` times sooner than its owner
    /// (a tail too small to split stays with a stalled owner otherwise, and the whole download
    /// waits for it).
    private func endGame(_ map: SegmentMap, _ speed: Speeds, by connection: ConnectionID) -> SegmentAction? {
        guard let (_, owner) = slowestTail(map, speed), owner != connection,
            speed[connection] >= configuration.endGameSpeedup * speed[owner]
        else { return nil }
        return .duplicate(connection, racing: owner)
    }

    /// The working range (without a duplicate) whose owner needs the most time to finish it.
    private func slowestTail(_ map: SegmentMap, _ speed: Speeds) -> (SegmentMap.Segment, ConnectionID)? {
        let candidates = map.segments.compactMap { segment -> (SegmentMap.Segment, ConnectionID, Double)? in
            guard let owner = segment.owner, segment.duplicate == nil, segment.remaining > 0 else { return nil }
            return (segment, owner, Double(segment.remaining) / speed[owner])
        }
        guard let slowest = candidates.max(by: { ($0.2, -$0.0.start) < ($1.2, -$1.0.start) }) else { return nil }
        return (slowest.0, slowest.1)
    }

    /// `offset` rounded down to the alignment, unless that leaves the segment's untouched tail.
    private func aligned(_ offset: Int64, within segment: SegmentMap.Segment) -> Int64 {
        let alignment = max(configuration.alignment, 1)
        let rounded = offset - offset % alignment
        return rounded > segment.next && rounded < segment.end ? rounded : offset
    }

    /// Observed speeds. A connection not yet measured counts at `fresh`, else at the mean of
    /// those measured (1 byte/s when none is); one measured at nothing counts as stalled (a tiny
    /// positive speed, so a ratio is always defined and its tail has the most time left).
    private struct Speeds {
        static let stalled = 1e-3
        let known: [ConnectionID: Double]
        let fallback: Double

        init(_ rates: [ConnectionID: Throughput], fresh: Double?) {
            known = rates.compactMapValues { $0.bytesPerSecond.map { max($0, Self.stalled) } }
            let moving = known.values.filter { $0 > Self.stalled }
            fallback = fresh.flatMap { $0 > 0 ? $0 : nil } ?? (moving.isEmpty ? 1 : moving.reduce(0, +) / Double(moving.count))
        }

        subscript(_ connection: ConnectionID) -> Double { known[connection] ?? fallback }
    }
}
