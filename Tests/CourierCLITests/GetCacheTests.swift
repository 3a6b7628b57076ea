import XCTest
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `courier get --cache DIR`, run as people run it: a fresh stored copy answers without a
/// request, a stale one is revalidated, and the output rules of `courier get` still hold.
final class GetCacheTests: CommandLineTestCase {
    private var cache: URL { directory.deletingLastPathComponent().appendingPathComponent("cache") }

    func testAFreshCopyIsServedFromTheCacheWithoutARequest() throws {
        // Given an answer fresh for ten minutes, fetched once through the cache
        let url = server.url("/response-headers?Cache-Control=max-age%3D600&X-Probe=1").absoluteString
        let first = try run(["get", "--cache", cache.path, "-o", "-", url])
        XCTAssertEqual(first.status, 0, first.err)
        XCTAssertTrue(first.err.contains("cache: miss"), first.err)
        // When it is asked for again by another process
        let second = try run(["get", "--cache", cache.path, "-o", "-", url])
        // Then the same bytes come from the disk store and the server saw one request
        XCTAssertEqual(second.status, 0, second.err)
        XCTAssertEqual(second.out, first.out)
        XCTAssertFalse(second.out.isEmpty)
        XCTAssertTrue(second.err.contains("cache: hit (no request sent)"), second.err)
        XCTAssertEqual(server.requests.filter { $0.path == "/response-headers" }.count, 1)
    }

    func testAStaleCopyIsRevalidatedAndA304GivesTheStoredBody() throws {
        // Given a file with a validator and no freshness: stored, but stale at once
        let body = TestServer.deterministicBytes(count: 4_000, seed: 7)
        server.addFile("data.bin", data: body, etag: "\"v1\"")
        let url = server.url("/files/data.bin").absoluteString
        XCTAssertEqual(try run(["get", "-q", "--cache", cache.path, "-o", "first.bin", url]).status, 0)
        // When
        let second = try run(["get", "--cache", cache.path, "-o", "second.bin", url])
        // Then the server was asked with the stored ETag, and the body is the stored one
        XCTAssertEqual(second.status, 0, second.err)
        XCTAssertTrue(second.err.contains("cache: revalidated"), second.err)
        XCTAssertEqual(server.requests.last?.header("If-None-Match"), "\"v1\"")
        XCTAssertEqual(try Data(contentsOf: directory.appendingPathComponent("second.bin")), body)
        XCTAssertEqual(second.out, directory.appendingPathComponent("second.bin").path + "\n")
    }

    func testAnExistingOutputStillStopsTheCommandBeforeAnyRequest() throws {
        try Data("mine".utf8).write(to: directory.appendingPathComponent("out.bin"))
        let result = try run(["get", "--cache", cache.path, "-o", "out.bin", server.url("/bytes/100").absoluteString])
        XCTAssertEqual(result.status, 6, result.err)
        XCTAssertTrue(result.err.contains("already exists"), result.err)
        XCTAssertTrue(server.requests.isEmpty)
        XCTAssertEqual(try String(contentsOf: directory.appendingPathComponent("out.bin"), encoding: .utf8), "mine")
    }

    func testAnHTTPErrorIsExitFourAndSavesNothing() throws {
        let result = try run(["get", "--cache", cache.path, "--retries", "0", "-o", "out.bin", server.url("/status/404").absoluteString])
        XCTAssertEqual(result.status, 4, result.err)
        XCTAssertTrue(result.err.contains("HTTP 404 Not Found"), result.err)
        XCTAssertEqual(try listing(), [])
    }

    func testACacheDirectoryThatCannotBeUsedIsAFileError() throws {
        let file = directory.deletingLastPathComponent().appendingPathComponent("not-a-directory")
        try Data("x".utf8).write(to: file)
        let result = try run(["get", "--cache", file.path, "-o", "-", server.url("/bytes/10").absoluteString])
        XCTAssertEqual(result.status, 6, result.err)
        XCTAssertTrue(result.err.contains("cannot use the cache directory"), result.err)
        XCTAssertTrue(server.requests.isEmpty)
    }

    func testCacheWithSplitOrAListIsAUsageError() throws {
        let url = server.url("/bytes/10").absoluteString
        let split = try run(["get", "--cache", cache.path, "--split", "4", url])
        XCTAssertEqual(split.status, 2, split.err)
        XCTAssertTrue(split.err.contains("--cache and --split do not go together"), split.err)
        let list = try run(["get", "--cache", cache.path, "-i", "urls.txt"])
        XCTAssertEqual(list.status, 2, list.err)
        XCTAssertTrue(list.err.contains("--cache is for one URL"), list.err)
    }
}
