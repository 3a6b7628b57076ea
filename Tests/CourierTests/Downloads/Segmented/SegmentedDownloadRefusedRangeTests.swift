import CourierTestServer
import XCTest
@testable import Courier
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A server that serves one connection at a time and refuses the others — a 503 with
/// `Retry-After: 1`, a reset before any answer, a redirect (`max_conns=1&refuse=…`): a refused
/// range is not asked again before the server's delay, and the download goes on over the
/// connection that works, exact.
final class SegmentedDownloadRefusedRangeTests: CourierTestCase {
    private let size = 6 << 20

    override func makeConfiguration() -> SessionManager.Configuration {
        var configuration = super.makeConfiguration()
        configuration.maximumRunningTasksPerHost = 8
        return configuration
    }

    /// Downloads a 6 MiB file paced at 6 MiB/s per connection, split as asked, from a server
    /// that allows one connection and refuses the others as `refuse` says; checks the file.
    private func download(refuse: String, split: DownloadSplit) throws -> (DownloadResponse?, PathTraffic) {
        let content = TestServer.deterministicBytes(count: size, seed: 34)
        let name = "refused-\(refuse)-\(split.description.replacingOccurrences(of: ":", with: "-")).bin"
        server.addFile(name, data: content, etag: "\"v1\"")
        let destination = directory.appendingPathComponent(name)
        var policy = DownloadPolicy()
        policy.split = split
        let response: DownloadResponse? = wait(timeout: 60) { finish in
            manager.downloadTask(
                with: request("/files/\(name)?rate=6291456&max_conns=1&refuse=\(refuse)"), to: .file(destination),
                policy: policy, completion: finish
            ).resume()
        }
        XCTAssertNil(response?.error, "refuse=\(refuse), \(split)")
        XCTAssertEqual((try? Data(contentsOf: destination)) == content, true, "refuse=\(refuse), \(split): the file is exact")
        return (response, server.traffic(for: "/files/\(name)"))
    }

    /// The refusals, grouped in bursts (refusals less than 100 ms apart answer one step up).
    private func bursts(_ traffic: PathTraffic) -> [ContinuousClock.Instant] {
        var starts: [ContinuousClock.Instant] = []
        var last: ContinuousClock.Instant?
        for refusal in traffic.refusals {
            if let last, refusal.at - last < .milliseconds(100) {
                // The same burst.
            } else {
                starts.append(refusal.at)
            }
            last = refusal.at
        }
        return starts
    }

    func testARefusalWithRetryAfterIsNotAskedAgainBeforeTheDelay() throws {
        for split in [DownloadSplit.connections(4), .automatic] {
            // Given a server that answers 503 with Retry-After: 1 to a second connection
            // When the download is split
            let (_, traffic) = try download(refuse: "503", split: split)
            // Then the refusals come in one burst per step up, never two within the second asked for
            let starts = bursts(traffic)
            XCTAssertGreaterThan(traffic.refusals.count, 0, "\(split): the server did refuse")
            for (earlier, later) in zip(starts, starts.dropFirst()) {
                XCTAssertGreaterThanOrEqual(later - earlier, .milliseconds(900), "\(split): \(traffic.refusals.map(\.at))")
            }
            XCTAssertLessThanOrEqual(traffic.refusals.count, 6, "\(split): \(traffic.refusals.count) refusals")
        }
    }

    func testEveryExtraConnectionRefusedLeavesTheFirstOneToFinishTheFile() throws {
        for refuse in ["503", "reset", "302"] {
            for split in [DownloadSplit.connections(4), .automatic] {
                // Given a server that refuses every connection but one, in one of three ways
                // When the download is split
                let (response, traffic) = try download(refuse: refuse, split: split)
                // Then it ends exact over the connection that works, after few refused attempts
                XCTAssertLessThanOrEqual(traffic.refusals.count, 6, "refuse=\(refuse), \(split)")
                XCTAssertLessThanOrEqual(traffic.peakInFlight, 1)
                XCTAssertEqual(response?.report.connections, 1, "refuse=\(refuse), \(split): connections are counted once answered")
            }
        }
    }
}
