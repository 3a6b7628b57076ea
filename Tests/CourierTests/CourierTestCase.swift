import CourierTestSupport
import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Base class for tests over real sockets: owns an in-process server on 127.0.0.1 port 0, a
/// manager, and a private temporary directory, and checks after each test that no task delegate
/// was left in the manager's table.
class CourierTestCase: XCTestCase {
    var server: TestServer!
    var manager: SessionManager!
    var directory: URL!

    /// Override to change the manager's configuration.
    func makeConfiguration() -> SessionManager.Configuration {
        var configuration = SessionManager.Configuration()
        configuration.urlSessionConfiguration.timeoutIntervalForRequest = 10
        configuration.postsNotifications = false
        configuration.progressInterval = .milliseconds(10)
        return configuration
    }

    override func setUpWithError() throws {
        try super.setUpWithError()
        server = try TestServer()
        // The directory first: a `makeConfiguration()` override may point the manager into it.
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        manager = SessionManager(configuration: makeConfiguration())
    }

    override func tearDownWithError() throws {
        if let manager {
            waitUntil("the task table is empty", timeout: 5) {
                manager.runningTaskCount == 0 && manager.queuedTaskCount == 0 && manager.core.lanes.requestCount == 0
            }
            manager.invalidate(cancelingTasks: true)
        }
        server?.stop()
        if let directory { try? FileManager.default.removeItem(at: directory) }
        manager = nil
        server = nil
        try super.tearDownWithError()
    }

    func request(_ pathAndQuery: String, method: String = "GET") -> URLRequest {
        var request = URLRequest(url: server.url(pathAndQuery))
        request.httpMethod = method
        return request
    }

    /// Starts work that calls back once, waits for it, and fails if it calls back twice.
    func wait<T: Sendable>(
        timeout: TimeInterval = 15, file: StaticString = #filePath, line: UInt = #line,
        _ start: (@escaping @Sendable (T) -> Void) -> Void
    ) -> T? {
        let box = Box<T>()
        let done = expectation(description: "completion")
        start { value in
            if box.append(value) == 1 { done.fulfill() }
        }
        wait(for: [done], timeout: timeout)
        // Leave room for a wrongful second completion to show up.
        Thread.sleep(forTimeInterval: 0.02)
        XCTAssertLessThanOrEqual(box.count, 1, "completion called more than once", file: file, line: line)
        return box.first
    }

    /// Runs a data task to completion.
    /// Fetches `path`, suspending and resuming the task once after its first body bytes; returns
    /// the task and its response.
    func fetchSuspendingOnce(_ path: String) -> (task: DataTask?, response: DataResponse<Data>?) {
        let box = Box<DataTask>()
        let response: DataResponse<Data>? = wait(timeout: 30) { finish in
            let task = manager.dataTask(with: request(path), completion: finish)
            box.append(task)
            task.resume()
            waitUntil("some bytes arrived") { task.metrics.bytesReceived > 0 }
            task.suspend()
            task.resume()
        }
        return (box.first, response)
    }

    func data(_ request: URLRequest, validation: Validation = .default) -> DataResponse<Data> {
        wait { finish in manager.dataTask(with: request, validation: validation, completion: finish).resume() }!
    }

    /// Polls `condition` until it holds or `timeout` passes (then fails).
    func waitUntil(
        _ what: String, timeout: TimeInterval = 10, file: StaticString = #filePath, line: UInt = #line,
        _ condition: () -> Bool
    ) {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() {
            if Date() > deadline { return XCTFail("timed out waiting until \(what)", file: file, line: line) }
            Thread.sleep(forTimeInterval: 0.005)
        }
    }

    /// Courier's side files (partial files, resume records, their temporaries) left in `directory`.
    func stagingFiles(in directory: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter {
            $0.hasPrefix(".") && $0.contains("courier")
        }.sorted()
    }
}
