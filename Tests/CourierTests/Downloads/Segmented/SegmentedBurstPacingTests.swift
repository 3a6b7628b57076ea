import CourierTestSupport
import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CourierSupport

/// The automatic split against a server that paces each connection in bursts, as nginx's
/// `limit_rate` does (a chunk at once, then silence until the next is due): it must find the cap
/// in its first steps, as against a server that paces smoothly.
final class SegmentedBurstPacingTests: CourierTestCase {
    private let seen = Locked<[TaskConnectionsEvent]>([])

    override func makeConfiguration() -> SessionManager.Configuration {
        var configuration = super.makeConfiguration()
        configuration.maximumRunningTasksPerHost = 16
        configuration.urlSessionConfiguration.httpMaximumConnectionsPerHost = 16
        let seen = seen
        configuration.eventMonitors = [
            ClosureEventMonitor(onEvent: { _, event in
                if case .connections(let crew) = event { seen.withLock { $0.append(crew) } }
            })
        ]
        return configuration
    }

    func testAnAutomaticSplitReachesTheCapEarlyOnAServerPacingEachConnectionInBursts() throws {
        // Given 64 MiB served 1 MiB at once then 250 ms of silence, per connection (4 MiB/s each):
        // a short window sees a connection's burst or nothing, by chance
        let size = 64 << 20
        let content = TestServer.deterministicBytes(count: size, seed: 31)
        server.addFile("bursts.bin", data: content, etag: "\"v1\"")
        let destination = directory.appendingPathComponent("bursts.bin")
        var policy = DownloadPolicy()
        policy.split = .automatic
        // When it is downloaded with an automatic split under a cap of 16
        let response: DownloadResponse? = wait(timeout: 60) { finish in
            manager.downloadTask(
                with: request("/files/bursts.bin?chunk=1048576&chunk_delay_ms=250"), to: .file(destination), policy: policy,
                completion: finish
            ).resume()
        }
        // Then the file is exact, and it wanted all sixteen before a quarter of the file was
        // written (before, each step's first bursts were dropped from its window, the step looked
        // as if it did not pay, and it went back to one connection)
        XCTAssertNil(response?.error)
        XCTAssertEqual(try Data(contentsOf: destination), content)
        let early = seen.withLock { $0 }.filter { $0.bytesWritten < Int64(size / 4) }
        XCTAssertEqual(early.map(\.wanted).max(), 16, "wanted while the first quarter was written: \(early.map(\.wanted))")
    }
}
