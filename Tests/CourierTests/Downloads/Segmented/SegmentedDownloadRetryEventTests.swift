import CourierTestSupport
import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CourierSupport

/// Over real sockets: a split connection's failure is announced as the task's retry, owned by a
/// split connection (``RetryOwner/splitConnection``), and uses up none of the task's own retries.
final class SegmentedDownloadRetryEventTests: CourierTestCase {
    private let size = 8 << 20
    private let retries = Locked<[TaskRetryEvent]>([])

    override func makeConfiguration() -> SessionManager.Configuration {
        var configuration = super.makeConfiguration()
        let retries = retries
        configuration.eventMonitors = [ClosureEventMonitor(onRetry: { _, event in retries.withLock { $0.append(event) } })]
        return configuration
    }

    func testEachResetRangeIsAnnouncedAsARetryOfASplitConnection() throws {
        // Given a server that resets every connection after 1 MiB of its answer
        let content = TestServer.deterministicBytes(count: size, seed: 33)
        server.addFile("resets.bin", data: content, etag: "\"v1\"")
        let destination = directory.appendingPathComponent("resets.bin")
        var policy = DownloadPolicy()
        policy.split = .connections(4)
        // When the file is split over four connections
        let response: DownloadResponse? = wait(timeout: 60) { finish in
            manager.downloadTask(
                with: request("/files/resets.bin?reset_after=1048576&chunk=65536&chunk_delay_ms=2"), to: .file(destination),
                policy: policy, completion: finish
            ).resume()
        }
        // Then the file is exact, and every range handed over was announced, owned by a split connection
        XCTAssertNil(response?.error)
        XCTAssertEqual(try Data(contentsOf: destination), content)
        let announced = retries.withLock { $0 }
        XCTAssertFalse(announced.isEmpty)
        for event in announced {
            XCTAssertEqual(event.owner, .splitConnection)
            XCTAssertTrue(event.error.code.isTransient, "\(event.error.code)")
            XCTAssertGreaterThan(event.continuesFrom, 0)
            XCTAssertNotNil(event.retryLimit)
        }
        XCTAssertEqual(response?.report.retries, 0, "no retry of the task's own was used")
    }
}
