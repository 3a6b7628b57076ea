import CourierTestSupport
import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CourierSupport

/// Split downloads over real sockets: one file over several `Range` connections, exact or a typed error.
final class SegmentedDownloadTests: CourierTestCase {
    private let size = 8 << 20
    private let seen = Locked<[TaskConnectionsEvent]>([])

    override func makeConfiguration() -> SessionManager.Configuration {
        var configuration = super.makeConfiguration()
        let seen = seen
        configuration.eventMonitors = [
            ClosureEventMonitor(onEvent: { _, event in
                if case .connections(let crew) = event { seen.withLock { $0.append(crew) } }
            })
        ]
        return configuration
    }
    private var content: Data { TestServer.deterministicBytes(count: size, seed: 24) }

    private func policy(_ split: DownloadSplit, retries: Int = 3) -> DownloadPolicy {
        var policy = DownloadPolicy()
        policy.split = split
        policy.retry.retryLimit = retries
        return policy
    }

    private func download(_ path: String, to destination: URL, policy: DownloadPolicy) -> DownloadResponse? {
        wait(timeout: 60) { finish in
            manager.downloadTask(with: request(path), to: .file(destination), policy: policy, completion: finish).resume()
        }
    }

    func testAFileSplitOverFourConnectionsArrivesExact() throws {
        // Given a file served in paced writes (so that connections overlap)
        server.addFile("four.bin", data: content, etag: "\"v1\"")
        let destination = directory.appendingPathComponent("four.bin")
        // When it is downloaded over four connections
        let response = download("/files/four.bin?chunk=65536&chunk_delay_ms=5", to: destination, policy: policy(.connections(4)))
        // Then the file is exact, and it came over several ranged requests bound to one version
        XCTAssertNil(response?.error)
        XCTAssertEqual(try Data(contentsOf: destination), content)
        XCTAssertGreaterThan(response?.report.connections ?? 0, 1)
        let ranged = server.requests.filter { $0.header("Range") != nil }
        XCTAssertGreaterThan(ranged.count, 1)
        XCTAssertEqual(server.requests.first?.header("Range"), "bytes=0-")
        for request in ranged.dropFirst() {
            XCTAssertEqual(request.header("If-Range"), "\"v1\"")
            XCTAssertEqual(request.header("Accept-Encoding"), "identity")
        }
        XCTAssertEqual(stagingFiles(in: directory), [], "no side files once published")
        // And the timeline shows each connection's requests: every byte written, each request ended
        let requests = try XCTUnwrap(response?.metrics?.segmentRequests)
        XCTAssertGreaterThanOrEqual(requests.count, 4)
        XCTAssertEqual(Set(requests.map(\.connection)).count, 4)
        XCTAssertTrue(requests.allSatisfy { $0.ending != nil && $0.range.lowerBound >= 0 && $0.range.upperBound <= Int64(size) })
        let written = requests.reduce(Int64(0)) { $0 + $1.bytesWritten }
        XCTAssertGreaterThanOrEqual(written, Int64(size))
        XCTAssertLessThanOrEqual(written, Int64(size) + (4 << 20), "only an end game's race writes a byte twice")
        let timeline = try XCTUnwrap(response?.metrics?.timeline())
        XCTAssertTrue(timeline.contains("connection 1: bytes 0-"), timeline)
        // And the monitors saw each connection's range: never overlapping, always inside the file
        let events = seen.withLock { $0 }
        XCTAssertTrue(events.contains { $0.connections.count == 4 }, "\(events.map(\.connections.count))")
        for event in events {
            let ranges = event.connections.filter { $0.racing == nil }.map(\.range).sorted { $0.lowerBound < $1.lowerBound }
            for (left, right) in zip(ranges, ranges.dropFirst()) { XCTAssertLessThanOrEqual(left.upperBound, right.lowerBound) }
            XCTAssertTrue(ranges.allSatisfy { $0.lowerBound >= 0 && $0.upperBound <= Int64(size) })
            XCTAssertEqual(event.length, Int64(size))
        }
    }

