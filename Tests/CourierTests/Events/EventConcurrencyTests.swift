import CourierTestSupport
import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Monitors never hold up a transfer and cannot deadlock one: they run on the manager's event
/// queue, after the transfer's lock is released. Also run under ThreadSanitizer in CI.
final class EventConcurrencyTests: CourierTestCase {
    private let gate = DispatchSemaphore(value: 0)
    private let seen = Box<String>()
    private let calledBack = Counter()

    override func makeConfiguration() -> SessionManager.Configuration {
        var configuration = super.makeConfiguration()
        let gate = gate
        let seen = seen
        let calledBack = calledBack
        let blocking = name.contains("Blocks")
        configuration.eventMonitors = [
            ClosureEventMonitor(onEvent: { task, event in
                if blocking, case .created = event { gate.wait() }  // a monitor stuck on its first event
                // Calls back into the task from every event: state, metrics, requests.
                _ = task.state
                _ = task.currentRequest
                _ = (task as? DataTask)?.metrics.attempts.count
                if case .response = event, task.taskIdentifier % 3 == 0 {
                    task.cancel()
                    calledBack.increment()
                }
                seen.append(event.name)
            })
        ]
        return configuration
    }

    func testAMonitorThatBlocksDoesNotHoldUpTheTransfer() {
        // Given a monitor that blocks on the first event it gets
        // When a request runs
        let response = data(request("/bytes/200000"))
        // Then it completes while the monitor is still stuck, and no event was lost meanwhile
        XCTAssertEqual(response.data?.count, 200_000)
        XCTAssertEqual(seen.count, 0, "the monitor is still blocked")
        gate.signal()
        waitUntil("the events queued meanwhile are delivered") { seen.all.last == "completed" }
        XCTAssertEqual(seen.all, ["created", "resumed", "attempt", "response", "completed"])
    }

    func testMonitorsThatCallBackIntoTasksNeverDeadlockThem() {
        // Given a monitor that reads every task's state and cancels every third task from its
        // response event, and 60 tasks of every kind of life running at once
        let completions = Counter()
        let done = expectation(description: "all complete")
        done.expectedFulfillmentCount = 60
        for index in 0..<60 {
            let path: String
            switch index % 4 {
            case 0: path = "/redirect/2"
            case 1: path = "/bytes/50000?chunk=4096&chunk_delay_ms=1"
            case 2: path = "/status/503"
            default: path = "/get"
            }
            let task = manager.dataTask(with: request(path)) { _ in
                completions.increment()
                done.fulfill()
            }
            task.resume()
            if index % 5 == 0 {
                task.suspend()
                task.resume()
            }
        }
        // Then every task completes exactly once
        wait(for: [done], timeout: 60)
        XCTAssertEqual(completions.count, 60)
        waitUntil("every completion is reported to the monitor") { seen.all.filter { $0 == "completed" }.count == 60 }
        XCTAssertGreaterThan(calledBack.count, 0)
    }
}
