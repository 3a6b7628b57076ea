import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

@testable import Courier

/// A request handle for the crew's tests: only its identity matters to the machine.
final class CrewRequest {}

/// Plays the driver of a ``SplitCrew`` without sockets, disk or clock: it makes a request for
/// every launch at once, answers and feeds the connections the tests choose with the file's real
/// bytes, moves time by hand, and keeps every action the crew decided.
struct CrewHarness {
    typealias Crew = SplitCrew<CrewRequest>

    static let url = URL(string: "http://files.test/big.bin")!
    static let etag = "\"v1\""
    static let mib: Int64 = 1 << 20

    /// The file: byte `i` is `i % 251`, so a byte written at the wrong offset shows.
    static let file: Data = {
        let block = Data((0..<251).map { UInt8($0) })
        var data = Data(capacity: 33 << 20)
        while data.count < 33 << 20 { data.append(block) }
        return data
    }()

    var crew: Crew
    let start: ContinuousClock.Instant
    var now: ContinuousClock.Instant
    let length: Int64
    let primary = CrewRequest()

    /// Each connection's current request, the range it asked for, its next byte, and its lane.
    var requests: [Int: CrewRequest] = [:]
    var asked: [Int: Range<Int64>] = [:]
    var cursor: [Int: Int64] = [:]
    var lanes: [Int: Int] = [:]

    /// Every action, and the last event's.
    var actions: [Crew.Action] = []
    var last: [Crew.Action] = []
    var launches: [(id: Int, lane: Int, request: URLRequest)] = []
    var cancelled: [CrewRequest] = []
    var writes: [(offset: Int64, data: Data)] = []
    var records: [SegmentMap] = []
    var retries: [Crew.RangeRetry] = []
    var reports: [TaskConnectionsEvent] = []
    var progress: [Int64] = []
    var diskWaits: [Int64] = []
    var endings: [(ending: Crew.Ending, handover: Crew.Handover)] = []

    /// A crew over a file of `length` bytes of which `held` are written, its first connection
    /// asking for the rest and already answered.
    init(
        length: Int64 = 8 * mib, held: Int64 = 0, fixed: Int? = 4, cap: Int = 8, bufferLimit: Int64 = 64 * mib,
        recordInterval: Duration = .seconds(1), reports: Bool = true
    ) {
        self.length = length
        var map = try! SegmentMap(
            url: Self.url, validator: Self.etag, length: length,
            segments: [SegmentMap.Segment(start: 0, end: length, written: held)])
        try! map.assign(ConnectionID(1), range: held..<length)
        start = ContinuousClock.now
        now = start
        let setup = Crew.Setup(
            map: map, primary: primary, primaryID: ConnectionID(1), request: URLRequest(url: Self.url), fixed: fixed,
            cap: cap, recordInterval: recordInterval, bufferLimit: bufferLimit, reports: reports)
        crew = Crew(setup, now: now)
        requests[1] = primary
        asked[1] = held..<length
        cursor[1] = held
        lanes[1] = 0
    }

    // MARK: - Events

    /// Installs the crew (its first decisions).
    mutating func begin() { take(crew.start(now: now)) }

    /// Moves the clock on.
    mutating func wait(_ milliseconds: Int) { now += .milliseconds(milliseconds) }

    /// A tick now, with the writer's backlog.
    mutating func tick(backlog: Int64 = 0) { take(crew.tick(now: now, backlog: backlog)) }

    /// Ticks every 10 ms for `milliseconds`.
    mutating func run(_ milliseconds: Int, backlog: Int64 = 0) {
        for _ in 0..<(milliseconds / 10) {
            wait(10)
            tick(backlog: backlog)
        }
    }

    /// Connection `id`'s current request is answered: by default a 206 for exactly what it asked.
    mutating func answer(_ id: Int, status: Int = 206, etag: String? = etag, headers: [String: String] = [:]) {
        take(crew.answered(ConnectionID(id), requests[id]!, response(for: id, status: status, etag: etag, headers: headers), now: now))
    }