    func testSuspendStopsEveryConnectionAndResumeContinuesEachSegment() throws {
        // Given a split download running over four connections
        server.addFile("paused.bin", data: content, etag: "\"v1\"")
        let destination = directory.appendingPathComponent("paused.bin")
        let suspended = expectation(description: "suspended")
        let once = Locked(false)
        let finished = expectation(description: "finished")
        let result = Locked<DownloadResponse?>(nil)
        let task = manager.downloadTask(
            with: request("/files/paused.bin?chunk=65536&chunk_delay_ms=20"), to: .file(destination),
            policy: policy(.connections(4))
        ) { response in
            result.withLock { $0 = response }
            finished.fulfill()
        }
        task.addProgressHandler(.download) { [weak task] progress in
            guard progress.fractionCompleted >= 0.3,
                !once.withLock({
                    let was = $0; $0 = true; return was
                })
            else { return }
            task?.suspend()
            suspended.fulfill()
        }
        task.resume()
        wait(for: [suspended], timeout: 30)
        // When it is suspended, then resumed
        XCTAssertEqual(task.connectionCount, 0, "no connection works while suspended")
        Thread.sleep(forTimeInterval: 0.3)
        task.resume()
        wait(for: [finished], timeout: 60)
        // Then the file is exact, and little more than the file came over the network
        let response = try XCTUnwrap(result.withLock { $0 })
        XCTAssertNil(response.error)
        XCTAssertEqual(try Data(contentsOf: destination), content)
        XCTAssertLessThanOrEqual(response.report.bytesReceived, Int64(size) + (2 << 20))
        XCTAssertGreaterThan(response.report.connections, 1)
    }

    func testAnAutomaticSplitAddsConnectionsButNeverPassesThePerHostCap() throws {
        // Given a server that paces each connection, and a manager allowing 4 per host (the default)
        let big = TestServer.deterministicBytes(count: 16 << 20, seed: 27)
        server.addFile("auto.bin", data: big, etag: "\"v1\"")
        let destination = directory.appendingPathComponent("auto.bin")
        // When the split is automatic
        let response = download("/files/auto.bin?chunk=65536&chunk_delay_ms=20", to: destination, policy: policy(.automatic))
        // Then it used more than one connection, never more than the cap, and the file is exact
        XCTAssertNil(response?.error)
        XCTAssertEqual(try Data(contentsOf: destination), big)
        XCTAssertGreaterThan(response?.report.connections ?? 0, 1)
        XCTAssertLessThanOrEqual(response?.report.connections ?? .max, 4)
    }

    func testConnectionsThatResetAreContinuedAndTheFileIsExact() throws {
        // Given a server that resets every connection after 1 MiB of its answer
        server.addFile("resets.bin", data: content, etag: "\"v1\"")
        let destination = directory.appendingPathComponent("resets.bin")
        // When the file is split over four connections
        let response = download(
            "/files/resets.bin?reset_after=1048576&chunk=65536&chunk_delay_ms=2", to: destination,
            policy: policy(.connections(4)))
        // Then each range is continued where its connection stopped, and the file is exact
        XCTAssertNil(response?.error)
        XCTAssertEqual(try Data(contentsOf: destination), content)
        XCTAssertLessThanOrEqual(response?.report.bytesReceived ?? .max, Int64(size) + (1 << 20), "nothing fetched twice but clipped tails")
        XCTAssertGreaterThan(server.requests.count, 8, "every connection was reset at least once")
    }

