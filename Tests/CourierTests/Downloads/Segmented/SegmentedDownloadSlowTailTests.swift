import CourierTestServer
import CourierTestSupport
import XCTest
@testable import Courier
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CourierSupport

/// A split download one of whose connections slows to a trickle: its tail is taken over (split off
/// while it is large, raced in the end game once it is under the 1 MiB floor for splitting), and
/// the download does not wait for it.
final class SegmentedDownloadSlowTailTests: CourierTestCase {
    private let size = 8 << 20

    func testAConnectionThatSlowsToATrickleIsTakenOverAndTheDownloadDoesNotWaitForIt() throws {
        // Given a server pacing every answer at about 6 MiB/s, except one segment request (the one
        // from 2 MiB), which sends 256 KiB at that pace and then 512 bytes every 250 ms (2 KiB/s)
        let body = TestServer.deterministicBytes(count: size, seed: 33)
        let total = size
        let slowIndex = Locked<Int?>(nil)
        let server = try ScriptedServer { request, index in
            let headers = [("ETag", "\"v1\"")]
            guard let range = RangeReplies.asked(request, total: total) else { return RangeReplies.answer(body, nil, headers: headers) }
            let isSlow = slowIndex.withLock { slow -> Bool in
                guard slow == nil, index > 0, range.lowerBound == total / 4 else { return false }
                slow = index
                return true
            }
            guard isSlow else { return RangeReplies.answer(body, range, headers: headers, pause: 10) }
            return RangeReplies.trickling(body, range, headers: headers, fast: 256 * 1024, pause: 10, trickle: 250)
        }
        defer { server.stop() }
        let destination = directory.appendingPathComponent("tail.bin")
        var policy = DownloadPolicy()
        policy.split = .connections(4)
        policy.retry.retryLimit = 0
        // When the file is split over four connections (the trickle alone would take minutes)
        let started = ContinuousClock.now
        let response: DownloadResponse? = wait(timeout: 60) { finish in
            manager.downloadTask(
                with: URLRequest(url: server.url("/tail.bin")), to: .file(destination), policy: policy,
                completion: finish
            ).resume()
        }
        let elapsed = ContinuousClock.now - started
        // Then the file is exact, the trickling connection's range was asked for again by another,
        // and the download ended long before the trickle could have
        XCTAssertNil(response?.error)
        XCTAssertEqual(try Data(contentsOf: destination) == body, true)
        let slow = try XCTUnwrap(slowIndex.withLock { $0 }, "the range from 2 MiB was asked for")
        let after = server.requests.dropFirst(slow + 1).compactMap { RangeReplies.asked($0, total: total) }
        XCTAssertTrue(
            after.contains { $0.lowerBound > total / 4 && $0.lowerBound < total / 2 },
            "\(server.requests.map { $0.header("Range") ?? "" })")
        XCTAssertLessThan(elapsed, .seconds(20), "the download waited for the trickle")
    }
}
