import XCTest
import Courier
import CourierTestServer
@testable import courier
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `courier get -v`: the heads, masked, and the timeline on stderr; nothing else changes.
final class GetVerboseTests: CommandLineTestCase {
    func testVerbosePrintsTheHeadsMaskedAndTheTimeline() throws {
        // Given a file behind a redirect, fetched with a secret header and a secret query parameter
        server.addFile("data.bin", data: TestServer.deterministicBytes(count: 100_000, seed: 4))
        let url = server.url("/redirect-to?url=/files/data.bin&token=s3cret").absoluteString
        // When it is fetched with -v
        let result = try run(["get", "-v", "-H", "Authorization: Bearer s3cret", "-o", "data.bin", url])
        // Then it succeeds as without -v
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertEqual(
            try Data(contentsOf: directory.appendingPathComponent("data.bin")),
            TestServer.deterministicBytes(count: 100_000, seed: 4))
        let err = result.err
        // And stderr has both requests, both responses, the redirect and the timeline
        XCTAssertTrue(err.contains("* attempt 0 (initial)"), err)
        XCTAssertTrue(err.contains("> GET http://127.0.0.1:"), err)
        XCTAssertTrue(err.contains("< 302 "), err)
        XCTAssertTrue(err.contains("* redirect 302 to http://127.0.0.1:"), err)
        XCTAssertTrue(err.contains("< 200 "), err)
        XCTAssertTrue(err.contains("< Content-Length: 100000") || err.contains("< content-length: 100000"), err)
        XCTAssertTrue(err.contains("* timeline"), err)
        XCTAssertTrue(err.contains("initial") && err.contains("redirect") && err.contains("completed"), err)
        XCTAssertTrue(err.contains("DNS, connect, TLS: not reported on Linux"), err)
        // With every secret masked
        XCTAssertFalse(err.contains("s3cret"), err)
        XCTAssertTrue(err.contains("> Authorization: ***"), err)
        XCTAssertTrue(err.contains("token=***"), err)
        XCTAssertEqual(result.out, directory.appendingPathComponent("data.bin").path + "\n", "stdout unchanged")
    }

    func testVerboseWithStandardOutputKeepsStdoutTheBody() throws {
        let body = TestServer.deterministicBytes(count: 50_000, seed: 6)
        server.addFile("s.bin", data: body)
        let result = try run(["get", "-v", "-o", "-", server.url("/files/s.bin").absoluteString])
        XCTAssertEqual(result.status, 0, result.err)
        let out = try Data(contentsOf: logs.appendingPathComponent("\(launches).out"))
        XCTAssertEqual(out, body, "only the body on stdout")
        XCTAssertTrue(result.err.contains("< 200 "), result.err)
        XCTAssertTrue(result.err.contains("* timeline"), result.err)
    }

    func testVerbosePrintsEveryLineOfAHeadFoundationNetworkingWasGivenOnlyPartOf() throws {
        // Given nginx's head (most of its lines are withheld from FoundationNetworking by the
        // header diet, Docs/Platform.md §6.18)
        let hostile = try ScriptedServer { _, _ in
            .bytes(
                "HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Mon, 07 Dec 2026 22:00:00 GMT\r\n"
                    + "Content-Type: text/plain\r\nContent-Length: 2\r\nLast-Modified: Mon, 07 Dec 2026 21:00:00 GMT\r\n"
                    + "Connection: close\r\nETag: \"6b16bf3a-400\"\r\nAccept-Ranges: bytes\r\nX-Dup: a\r\nX-Dup: b\r\n\r\nok")
        }
        defer { hostile.stop() }
        let result = try run(["get", "-v", "-o", "-", hostile.url("/n").absoluteString])
        XCTAssertEqual(result.status, 0, result.err)
        // Then -v prints every field of it, and nothing of the kit's
        for line in [
            "< Server: nginx/1.22.1", "< Date: Mon, 07 Dec 2026 22:00:00 GMT", "< Content-Type: text/plain",
            "< Last-Modified: Mon, 07 Dec 2026 21:00:00 GMT", "< Etag: \"6b16bf3a-400\"", "< Accept-Ranges: bytes",
            "< X-Dup: a, b",
        ] {
            XCTAssertTrue(result.err.contains(line), "\(line) missing from:\n\(result.err)")
        }
        XCTAssertFalse(result.err.contains("X-Courier-Head"), result.err)
    }

    func testWithoutVerboseNoHeadIsPrinted() throws {
        server.addFile("q.bin", data: Data(count: 1000))
        let result = try run(["get", server.url("/files/q.bin").absoluteString])
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertFalse(result.err.contains("> GET"), result.err)
        XCTAssertFalse(result.err.contains("* timeline"), result.err)
    }
}