    /// The response a server would give connection `id`'s request.
    func response(for id: Int, status: Int = 206, etag: String? = etag, headers: [String: String] = [:]) -> HTTPURLResponse {
        var fields = headers
        if let etag { fields["ETag"] = etag }
        if status == 206, let range = asked[id] {
            fields["Content-Range"] = fields["Content-Range"] ?? "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(length)"
            fields["Content-Length"] = fields["Content-Length"] ?? String(range.count)
        }
        return HTTPURLResponse(url: Self.url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: fields)!
    }

    /// Connection `id` receives its next `count` bytes.
    mutating func send(_ id: Int, _ count: Int64) {
        let from = cursor[id]!
        let chunk = Data(Self.file[Int(from)..<Int(from + count)])
        cursor[id] = from + count
        take(crew.received(ConnectionID(id), requests[id]!, chunk, now: now))
    }

    /// Connection `id` receives the rest of its range in chunks of `chunk` bytes, until the crew
    /// counts the range complete (its request may go on: the crew then cancels it).
    mutating func sendRange(_ id: Int, chunk: Int64 = 64 << 10) {
        while let position = crew.map.position(of: ConnectionID(id)), let next = cursor[id], next < position.upperBound {
            send(id, min(chunk, asked[id]!.upperBound - next))
        }
    }

    /// Connection `id`'s request ends: cleanly, or with a transport error of `code`.
    @discardableResult
    mutating func end(_ id: Int, _ code: CourierError.Code? = nil) -> Bool {
        let error = code.map { CourierError(code: $0, message: "\($0)", url: Self.url) }
        let (mine, actions) = crew.ended(ConnectionID(id), requests[id]!, error: error, now: now)
        take(actions)
        return mine
    }

    /// Stops the crew for the transfer.
    mutating func stop() -> Crew.Handover {
        let (actions, handover) = crew.stop(now: now)
        take(actions)
        return handover
    }

    /// Plays the driver: a launch makes a request at once.
    mutating func take(_ decided: [Crew.Action]) {
        last = decided
        actions += decided
        for action in decided {
            switch action {
            case .launch(let id, let lane, let request):
                let made = CrewRequest()
                XCTAssertTrue(crew.launched(id, made))
                requests[id.rawValue] = made
                lanes[id.rawValue] = lane
                launches.append((id.rawValue, lane, request))
                let range = Self.range(of: request)!
                asked[id.rawValue] = range
                cursor[id.rawValue] = range.lowerBound
            case .cancel(_, let request): cancelled.append(request)
            case .write(let data, let offset): writes.append((offset, data))
            case .record(let map): records.append(map)
            case .progress(let written): progress.append(written)
            case .report(let event): reports.append(event)
            case .retry(let retry): retries.append(retry)
            case .waitForDisk(let threshold): diskWaits.append(threshold)
            case .end(let ending, let handover): endings.append((ending, handover))
            }
        }
    }

    // MARK: - Reading what happened

    /// The range a request's `Range: bytes=a-b` asks for.
    static func range(of request: URLRequest) -> Range<Int64>? {
        guard let value = request.value(forHTTPHeaderField: "Range"), value.hasPrefix("bytes=") else { return nil }
        let bounds = value.dropFirst(6).split(separator: "-").compactMap { Int64($0) }
        guard bounds.count == 2 else { return nil }
        return bounds[0]..<(bounds[1] + 1)
    }

    /// Whether connection `id`'s current request was cancelled by the crew.
    func wasCancelled(_ id: Int) -> Bool { cancelled.contains { $0 === requests[id] } }

    /// Bytes written, and whether every write holds the file's bytes at its offset and no two overlap.
    var writtenBytes: Int64 { writes.reduce(0) { $0 + Int64($1.data.count) } }

    func assertWritesAreTheFile(file: StaticString = #filePath, line: UInt = #line) {
        var covered: [Range<Int64>] = []
        for write in writes {
            let range = write.offset..<(write.offset + Int64(write.data.count))
            XCTAssertEqual(
                write.data, Data(Self.file[Int(range.lowerBound)..<Int(range.upperBound)]), "bytes at \(range)", file: file, line: line)
            XCTAssertFalse(covered.contains { $0.overlaps(range) }, "\(range) written twice", file: file, line: line)
            covered.append(range)
        }
    }

    /// The crew's ending, when it ended once.
    var ending: Crew.Ending? { endings.count == 1 ? endings[0].ending : nil }
}