    /// Starts a split download of `path` and cancels it, keeping its bytes, once `fraction` of it arrived.
    private func interruptedDownload(_ path: String, to destination: URL, at fraction: Double) throws -> ResumeData {
        let policy = policy(.connections(4))
        let cancelled = Locked(false)
        let response: DownloadResponse? = wait(timeout: 60) { finish in
            let task = manager.downloadTask(with: request(path), to: .file(destination), policy: policy, completion: finish)
            task.addProgressHandler(.download) { [weak task] progress in
                guard progress.fractionCompleted >= fraction,
                    !cancelled.withLock({
                        let was = $0; $0 = true; return was
                    })
                else { return }
                task?.cancel(producingResumeData: { _ in })
            }
            task.resume()
        }
        XCTAssertEqual(response?.error?.code, .cancelled)
        return try XCTUnwrap(response?.error?.resumeData)
    }

    func testACancelledSplitDownloadKeepsEverySegmentAndTheNextRunContinuesEachOne() throws {
        // Given a split download cancelled half way, with its resume record beside the partial file
        server.addFile("resumed.bin", data: content, etag: "\"v1\"")
        let path = "/files/resumed.bin?chunk=65536&chunk_delay_ms=20"
        let destination = directory.appendingPathComponent("resumed.bin")
        let resumeData = try interruptedDownload(path, to: destination, at: 0.4)
        let map = try XCTUnwrap(resumeData.segmentMap, "the resume data keeps the segment map")
        XCTAssertGreaterThan(map.segments.count, 1)
        XCTAssertGreaterThan(map.writtenBytes, map.contiguousPrefix, "bytes past the prefix are kept")
        let record = try XCTUnwrap(try ResumeData.record(beside: DownloadPolicy.defaultPartialFile(for: destination)))
        XCTAssertEqual(record.segmentMap?.segments.count, map.segments.count, "the record on disk has the map too")
        server.clearRequests()
        // When the same download runs again
        let response = download(path, to: destination, policy: policy(.connections(4)))
        // Then every segment continues from its own bytes, and the file is exact
        XCTAssertNil(response?.error)
        XCTAssertEqual(try Data(contentsOf: destination), content)
        XCTAssertEqual(response?.report.resumedBytes, map.writtenBytes)
        XCTAssertLessThanOrEqual(response?.report.bytesReceived ?? .max, Int64(size) - map.writtenBytes + (1 << 20))
        XCTAssertEqual(server.requests.first?.header("Range"), "bytes=\(map.contiguousPrefix)-")
        XCTAssertTrue(server.requests.allSatisfy { $0.header("If-Range") == "\"v1\"" })
    }

    func testASameSizeReplacementBetweenRunsStartsTheFileOver() throws {
        // Given a split download cancelled half way, and then the file replaced by another of the same size
        server.addFile("replaced.bin", data: content, etag: "\"v1\"")
        let path = "/files/replaced.bin?chunk=65536&chunk_delay_ms=20"
        let destination = directory.appendingPathComponent("replaced.bin")
        _ = try interruptedDownload(path, to: destination, at: 0.4)
        let replacement = TestServer.deterministicBytes(count: size, seed: 99)
        server.addFile("replaced.bin", data: replacement, etag: "\"v2\"")
        // When the download runs again
        let response = download(path, to: destination, policy: policy(.connections(4)))
        // Then the new version is published whole: none of the old segments' bytes is kept
        XCTAssertNil(response?.error)
        XCTAssertEqual(try Data(contentsOf: destination), replacement)
    }
}

/// Split downloads against scripted servers whose ranged answers break the rules: each ends exact
/// or with a typed error, and a mixed file is never published.
final class SegmentedDownloadFaultTests: CourierTestCase {
    private let size = 4 << 20
    private var content: Data { TestServer.deterministicBytes(count: size, seed: 25) }

    /// A correct 206 for `range` of `body`, sent in 64 KiB writes `pause` ms apart.
    private static func partial(
        _ body: Data, _ range: Range<Int>, etag: String, pause: Int = 0, extra: [(String, String)] = []
    )
        -> ScriptedServer.Reply
    {
        RangeReplies.answer(body, range, headers: [("ETag", etag)] + extra, pause: pause)
    }

