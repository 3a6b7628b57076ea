import XCTest

@testable import Courier

/// The allocation rules (SegmentScheduler.swift), row by row, without sockets or clocks.
final class SegmentSchedulerTests: XCTestCase {
    private let url = URL(string: "http://127.0.0.1:8/big.bin")!
    private let mib: Int64 = 1 << 20
    private let scheduler = SegmentScheduler()
    private let a = ConnectionID(1)
    private let b = ConnectionID(2)
    private let fresh = ConnectionID(9)

    /// A map of `length` with `a` on the whole file after writing `written` bytes.
    private func working(length: Int64, written: Int64) throws -> SegmentMap {
        var map = SegmentMap(url: url, validator: "\"v1\"", length: length)
        try map.assign(a, range: 0..<length)
        _ = try map.advance(a, by: written)
        return map
    }

    private func rate(_ bytesPerSecond: Int64) -> Throughput { Throughput(bytes: bytesPerSecond, seconds: 1) }

    func testTheFirstConnectionTakesTheWholeFile() {
        // Given
        let map = SegmentMap(url: url, validator: "\"v1\"", length: 64 * mib)
        // When
        let action = scheduler.decide(map: map, rates: [:], target: 1, idle: nil, newConnection: fresh)
        // Then
        XCTAssertEqual(action, .start(fresh, range: 0..<64 * mib))
    }

    func testANewConnectionStartsAtTheMidpointOfTheTailAnotherConnectionWorksBefore() throws {
        // Given one connection 1 MiB into 64 MiB
        let map = try working(length: 64 * mib, written: mib)
        // When a second is wanted
        let action = scheduler.decide(map: map, rates: [a: rate(mib)], target: 2, idle: nil, newConnection: fresh)
        // Then it takes the untouched tail from its midpoint (page-aligned)
        let midpoint = mib + (63 * mib) / 2
        XCTAssertEqual(action, .start(fresh, range: (midpoint - midpoint % 4096)..<64 * mib))
    }

    func testANewConnectionTakesTheLargestIdleRangeFromItsNextByte() throws {
        // Given a record's map: two idle ranges, the second larger
        let map = try SegmentMap(
            url: url, validator: "\"v1\"", length: 100 * mib,
            segments: [.init(start: 0, end: 40 * mib, written: 10 * mib), .init(start: 40 * mib, end: 100 * mib, written: 5 * mib)])
        // When / Then
        XCTAssertEqual(
            scheduler.decide(map: map, rates: [:], target: 4, idle: nil, newConnection: fresh), .start(fresh, range: 45 * mib..<100 * mib))
    }

    func testNothingStartsWhenTheTailIsTooSmallToSplitOrTheCountIsReached() throws {
        let small = try working(length: 64 * mib, written: 63 * mib)
        XCTAssertEqual(scheduler.decide(map: small, rates: [:], target: 2, idle: nil, newConnection: fresh), .none)
        let big = try working(length: 64 * mib, written: 0)
        XCTAssertEqual(scheduler.decide(map: big, rates: [:], target: 1, idle: nil, newConnection: fresh), .none)
        var done = SegmentMap(url: url, validator: "\"v1\"", length: 10)
        try done.assign(a, range: 0..<10)
        _ = try done.advance(a, by: 10)
        XCTAssertEqual(scheduler.decide(map: done, rates: [:], target: 4, idle: nil, newConnection: fresh), .none)
        XCTAssertEqual(scheduler.decide(map: done, rates: [:], target: 4, idle: b, newConnection: fresh), .stop(b))
    }

    func testASlowConnectionsUntouchedTailGoesToAFasterOneSoBothFinishTogether() throws {
        // Given `a` at 1 MiB/s with 40 MiB left, and `b` idle at 19 MiB/s
        let map = try working(length: 64 * mib, written: 24 * mib)
        // When
        let action = scheduler.decide(map: map, rates: [a: rate(mib), b: rate(19 * mib)], target: 2, idle: b, newConnection: fresh)
        // Then `a` keeps 1/20 of its tail (2 MiB) and `b` takes the rest
        XCTAssertEqual(action, .steal(from: a, at: 26 * mib, to: b))
    }

    func testAConnectionAtLeastAsFastTakesOverATailUnderAMegabyteThatTakesItAQuarterSecond() throws {
        // Given `a` with 512 KiB left, and an idle `b` at 1 MiB/s (it moves 256 KiB in 0.25 s)
        let map = try working(length: 64 * mib, written: 64 * mib - 512 * 1024)
        // When / Then: as fast as `a`, `b` takes half; faster, it takes more
        XCTAssertEqual(
            scheduler.decide(map: map, rates: [a: rate(mib), b: rate(mib)], target: 2, idle: b, newConnection: fresh),
            .steal(from: a, at: 64 * mib - 256 * 1024, to: b))
        // At 16 MiB/s the floor is the megabyte again: a request would save too little
        XCTAssertEqual(
            scheduler.decide(map: map, rates: [a: rate(16 * mib), b: rate(16 * mib)], target: 2, idle: b, newConnection: fresh),
            .stop(b))
        // A slower thief never takes a small part (the download would end on it)
        XCTAssertEqual(
            scheduler.decide(map: map, rates: [a: rate(2 * mib), b: rate(mib)], target: 2, idle: b, newConnection: fresh),
            .stop(b))
    }

