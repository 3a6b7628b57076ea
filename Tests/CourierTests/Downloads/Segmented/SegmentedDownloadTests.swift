import CourierTestSupport
import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Split downloads over real sockets: one file over several `Range` connections, exact or a typed error.
final class SegmentedDownloadTests: CourierTestCase {
    private let size = 8 << 20
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
        print("DEBUG", response?.report as Any, server.requests.map { ($0.header("Range") ?? "-") })
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
    }
}
