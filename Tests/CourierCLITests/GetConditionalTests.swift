import XCTest
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `courier get -z`, `--etag-compare` and `--etag-save` over real sockets, with curl's meanings:
/// a 304 (or a copy curl's own time check turns away) writes nothing and exits 0; the ETag is
/// saved with its quotes and a newline, and only once the file it describes is saved.
final class GetConditionalTests: CommandLineTestCase {
    private static let body = TestServer.deterministicBytes(count: 20_000, seed: 32)
    private static let lastModified = Date(timeIntervalSince1970: 1_445_412_480)  // Wed, 21 Oct 2015 07:28:00 GMT

    private func file(_ name: String) -> URL { directory.appendingPathComponent(name) }

    func testEtagSaveThenEtagCompareLeavesAnUnchangedFileAlone() throws {
        // Given a file saved once with its ETag
        server.addFile("data.bin", data: Self.body, etag: "\"v1\"")
        let url = server.url("/files/data.bin").absoluteString
        let first = try run(["get", "-q", "--etag-save", "etag.txt", "-o", "data.bin", url])
        XCTAssertEqual(first.status, 0, first.err)
        XCTAssertEqual(try String(contentsOf: file("etag.txt"), encoding: .utf8), "\"v1\"\n")
        let saved = try FileManager.default.attributesOfItem(atPath: file("data.bin").path)[.modificationDate] as? Date
        // When it is asked for again with the saved ETag
        let second = try run(["get", "--etag-compare", "etag.txt", "--etag-save", "etag.txt", "-o", "data.bin", url])
        // Then the server answers 304, nothing is written and the command succeeds
        XCTAssertEqual(second.status, 0, second.err)
        XCTAssertEqual(second.out, "", "no file saved, no path printed")
        XCTAssertTrue(second.err.contains("courier: not modified: the server answered 304 Not Modified"), second.err)
        XCTAssertEqual(server.requests.last?.header("If-None-Match"), "\"v1\"")
        XCTAssertEqual(try Data(contentsOf: file("data.bin")), Self.body)
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: file("data.bin").path)[.modificationDate] as? Date, saved)
        XCTAssertEqual(try String(contentsOf: file("etag.txt"), encoding: .utf8), "\"v1\"\n")
        XCTAssertEqual(try listing(), ["data.bin", "etag.txt"])
    }

    func testEtagCompareFetchesAChangedCopyReplacesTheFileAndSavesTheNewETag() throws {
        // Given a file saved at v1, and the server now has v2
        try Data("old".utf8).write(to: file("data.bin"))
        try Data("\"v1\"\n".utf8).write(to: file("etag.txt"))
        server.addFile("data.bin", data: Self.body, etag: "\"v2\"")
        // When
        let result = try run(
            [
                "get", "-q", "--etag-compare", "etag.txt", "--etag-save", "etag.txt", "-o", "data.bin",
                server.url("/files/data.bin").absoluteString,
            ])
        // Then the condition replaced the file (no --force needed) and the ETag file holds v2
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertEqual(try Data(contentsOf: file("data.bin")), Self.body)
        XCTAssertEqual(try String(contentsOf: file("etag.txt"), encoding: .utf8), "\"v2\"\n")
    }

    func testAMissingEtagCompareFileSendsAnEmptyETagWithAWarning() throws {
        server.addFile("data.bin", data: Self.body, etag: "\"v1\"")
        let result = try run(["get", "--etag-compare", "none.txt", "-o", "data.bin", server.url("/files/data.bin").absoluteString])
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertTrue(result.err.contains("courier: warning: cannot read the --etag-compare file none.txt"), result.err)
        XCTAssertEqual(server.requests.last?.header("If-None-Match"), "\"\"")
        XCTAssertEqual(try Data(contentsOf: file("data.bin")), Self.body)
    }

    func testEtagSaveWithoutAnETagLeavesAnEmptyFile() throws {
        let result = try run(["get", "-q", "--etag-save", "etag.txt", "-o", "data.bin", server.url("/stream-bytes/100").absoluteString])
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertEqual(try Data(contentsOf: file("etag.txt")), Data())
    }

    func testEtagSaveWritesNothingForADownloadThatDidNotComplete() throws {
        // A saved ETag without its body would make the next --etag-compare skip the file for good.
        let result = try run(
            [
                "get", "-q", "--retries", "0", "--etag-save", "etag.txt", "-o", "data.bin",
                server.url("/bytes/20000?close_after=5000").absoluteString,
            ])
        XCTAssertEqual(result.status, 3, result.err)
        XCTAssertEqual(try Data(contentsOf: file("etag.txt")), Data())
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("data.bin").path))
    }

    func testTimeCondFromAFileSendsItsModificationTimeAndA304WritesNothing() throws {
        // Given a local copy as new as the server's
        server.addFile("data.bin", data: Self.body, lastModified: Self.lastModified)
        try Data("local".utf8).write(to: file("data.bin"))
        try FileManager.default.setAttributes([.modificationDate: Self.lastModified], ofItemAtPath: file("data.bin").path)
        // When
        let result = try run(["get", "-z", "data.bin", "-o", "data.bin", server.url("/files/data.bin").absoluteString])
        // Then
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertEqual(server.requests.last?.header("If-Modified-Since"), "Wed, 21 Oct 2015 07:28:00 GMT")
        XCTAssertEqual(try String(contentsOf: file("data.bin"), encoding: .utf8), "local")
        XCTAssertTrue(result.err.contains("not modified"), result.err)
    }

    func testTimeCondWithAnOlderDateDownloadsTheNewerCopy() throws {
        let result = try run(["get", "-q", "-z", "Jan 10, 2010", "-o", "data.bin", server.url("/bytes/20000").absoluteString])
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertEqual(server.requests.last?.header("If-Modified-Since"), "Sun, 10 Jan 2010 00:00:00 GMT")
        XCTAssertEqual(try Data(contentsOf: file("data.bin")).count, 20_000)
    }

    func testTimeCondWithADashAsksIfUnmodifiedSinceAndCurlsCheckTurnsAwayANewerCopy() throws {
        // The test server ignores If-Unmodified-Since and sends its 2015 copy: curl's own check
        // sees a copy newer than the date and writes nothing, as for a 304.
        let result = try run(["get", "-z", "-Jan 10, 2010", "-o", "data.bin", server.url("/bytes/20000").absoluteString])
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertEqual(server.requests.last?.header("If-Unmodified-Since"), "Sun, 10 Jan 2010 00:00:00 GMT")
        XCTAssertTrue(result.err.contains("does not meet the -z time condition"), result.err)
        XCTAssertEqual(try listing(), [])
    }

    func testA412ToIfUnmodifiedSinceIsAnHTTPError() throws {
        let server = try ScriptedServer { _, _ in
            .response(status: 412, reason: "Precondition Failed", headers: [("Content-Length", "0")])
        }
        let result = try run(["get", "-z", "-2010-01-10", "-o", "data.bin", server.url("/x").absoluteString])
        XCTAssertEqual(result.status, 4, result.err)
        XCTAssertTrue(result.err.contains("HTTP 412 Precondition Failed"), result.err)
        XCTAssertEqual(server.requests.first?.header("If-Unmodified-Since"), "Sun, 10 Jan 2010 00:00:00 GMT")
    }

    func testAnUnreadableTimeCondWarnsAndDownloadsWithoutACondition() throws {
        let result = try run(["get", "-z", "no-such-file", "-o", "data.bin", server.url("/bytes/100").absoluteString])
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertTrue(result.err.contains("courier: warning: -z 'no-such-file' is neither a date nor an existing file"), result.err)
        XCTAssertNil(server.requests.last?.header("If-Modified-Since"))
        XCTAssertEqual(try Data(contentsOf: file("data.bin")).count, 100)
    }

    func testA304ToStandardOutputWritesNothingAndSucceeds() throws {
        try Data("\"bytes-100-0\"\n".utf8).write(to: file("etag.txt"))
        let result = try run(["get", "--etag-compare", "etag.txt", "-o", "-", server.url("/bytes/100").absoluteString])
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertEqual(result.out, "")
        XCTAssertTrue(result.err.contains("not modified"), result.err)
    }

    func testAnEtagSaveFileThatCannotBeCreatedStopsBeforeTheRequest() throws {
        let result = try run(["get", "--etag-save", "missing-dir/etag.txt", server.url("/bytes/100").absoluteString])
        XCTAssertEqual(result.status, 6, result.err)
        XCTAssertTrue(result.err.contains("cannot create the --etag-save file missing-dir/etag.txt"), result.err)
        XCTAssertTrue(server.requests.isEmpty)
    }
}
