import CourierTestSupport
import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CourierSupport

/// The cache's socket tests: a manager with an in-memory ``ResponseCache`` and a scripted origin
/// that answers each request as the test says (``script(_:)``) and counts what reached it.
class ScriptedOriginTestCase: CourierTestCase {
    /// The replies of the scripted origin, in order; past the end, the last one again.
    private let replies = Locked<[ScriptedServer.Reply]>([])
    private(set) var origin: ScriptedServer!
    private(set) var cache: ResponseCache!

    override func makeConfiguration() -> SessionManager.Configuration {
        var configuration = super.makeConfiguration()
        cache = .memory(maximumBytes: 1 << 20)
        configuration.responseCache = cache
        return configuration
    }

    override func setUpWithError() throws {
        try super.setUpWithError()
        let replies = replies
        origin = try ScriptedServer { _, index in
            replies.withLock {
                $0.isEmpty ? .bytes("HTTP/1.1 500 Nothing scripted\r\nContent-Length: 0\r\n\r\n") : $0[min(index, $0.count - 1)]
            }
        }
    }

    override func tearDownWithError() throws {
        origin?.stop()
        try super.tearDownWithError()
    }

    /// What the origin answers from now on, request after request (the last one again past the end).
    func script(_ list: ScriptedServer.Reply...) { replies.withLock { $0 = list } }
}
