import CourierTestSupport
import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CourierSupport

/// At most `maximumRunningTasksPerHost` tasks run per host; the rest wait in order.
final class PerHostCapTests: CourierTestCase {
    func testSixteenInFlightUseAtMostFourConnections() {
        let total = 400
        let completions = Counter()
        let started = Counter()
        let peak = Locked(0)
        let tasks = Locked<[DataTask]>([])
        let manager = manager!
        let server = server!
        let make = { @Sendable (index: Int) -> DataTask in
            manager.dataTask(with: URLRequest(url: server.url("/bytes/1024?seed=\(index)"))) { _ in
                completions.increment()
                // A sliding window of 16 in flight, like a busy service: each completion starts the next.
                let next = started.increment() - 1
                if next < total { tasks.withLock { $0[next] }.resume() }
            }
        }
        tasks.withLock { list in list = (0..<total).map(make) }
        // Count the first 16 as started before any can complete and claim the next index.
        for _ in 0..<16 { started.increment() }
        for index in 0..<16 { tasks.withLock { $0[index] }.resume() }
        let deadline = Date().addingTimeInterval(20)
        while completions.count < total {
            if Date() > deadline {
                return XCTFail(
                    "stuck: \(completions.count) done, \(started.count) started, running \(manager.runningTaskCount), queued \(manager.queuedTaskCount), states \(Dictionary(grouping: tasks.withLock { $0 }, by: { $0.state }).mapValues(\.count))"
                )
            }
            let running = manager.runningTaskCount
            peak.withLock { $0 = max($0, running) }
            Thread.sleep(forTimeInterval: 0.0005)
        }
        XCTAssertLessThanOrEqual(peak.withLock { $0 }, 4)
        XCTAssertLessThanOrEqual(server.connectionCount, 4, "connections are reused, not churned")
        XCTAssertEqual(server.requests.count, total)
    }

    func testWaitingTasksStartInTheOrderTheyWereResumed() {
        var configuration = makeConfiguration()
        configuration.maximumRunningTasksPerHost = 1
        let serial = SessionManager(configuration: configuration)
        let done = Counter()
        for index in 0..<8 {
            serial.dataTask(with: request("/delay/20?order=\(index)")) { _ in done.increment() }.resume()
        }
        // One starts at once, seven wait their turn; none runs beside another.
        XCTAssertEqual(serial.queuedTaskCount + serial.runningTaskCount, 8)
        XCTAssertLessThanOrEqual(serial.runningTaskCount, 1)
        waitUntil("all complete") { done.count == 8 }
        XCTAssertEqual(server.requests.map { $0.query["order"] }, (0..<8).map { "\($0)" })
    }

    func testCancellingAWaitingTaskCompletesItWithoutSendingIt() {
        var configuration = makeConfiguration()
        configuration.maximumRunningTasksPerHost = 1
        let serial = SessionManager(configuration: configuration)
        let blocker = serial.dataTask(with: request("/drip?numbytes=10&duration_ms=300")) { _ in }
        blocker.resume()
        waitUntil("the blocker runs") { serial.runningTaskCount == 1 }
        let response: DataResponse<Data>? = wait { finish in
            let waiting = serial.dataTask(with: request("/get?queued=1"), completion: finish)
            waiting.resume()
            XCTAssertEqual(serial.queuedTaskCount, 1)
            waiting.cancel()
        }
        XCTAssertEqual(response?.error?.code, .cancelled)
        waitUntil("the blocker finishes") { blocker.state == .completed }
        XCTAssertFalse(server.requests.contains { $0.query["queued"] != nil })
        XCTAssertEqual(serial.queuedTaskCount, 0)
    }

    func testInvalidationCompletesWaitingTasks() {
        var configuration = makeConfiguration()
        configuration.maximumRunningTasksPerHost = 1
        let serial = SessionManager(configuration: configuration)
        let results = Box<CourierError.Code?>()
        for _ in 0..<4 {
            serial.dataTask(with: request("/never-answer")) { results.append($0.error?.code) }.resume()
        }
        waitUntil("one runs, three wait") { serial.queuedTaskCount == 3 && server.requests.count == 1 }
        serial.invalidate(cancelingTasks: true)
        waitUntil("every task completes") { results.count == 4 }
        XCTAssertEqual(Set(results.all.compactMap { $0 }), [.sessionInvalidated])
        XCTAssertEqual(serial.queuedTaskCount, 0)
    }

    func testAnotherHostIsNotHeldUp() throws {
        let other = try TestServer()
        defer { other.stop() }
        var configuration = makeConfiguration()
        configuration.maximumRunningTasksPerHost = 1
        let serial = SessionManager(configuration: configuration)
        serial.dataTask(with: request("/never-answer")) { _ in }.resume()
        let response: DataResponse<Data>? = wait { finish in
            serial.dataTask(with: URLRequest(url: other.url("/get")), completion: finish).resume()
        }
        XCTAssertNil(response?.error)
        serial.invalidate(cancelingTasks: true)
    }

    func testACapAboveURLSessionsDefaultHasEveryTaskAtTheServerAtOnce() {
        // Given a cap of 16, above URLSession's own default of 6 connections per host
        var configuration = makeConfiguration()
        configuration.maximumRunningTasksPerHost = 16
        let wide = SessionManager(configuration: configuration)
        defer { wide.invalidate(cancelingTasks: true) }

        // When 16 slow requests (1.2 s each, in paced writes) start together
        let results = Box<CourierError.Code?>()
        for index in 0..<16 {
            wide.dataTask(with: request("/bytes/24576?seed=\(index)&chunk=1024&chunk_delay_ms=50")) {
                results.append($0.error?.code)
            }.resume()
        }
        waitUntil("every request completes", timeout: 20) { results.count == 16 }

        // Then all 16 were at the server at once: none waited inside URLSession, where its headers
        // (a bearer token an interceptor added) would have aged before it was sent
        XCTAssertEqual(results.all.compactMap { $0 }, [])
        XCTAssertEqual(server.traffic(for: "/bytes/24576").peakInFlight, 16)
        XCTAssertEqual(wide.session.configuration.httpMaximumConnectionsPerHost, 16)
    }

    func testNoCapLetsEveryTaskRun() {
        var configuration = makeConfiguration()
        configuration.maximumRunningTasksPerHost = nil
        let uncapped = SessionManager(configuration: configuration)
        for _ in 0..<8 { uncapped.dataTask(with: request("/delay/300")) { _ in }.resume() }
        XCTAssertEqual(uncapped.queuedTaskCount + uncapped.runningTaskCount, 8)
        waitUntil("all eight run at once") { uncapped.runningTaskCount == 8 }
        XCTAssertEqual(uncapped.queuedTaskCount, 0)
        uncapped.invalidate(cancelingTasks: true)
    }
}
