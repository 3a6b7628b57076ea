import CourierTestSupport
import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CourierSupport

/// File downloads and the response cache, over real sockets: only under
/// ``DownloadPolicy/responseCache``, bounded by its own size, published like a network body,
/// never for a split download.
final class DownloadCachingTests: ScriptedOriginTestCase {
    private let body = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7) })

    override func setUpWithError() throws {
        try super.setUpWithError()
        script(
            .response(
                status: 200, headers: [("Cache-Control", "max-age=3600"), ("ETag", "\"v1\""), ("Content-Length", String(body.count))],
                body: body))
    }

    private func policy(_ caching: DownloadCaching) -> DownloadPolicy {
        var policy = DownloadPolicy()
        policy.responseCache = caching
        policy.retry.retryLimit = 0
        return policy
    }

    private func download(_ name: String, _ policy: DownloadPolicy) -> DownloadResponse? {
        wait(timeout: 30) { finish in
            manager.downloadTask(
                with: URLRequest(url: origin.url("/file.bin")), to: .file(directory.appendingPathComponent(name)), policy: policy,
                completion: finish
            ).resume()
        }
    }

    private func contents(_ name: String) -> Data? {
        try? Data(contentsOf: directory.appendingPathComponent(name))
    }

    /// Names in the test directory other than the published files: staging or partial leftovers.
    private func leftovers(besides published: Set<String>) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { !published.contains($0) }
    }

    func testAnOptedInDownloadIsStoredAndTheNextOneIsPublishedFromTheCache() {
        // Given a download that opts in with room for the file
        let first = download("a.bin", policy(.upTo(bytes: 64 * 1024)))
        XCTAssertNil(first?.error)
        XCTAssertEqual(first?.cacheOutcome, .miss)
        XCTAssertGreaterThan(cache.currentBytes, body.count, "stored")
        // When the same file is downloaded again to another place
        let second = download("b.bin", policy(.upTo(bytes: 64 * 1024)))
        // Then it is published from the cache, whole, with no request
        XCTAssertNil(second?.error, "\(String(describing: second?.error))")
        XCTAssertEqual(second?.cacheOutcome, .hit)
        XCTAssertEqual(second?.fileURL?.lastPathComponent, "b.bin")
        XCTAssertEqual(contents("b.bin"), body)
        XCTAssertEqual(contents("a.bin"), body)
        XCTAssertEqual(second?.response?.statusCode, 200)
        XCTAssertTrue(second?.response?.value(forHTTPHeaderField: "Cache-Status")?.hasPrefix("Courier; hit") == true)
        XCTAssertEqual(origin.requests.count, 1)
        XCTAssertEqual(leftovers(besides: ["a.bin", "b.bin"]), [], "no staging file is left behind")
    }

    func testAStaleStoredAnswerIsRevalidatedAndThe304PublishesTheStoredBody() {
        // Given a stored answer that is stale at once, and an origin that answers its validator with a 304
        script(
            .response(
                status: 200, headers: [("Cache-Control", "max-age=0"), ("ETag", "\"v1\""), ("Content-Length", String(body.count))],
                body: body),
            .response(status: 304, reason: "Not Modified", headers: [("ETag", "\"v1\""), ("Cache-Control", "max-age=3600")]))
        XCTAssertEqual(download("a.bin", policy(.upTo(bytes: 64 * 1024)))?.cacheOutcome, .miss)
        // When it is downloaded again
        let second = download("b.bin", policy(.upTo(bytes: 64 * 1024)))
        // Then the request carried the stored ETag, and the stored body is published whole
        XCTAssertNil(second?.error, "\(String(describing: second?.error))")
        XCTAssertEqual(second?.cacheOutcome, .revalidated)
        XCTAssertEqual(second?.response?.statusCode, 200)
        XCTAssertEqual(origin.requests.last?.header("If-None-Match"), "\"v1\"")
        XCTAssertEqual(contents("b.bin"), body)
        XCTAssertEqual(leftovers(besides: ["a.bin", "b.bin"]), [], "neither the 304's staging file nor the stored body's is left")
        // And the 304's freshness now answers a third download without a request
        XCTAssertEqual(download("c.bin", policy(.upTo(bytes: 64 * 1024)))?.cacheOutcome, .hit)
        XCTAssertEqual(origin.requests.count, 2)
    }

    func testARevalidatedBodyFailingTheExpectedDigestIsNotPublished() {
        // Given a stale stored answer that a 304 confirms
        script(
            .response(
                status: 200, headers: [("Cache-Control", "no-cache"), ("ETag", "\"v1\""), ("Content-Length", String(body.count))],
                body: body),
            .response(status: 304, reason: "Not Modified", headers: [("ETag", "\"v1\"")]))
        _ = download("a.bin", policy(.upTo(bytes: 64 * 1024)))
        // When a download expecting another SHA-256 is revalidated
        var expecting = policy(.upTo(bytes: 64 * 1024))
        expecting.expectedSHA256 = [UInt8](repeating: 0, count: 32)
        let response = download("b.bin", expecting)
        // Then it fails as a network body would, and nothing is published or left behind
        XCTAssertEqual(response?.error?.code, .integrityFailed, "\(String(describing: response?.error))")
        XCTAssertNil(contents("b.bin"))
        XCTAssertEqual(leftovers(besides: ["a.bin"]), [])
        XCTAssertEqual(origin.requests.count, 2)
    }

    func testADownloadWithoutTheOptInNeitherReadsNorWritesTheCache() {
        // Given an answer a data task stored
        let stored = data(URLRequest(url: origin.url("/file.bin")))
        XCTAssertEqual(stored.cacheOutcome, .miss)
        let bytes = cache.currentBytes
        // When a download of it does not opt in
        let plain = download("a.bin", policy(.off))
        // Then it goes to the origin and stores nothing
        XCTAssertNil(plain?.error)
        XCTAssertNil(plain?.cacheOutcome)
        XCTAssertEqual(contents("a.bin"), body)
        XCTAssertEqual(origin.requests.count, 2)
        XCTAssertEqual(cache.currentBytes, bytes)
        // And an opted-in one is answered by what the data task stored
        let cached = download("b.bin", policy(.upTo(bytes: 64 * 1024)))
        XCTAssertEqual(cached?.cacheOutcome, .hit)
        XCTAssertEqual(contents("b.bin"), body)
        XCTAssertEqual(origin.requests.count, 2)
    }

    func testADownloadLargerThanItsBoundIsNeverStored() {
        // Given a bound one byte short of the file
        let first = download("a.bin", policy(.upTo(bytes: body.count - 1)))
        XCTAssertNil(first?.error)
        XCTAssertEqual(first?.cacheOutcome, .miss)
        XCTAssertEqual(cache.currentBytes, 0, "over its bound: not stored")
        // When it is downloaded again
        let second = download("b.bin", policy(.upTo(bytes: body.count - 1)))
        // Then it comes from the origin again
        XCTAssertEqual(second?.cacheOutcome, .miss)
        XCTAssertEqual(contents("b.bin"), body)
        XCTAssertEqual(origin.requests.count, 2)
    }

    func testASplitDownloadNeverUsesTheCache() {
        // Given a fresh stored answer
        _ = download("a.bin", policy(.upTo(bytes: 64 * 1024)))
        let bytes = cache.currentBytes
        // When a split download that opted in asks for the same file
        var split = policy(.upTo(bytes: 64 * 1024))
        split.split = .connections(4)
        let response = download("b.bin", split)
        // Then it goes to the origin (its first request asks for a range) and changes nothing stored
        XCTAssertNil(response?.error, "\(String(describing: response?.error))")
        XCTAssertNil(response?.cacheOutcome)
        XCTAssertEqual(contents("b.bin"), body)
        XCTAssertEqual(origin.requests.count, 2)
        XCTAssertEqual(origin.requests.last?.header("Range"), "bytes=0-")
        XCTAssertEqual(cache.currentBytes, bytes)
    }

    func testAStoredAnswerFailingTheExpectedDigestIsNotPublished() {
        // Given a stored answer
        _ = download("a.bin", policy(.upTo(bytes: 64 * 1024)))
        // When a download expecting another SHA-256 is answered from the cache
        var expecting = policy(.upTo(bytes: 64 * 1024))
        expecting.expectedSHA256 = [UInt8](repeating: 0, count: 32)
        let response = download("b.bin", expecting)
        // Then it fails as a network body would, and nothing is published or left behind
        XCTAssertEqual(response?.error?.code, .integrityFailed, "\(String(describing: response?.error))")
        XCTAssertNil(contents("b.bin"))
        XCTAssertEqual(leftovers(besides: ["a.bin"]), [])
        XCTAssertEqual(origin.requests.count, 1)
    }

    func testAStoredAnswerIsPublishedByTheSameRulesAsANetworkBody() throws {
        // Given a stored answer and a file already at the destination
        _ = download("a.bin", policy(.upTo(bytes: 64 * 1024)))
        let existing = directory.appendingPathComponent("b.bin")
        try Data("mine".utf8).write(to: existing)
        // When a download that may not replace it is answered from the cache
        let refused = wait(timeout: 30) { finish in
            manager.downloadTask(
                with: URLRequest(url: origin.url("/file.bin")), to: .file(existing, options: []),
                policy: policy(.upTo(bytes: 64 * 1024)), completion: finish
            ).resume()
        }
        // Then the file stays as it was, as with a network body
        XCTAssertEqual(refused?.error?.code, .destinationFailed, "\(String(describing: refused?.error))")
        XCTAssertEqual(contents("b.bin"), Data("mine".utf8))
        XCTAssertEqual(leftovers(besides: ["a.bin", "b.bin"]), [])
    }
}