    private func download(
        from server: ScriptedServer, to destination: URL, split: DownloadSplit = .connections(4)
    )
        -> DownloadResponse?
    {
        var policy = DownloadPolicy()
        policy.split = split
        policy.retry.retryLimit = 0
        return wait(timeout: 60) { finish in
            manager.downloadTask(with: URLRequest(url: server.url("/file")), to: .file(destination), policy: policy, completion: finish)
                .resume()
        }
    }

    func testASegmentAnsweredFromAnotherOffsetStartsTheFileOverAsOneStream() throws {
        // Given a server whose first answer is right and slow, and whose later ranged answers start 1,000 bytes early
        let body = content
        let total = size
        let server = try ScriptedServer { request, index in
            guard let range = RangeReplies.asked(request, total: total) else { return .response(status: 200, headers: [], body: body) }
            if index == 0 { return Self.partial(body, range, etag: "\"v1\"", pause: 10) }
            if range.lowerBound == 0 { return Self.partial(body, range, etag: "\"v1\"") }
            return Self.partial(body, (range.lowerBound - 1000)..<range.upperBound, etag: "\"v1\"")
        }
        defer { server.stop() }
        let destination = directory.appendingPathComponent("shifted.bin")
        // When the file is split over four connections
        let response = download(from: server, to: destination)
        // Then no misplaced byte is kept: the file started over as one stream and is exact
        XCTAssertNil(response?.error)
        XCTAssertEqual(try Data(contentsOf: destination), body)
        XCTAssertEqual(server.requests.filter { $0.header("Range") == "bytes=0-" }.count, 2, "started over once")
        XCTAssertGreaterThan(server.requests.count, 2, "the segments were asked for")
    }

    func testAGzipEncodedSegmentFailsWithATypedErrorAndPublishesNothing() throws {
        // Given a server that gzips its answers to segment requests
        let body = content
        let total = size
        let server = try ScriptedServer { request, index in
            guard let range = RangeReplies.asked(request, total: total) else { return .response(status: 200, headers: [], body: body) }
            if index == 0 { return Self.partial(body, range, etag: "\"v1\"", pause: 10) }
            return Self.partial(body, range, etag: "\"v1\"", extra: [("Content-Encoding", "gzip")])
        }
        defer { server.stop() }
        let destination = directory.appendingPathComponent("gzip.bin")
        // When the file is split
        let response = download(from: server, to: destination)
        // Then the download fails with a typed error, and nothing is published
        XCTAssertEqual(response?.error?.code, .invalidResponse)
        XCTAssertTrue(response?.error?.message.contains("Content-Encoding") ?? false, response?.error?.message ?? "")
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path))
    }

    func testAVersionChangeBetweenSegmentsStartsTheFileOverWithTheNewVersion() throws {
        // Given a server whose file is replaced by another of the same size once the first answer began:
        // later requests carrying the old validator in If-Range get the new version whole (200)
        let old = content
        let new = TestServer.deterministicBytes(count: size, seed: 26)
        let total = size
        let server = try ScriptedServer { request, index in
            let range = RangeReplies.asked(request, total: total)
            if index == 0, let range { return Self.partial(old, range, etag: "\"v1\"", pause: 10) }
            if let range, request.header("If-Range") == nil { return Self.partial(new, range, etag: "\"v2\"") }
            return .response(status: 200, headers: [("Content-Length", "\(total)"), ("ETag", "\"v2\"")], body: new)
        }
        defer { server.stop() }
        let destination = directory.appendingPathComponent("changed.bin")
        // When the file is split
        let response = download(from: server, to: destination)
        // Then the published file is the new version, whole: never a mix
        XCTAssertNil(response?.error)
        XCTAssertEqual(try Data(contentsOf: destination), new)
    }

    func testAServerThatIgnoresRangeGivesOneStream() throws {
        // Given a server that answers every request with the whole file (200)
        let body = content
        let server = try ScriptedServer { _, _ in
            .response(status: 200, headers: [("Content-Length", "\(body.count)"), ("ETag", "\"v1\"")], body: body)
        }
        defer { server.stop() }
        let destination = directory.appendingPathComponent("ignored.bin")
        // When a split download is asked for
        let response = download(from: server, to: destination, split: .automatic)
        // Then the first answer is the file, over one connection
        XCTAssertNil(response?.error)
        XCTAssertEqual(try Data(contentsOf: destination), body)
        XCTAssertEqual(server.requests.count, 1)
        XCTAssertEqual(response?.report.connections, 1)
    }
}

