import CourierTestSupport
import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The disk cache over real sockets: answers survive a new manager (a restart), two managers share
/// one directory, and what is on disk never holds the request's credentials.
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
