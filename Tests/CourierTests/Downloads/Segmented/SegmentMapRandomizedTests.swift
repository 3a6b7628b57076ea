import CourierTestSupport
import XCTest

@testable import Courier

/// Seeded random sequences of scheduling, progress, steals, end-game races, stops and record
/// round trips over a small file, checked against a byte-level model after every step: the map
/// never overlaps or leaves a gap, never claims a byte no connection wrote, and never counts a
/// byte twice. A failing seed replays exactly.
final class SegmentMapRandomizedTests: XCTestCase {
    private let url = URL(string: "http://127.0.0.1:8/f")!

    /// The file as the connections wrote it: how many times each byte was written by an owner
    /// (counted writes) and whether anyone wrote it (a duplicate's bytes are written, not counted).
    private struct Model {
        var counted: [UInt8]
        var written: [Bool]

        init(length: Int) {
            counted = Array(repeating: 0, count: length)
            written = Array(repeating: false, count: length)
        }
    }

    /// What the sequences went through, so the test proves it exercised each operation.
    private var seen: Set<String> = []

    func testRandomSequencesKeepEveryInvariant() throws {
        for seed in UInt64(1)...300 {
            try run(seed: seed)
        }
        XCTAssertEqual(seen, ["start", "steal", "duplicate", "stop", "race won by a duplicate", "race won by an owner", "crash"])
    }

    private func run(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let length = Int64(1 + random.next() % 20_000)
        var scheduler = SegmentScheduler()
        // Small thresholds so a small file is split, stolen and raced often.
        scheduler.configuration = .init(
            minimumSplit: Int64(1 + random.next() % 4096), endGameSpeedup: 1.5,
            alignment: [1, 512, 4096][Int(random.next() % 3)])
        var map = SegmentMap(url: url, validator: "\"v\"", length: length)
        var model = Model(length: Int(length))
        var rates: [ConnectionID: Throughput] = [:]
        var idle: [ConnectionID] = []
        var nextID = 1
        var steps = 0

        func check(_ what: String) {
            XCTAssertNil(map.violation(), "seed \(seed) step \(steps) after \(what): \(map.violation().map { "\($0)" } ?? "")")
            XCTAssertEqual(map.segments.reduce(0) { $0 + $1.written }, map.writtenBytes)
            // The byte-level comparison every few steps: it is the slow part in a debug build.
            guard steps % 8 == 0 || map.isComplete else { return }
            for segment in map.segments where segment.written > 0 {
                if let offset = model.written[Int(segment.start)..<Int(segment.next)].firstIndex(of: false) {
                    return XCTFail("seed \(seed) step \(steps) after \(what): byte \(offset) claimed but never written")
                }
            }
        }

        while !map.isComplete {
            steps += 1
            guard steps < 20_000 else { return XCTFail("seed \(seed): no completion after \(steps) steps") }
            switch random.next() % 10 {
            case 0...3:
                // A connection writes some bytes at its position.
                let connections = map.connections
                guard !connections.isEmpty else { fallthrough }
                let connection = connections[Int(random.next() % UInt64(connections.count))]
                guard let position = map.position(of: connection) else { return XCTFail("no position for \(connection)") }
                let isOwner = map.segments.contains { $0.owner == connection }
                let count = Int64(random.next() % 3000)
                let advance = try map.advance(connection, by: count)
                XCTAssertLessThanOrEqual(advance.accepted, min(count, Int64(position.count)))
                for offset in position.lowerBound..<(position.lowerBound + advance.accepted) {
                    model.written[Int(offset)] = true
                    if isOwner {
                        model.counted[Int(offset)] += 1
                        XCTAssertEqual(model.counted[Int(offset)], 1, "seed \(seed): byte \(offset) written twice by owners")
                    }
                }
                rates[connection] = Throughput(bytes: Int64(random.next() % 100_000), seconds: 1)
                if advance.completedRange { idle.append(connection) }
                if let loser = advance.cancel {
                    idle.append(loser)
                    seen.insert(isOwner ? "race won by an owner" : "race won by a duplicate")
                }
                check("advance \(connection) by \(count)")
            case 4:
                // A connection stops (failure, reset) without finishing.
                let connections = map.connections
                guard !connections.isEmpty else { fallthrough }
                let connection = connections[Int(random.next() % UInt64(connections.count))]
                map.release(connection)
                check("release \(connection)")
            case 5:
                // A crash: the record is written, read back, and a new run continues it.
                let record = ResumeData(segmentMap: map, partialFile: URL(fileURLWithPath: "/tmp/.f.courier-partial"))
                let read = try ResumeData(data: record.encoded())
                XCTAssertEqual(read.bytesOnDisk, map.contiguousPrefix)
                guard let restored = read.segmentMap else { return XCTFail("seed \(seed): the record lost its map") }
                XCTAssertEqual(restored, map.withoutConnections)
                map = restored
                seen.insert("crash")
                // A rerun's connections write every claimed byte again only if they are not claimed.
                idle = []
                rates = [:]
                check("crash and rerun")
            default:
                // The scheduler serves an idle connection or the wanted count.
                let target = Int(1 + random.next() % 8)
                let free = idle.first
                let action = scheduler.decide(map: map, rates: rates, target: target, idle: free, newConnection: ConnectionID(nextID))
                switch action {
                case .none: break
                case .start(let id, _) where id != free, .stop(let id) where id != free,
                    .duplicate(let id, _) where id != free:
                    if id.rawValue == nextID { nextID += 1 }
                default: idle.removeFirst()
                }
                try map.apply(action)
                switch action {
                case .start: seen.insert("start")
                case .steal: seen.insert("steal")
                case .duplicate: seen.insert("duplicate")
                case .stop: seen.insert("stop")
                case .none: break
                }
                check("\(action)")
            }
        }
        XCTAssertEqual(map.writtenBytes, length, "seed \(seed)")
        XCTAssertTrue(model.written.allSatisfy { $0 }, "seed \(seed): complete with a byte never written")
        XCTAssertEqual(map.segments.count, 1, "seed \(seed): a complete map merges into one segment")
    }
}