    func testTheEndGameDuplicatesASlowTailTooSmallToTakeOver() throws {
        // Given `a`, slow, with 200 KiB left (too little to split), and a fast idle `b`
        let map = try working(length: 64 * mib, written: 64 * mib - 200 * 1024)
        // When / Then
        XCTAssertEqual(
            scheduler.decide(map: map, rates: [a: rate(mib / 20), b: rate(mib)], target: 2, idle: b, newConnection: fresh),
            .duplicate(b, racing: a))
        // A connection not faster than the owner stops instead
        XCTAssertEqual(
            scheduler.decide(map: map, rates: [a: rate(mib), b: rate(mib)], target: 2, idle: b, newConnection: fresh), .stop(b))
    }

    func testMoreConnectionsThanWantedStopTheSlowest() throws {
        // Given two working connections after a halving to one
        var map = try working(length: 64 * mib, written: 0)
        try map.assign(b, range: 32 * mib..<64 * mib)
        // When / Then
        XCTAssertEqual(
            scheduler.decide(map: map, rates: [a: rate(5 * mib), b: rate(mib)], target: 1, idle: nil, newConnection: fresh), .stop(b))
        // An idle connection beyond the count stops too
        XCTAssertEqual(
            scheduler.decide(map: map, rates: [:], target: 2, idle: fresh, newConnection: ConnectionID(10)), .stop(fresh))
    }

    func testAHalvingStopsEveryExtraConnectionInOneRoundOfDecisions() throws {
        // Given eight connections on eight ranges
        var map = SegmentMap(url: url, validator: "\"v1\"", length: 64 * mib)
        for index in 0..<8 {
            try map.assign(ConnectionID(index + 1), range: Int64(index) * 8 * mib..<64 * mib)
        }
        XCTAssertEqual(map.connections.count, 8)
        let rates = Dictionary(uniqueKeysWithValues: (1...8).map { (ConnectionID($0), rate(Int64($0) * mib)) })
        // When a 429 halves the count to four and the download asks until nothing is left to do
        var stopped: [ConnectionID] = []
        while case .stop(let connection) = scheduler.decide(map: map, rates: rates, target: 4, idle: nil, newConnection: fresh) {
            stopped.append(connection)
            try map.apply(.stop(connection))
        }
        // Then the four slowest stop at once, and their ranges wait, idle, with their bytes
        XCTAssertEqual(stopped, [ConnectionID(1), ConnectionID(2), ConnectionID(3), ConnectionID(4)])
        XCTAssertEqual(map.connections, [ConnectionID(5), ConnectionID(6), ConnectionID(7), ConnectionID(8)])
        XCTAssertNil(map.violation())
    }

    /// The figure in pure form: four connections at R, one slowing to R/20 halfway;
    /// completion within 1.15 x the time four connections at R would take, where a downloader
    /// that never takes a range back waits for the slow one (about 10.5 x).
    func testOneConnectionSlowingToAOneTwentiethHalfwayCostsAtMostFifteenPercent() throws {
        // Given
        let length: Int64 = 256 * mib
        let speed: Int64 = 4 * mib  // bytes per second per connection
        var simulation = Simulation(length: length, speed: speed, connections: 4)
        // When connection 1 slows to R/20 once half the file is written
        let seconds = try simulation.run { map, connection in
            connection == ConnectionID(1) && map.writtenBytes >= length / 2 ? speed / 20 : speed
        }
        // Then
        let ideal = Double(length) / Double(4 * speed)
        XCTAssertLessThanOrEqual(seconds, 1.15 * ideal, "took \(seconds) s, ideal \(ideal) s")
    }
}

/// A discrete-time run of the scheduler over the map: each tick every connection writes its
/// speed's bytes, then idle connections and the wanted count are served.
private struct Simulation {
    var map: SegmentMap
    let speed: Int64
    let connections: Int
    let tick = 0.05
    let scheduler = SegmentScheduler()

    init(length: Int64, speed: Int64, connections: Int) {
        map = SegmentMap(url: URL(string: "http://127.0.0.1:8/f")!, validator: "\"v\"", length: length)
        self.speed = speed
        self.connections = connections
    }

    /// Runs to completion; returns the seconds taken.
    mutating func run(speedOf: (SegmentMap, ConnectionID) -> Int64) throws -> Double {
        var nextID = 1
        var now = 0.0
        var rates: [ConnectionID: Throughput] = [:]
        var idle: [ConnectionID] = []
        while !map.isComplete {
            for _ in 0..<100 {
                let free = idle.first
                let action = scheduler.decide(
                    map: map, rates: rates, target: connections, idle: free, newConnection: ConnectionID(nextID))
                switch action {
                case .none: break
                case .start(let id, _) where id != free, .stop(let id) where id != free, .duplicate(let id, _) where id != free:
                    if id.rawValue == nextID { nextID += 1 }
                default: idle.removeFirst()
                }
                if action == .none { break }
                try map.apply(action)
                XCTAssertNil(map.violation())
            }
            now += tick
            for connection in map.connections where map.position(of: connection) != nil {
                let bytes = Int64(Double(speedOf(map, connection)) * tick)
                rates[connection] = Throughput(bytes: bytes, seconds: tick)
                let advance = try map.advance(connection, by: bytes)
                if advance.completedRange { idle.append(connection) }
                if let loser = advance.cancel { idle.append(loser) }
            }
            if now > 10_000 { throw XCTSkip("no progress") }
        }
        return now
    }
}