/// Split downloads against a server that refuses connections above a count (`max_conns`, a 429
/// with `Retry-After`): fewer connections at once, and the file still exact.
final class SegmentedDownloadRefusalTests: CourierTestCase {
    override func makeConfiguration() -> SessionManager.Configuration {
        var configuration = super.makeConfiguration()
        configuration.maximumRunningTasksPerHost = 8
        return configuration
    }

    /// Downloads a file of `size` bytes split as `split` from a server that paces each response
    /// at `rate` bytes/s and refuses (429) one above `limit` in flight; checks the file and
    /// returns the response and what the server saw.
    private func limitedDownload(
        _ name: String, size: Int, seed: UInt64, rate: Int, limit: Int, split: DownloadSplit
    )
        throws -> (DownloadResponse?, PathTraffic)
    {
        let content = TestServer.deterministicBytes(count: size, seed: seed)
        server.addFile(name, data: content, etag: "\"v1\"")
        let destination = directory.appendingPathComponent(name)
        var policy = DownloadPolicy()
        policy.split = split
        let response: DownloadResponse? = wait(timeout: 60) { finish in
            manager.downloadTask(
                with: request("/files/\(name)?rate=\(rate)&max_conns=\(limit)"), to: .file(destination), policy: policy,
                completion: finish
            ).resume()
        }
        XCTAssertNil(response?.error)
        XCTAssertEqual(try Data(contentsOf: destination) == content, true, "the file is exact")
        return (response, server.traffic(for: "/files/\(name)"))
    }

    func testAServerThatRefusesAboveTwoConnectionsGetsFewerAndTheFileIsExact() throws {
        // Given a server that answers 429 to a third connection at once, and paces each at 4 MiB/s
        // When the download asks for eight
        let (response, traffic) = try limitedDownload(
            "banned.bin", size: 12 << 20, seed: 28, rate: 4 << 20, limit: 2, split: .connections(8))
        // Then the refusals halve the connections (once per burst) until they fit, and the file is exact
        XCTAssertLessThanOrEqual(traffic.peakInFlight, 2)
        XCTAssertGreaterThan(traffic.tooManyRequests, 0, "the server did refuse")
        XCTAssertLessThanOrEqual(traffic.tooManyRequests, 10, "refusals stop once the count fits: \(traffic.refusals)")
        // The client's own count may pass the server's by one: it counts a connection until its
        // last bytes are read, and the server, done writing them, admits the next one sooner (seen
        // as 3 under ThreadSanitizer on a loaded machine). The server's count above is the promise.
        XCTAssertLessThanOrEqual(response?.report.connections ?? .max, 3, "connections are counted once answered")
    }

    func testAnAutomaticSplitAboveAServersLimitIsRefusedOnceAndNeverGoesAboveItAgain() throws {
        // Given a server that refuses a fifth response at once (429), pacing each at 8 MiB/s
        // When the automatic count ramps up (1, 4, then 16 under the manager's cap of 8)
        let (_, traffic) = try limitedDownload(
            "limited.bin", size: 32 << 20, seed: 29, rate: 8 << 20, limit: 4, split: .automatic)
        // Then the step's connections went out one answer at a time: one refused request, then
        // never above the limit again, and the file is exact
        XCTAssertEqual(traffic.tooManyRequests, 1, "refusals at \(traffic.refusals.map(\.inFlight))")
        XCTAssertLessThanOrEqual(traffic.peakInFlight, 4)
    }
}
