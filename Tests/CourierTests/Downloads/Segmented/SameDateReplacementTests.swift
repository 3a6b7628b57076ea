import CourierTestServer
import XCTest
@testable import Courier
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A server that names a version only by its date (`Last-Modified`, no `ETag`) and whose file is
/// replaced by another of the same size and the same date — a mirror updated with `rsync -t` or
/// `cp -p`, a tar extraction — after the first request. `If-Range` with the date is honoured, so
/// HTTP cannot tell the versions apart: a split download never begins on a date, and one stream
/// that continues by a date is caught by the expected SHA-256 (Docs/ResumableDownloads.md, "What
/// a date can back").
final class SameDateReplacementTests: CourierTestCase {
    private let size = 4 << 20
    private static let date = "Wed, 21 Oct 2015 07:28:00 GMT"
    private let old = TestServer.deterministicBytes(count: 4 << 20, seed: 31)
    private let new = TestServer.deterministicBytes(count: 4 << 20, seed: 32)

    /// Serves `old` to the first request (in 64 KiB writes `pause` ms apart, reset after `cutAfter`
    /// bytes when given) and `new` to every later one, with the same `Last-Modified`, honouring
    /// `Range` and an `If-Range` that names that date, as a file server does.
    private func replacingServer(pause: Int, cutAfter: Int? = nil) throws -> ScriptedServer {
        let (old, new, total) = (old, new, size)
        return try ScriptedServer { request, index in
            var range = RangeReplies.asked(request, total: total)
            if let ifRange = request.header("If-Range"), ifRange != Self.date { range = nil }
            let headers = [("Last-Modified", Self.date), ("Accept-Ranges", "bytes")]
            if index == 0 { return RangeReplies.answer(old, range, headers: headers, pause: pause, cutAfter: cutAfter) }
            return RangeReplies.answer(new, range, headers: headers)
        }
    }

    private func download(_ server: ScriptedServer, to destination: URL, _ policy: DownloadPolicy) -> DownloadResponse? {
        wait(timeout: 60) { finish in
            manager.downloadTask(
                with: URLRequest(url: server.url("/mirror.iso")), to: .file(destination), policy: policy,
                completion: finish
            ).resume()
        }
    }

    func testASplitDownloadNeverBeginsOnADateAndPublishesOneWholeVersion() throws {
        for split in [DownloadSplit.connections(4), .automatic] {
            // Given a date-only server whose file is replaced, same size and date, once the first answer began
            let server = try replacingServer(pause: 10)
            defer { server.stop() }
            let destination = directory.appendingPathComponent("mirror-\(split).iso")
            var policy = DownloadPolicy()
            policy.split = split
            // When a split download is asked for
            let response = download(server, to: destination, policy)
            // Then it stays one stream: no range is asked by the date, and the file is the first version, whole
            XCTAssertNil(response?.error, "\(split)")
            XCTAssertEqual(try Data(contentsOf: destination) == old, true, "\(split): a mixed or other file was published")
            XCTAssertEqual(server.requests.filter { $0.header("If-Range") != nil }.count, 0, "\(split)")
            XCTAssertEqual(response?.report.connections, 1, "\(split)")
        }
    }

    func testOneStreamContinuedByADateAcrossTheReplacementFailsItsDigestAndPublishesNothing() throws {
        // Given a date-only server that cuts the first answer half way, then serves the replacement
        let server = try replacingServer(pause: 0, cutAfter: size / 2)
        defer { server.stop() }
        let destination = directory.appendingPathComponent("continued.iso")
        var policy = DownloadPolicy()
        policy.expectedSHA256 = SHA256.hash(old)
        // When one stream continues by the date
        let response = download(server, to: destination, policy)
        // Then the continuation was asked by the date, the mix is caught by the digest, and nothing is published
        XCTAssertEqual(server.requests.last?.header("If-Range"), Self.date)
        XCTAssertEqual(response?.error?.code, .integrityFailed)
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path))
    }

    func testARerunContinuingByADateAfterTheReplacementFailsItsDigestThenStartsOverExact() throws {
        // Given a first run cut half way that keeps its bytes and record, and then the replacement
        let server = try replacingServer(pause: 0, cutAfter: size / 2)
        defer { server.stop() }
        let destination = directory.appendingPathComponent("rerun.iso")
        var first = DownloadPolicy()
        first.retry.retryLimit = 0
        XCTAssertNotNil(download(server, to: destination, first)?.error)
        let partial = DownloadPolicy.defaultPartialFile(for: destination)
        XCTAssertNotNil(try ResumeData.record(beside: partial), "the first run kept a record to continue by")
        // When the download runs again, expecting the new version's digest
        var policy = DownloadPolicy()
        policy.expectedSHA256 = SHA256.hash(new)
        let rerun = download(server, to: destination, policy)
        // Then the continuation by the date is caught and nothing is published
        XCTAssertEqual(server.requests[1].header("If-Range"), Self.date)
        XCTAssertEqual(rerun?.error?.code, .integrityFailed)
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path))
        // And the next run starts over and is exact
        let third = download(server, to: destination, policy)
        XCTAssertNil(third?.error)
        XCTAssertEqual(try Data(contentsOf: destination) == new, true)
    }
}
