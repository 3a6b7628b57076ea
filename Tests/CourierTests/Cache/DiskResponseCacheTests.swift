import CourierTestSupport
import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The disk cache over real sockets: answers survive a new manager (a restart), two managers share
/// one directory, stored parts combine across a restart, and what is on disk never holds the
/// request's credentials.
final class DiskResponseCacheTests: CourierTestCase {
    private var origin: ScriptedServer!
    private var cacheDirectory: URL { directory.appendingPathComponent("http-cache") }

    override func setUpWithError() throws {
        try super.setUpWithError()
        origin = try ScriptedServer { _, index in
            let body = Data("answer \(index)".utf8)
            return .response(
                status: 200,
                headers: [("Cache-Control", "max-age=3600"), ("Vary", "Authorization"), ("Content-Length", String(body.count))],
                body: body)
        }
    }

    override func tearDownWithError() throws {
        origin?.stop()
        try super.tearDownWithError()
    }

    private func manager(maximumBytes: Int = 1 << 20) throws -> SessionManager {
        var configuration = makeConfiguration()
        configuration.responseCache = try ResponseCache.disk(directory: cacheDirectory, maximumBytes: maximumBytes)
        return SessionManager(configuration: configuration)
    }

    private func fetch(_ manager: SessionManager, token: String = "Bearer secret-token-123") -> DataResponse<Data> {
        var request = URLRequest(url: origin.url("/private"))
        request.setValue(token, forHTTPHeaderField: "Authorization")
        return wait { finish in manager.dataTask(with: request, completion: finish).resume() }!
    }

    func testAnswersSurviveARestartAndAreSharedBetweenManagers() throws {
        let first = try manager()
        XCTAssertEqual(fetch(first).cacheOutcome, .miss)
        first.invalidate()
        let restarted = try manager()
        let other = try manager()
        let hit = fetch(restarted)
        XCTAssertEqual(hit.cacheOutcome, .hit)
        XCTAssertEqual(hit.data, Data("answer 0".utf8))
        XCTAssertEqual(fetch(other).cacheOutcome, .hit, "a second manager on the directory sees it")
        XCTAssertEqual(fetch(other, token: "Bearer another").cacheOutcome, .miss, "Vary: Authorization")
        XCTAssertEqual(origin.requests.count, 2)
        restarted.invalidate()
        other.invalidate()
    }

    func testPartsCombineOnDiskAcrossARestartAndServeAnOptedInDownload() throws {
        // Given an origin answering two halves under one strong ETag
        let halves = try ScriptedServer { _, index in
            let (range, body) = index == 0 ? ("bytes 0-4/10", "01234") : ("bytes 5-9/10", "56789")
            return .response(
                status: 206, reason: "Partial Content",
                headers: [("Cache-Control", "max-age=3600"), ("ETag", "\"v1\""), ("Content-Range", range), ("Content-Length", "5")],
                body: Data(body.utf8))
        }
        defer { halves.stop() }
        func get(_ manager: SessionManager, range: String) -> DataResponse<Data> {
            var request = URLRequest(url: halves.url("/file"))
            request.setValue(range, forHTTPHeaderField: "Range")
            return wait { finish in manager.dataTask(with: request, completion: finish).resume() }!
        }
        // When one manager stores the first half, and a restarted one the second
        let first = try manager()
        XCTAssertEqual(get(first, range: "bytes=0-4").response?.statusCode, 206)
        first.invalidate()
        let restarted = try manager()
        defer { restarted.invalidate() }
        XCTAssertEqual(get(restarted, range: "bytes=5-9").response?.statusCode, 206)
        // Then the disk holds the whole: a download that opted in is published from it
        var policy = DownloadPolicy()
        policy.responseCache = .upTo(bytes: 1024)
        let destination = directory.appendingPathComponent("file.bin")
        let download = wait { finish in
            restarted.downloadTask(with: URLRequest(url: halves.url("/file")), to: .file(destination), policy: policy, completion: finish)
                .resume()
        }
        XCTAssertNil(download?.error, "\(String(describing: download?.error))")
        XCTAssertEqual(download?.cacheOutcome, .hit)
        XCTAssertEqual(try? Data(contentsOf: destination), Data("0123456789".utf8))
        XCTAssertEqual(halves.requests.count, 2)
    }

    func testNothingOnDiskHoldsTheCredential() throws {
        let cached = try manager()
        _ = fetch(cached)
        cached.invalidate()
        let files = FileManager.default.enumerator(at: cacheDirectory, includingPropertiesForKeys: nil)?.allObjects as? [URL] ?? []
        XCTAssertFalse(files.isEmpty)
        for file in files where !file.hasDirectoryPath {
            let bytes = (try? Data(contentsOf: file)) ?? Data()
            XCTAssertNil(bytes.range(of: Data("secret-token-123".utf8)), file.path)
        }
    }
}
