import CourierTestSupport
import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

final class EventTests: CourierTestCase {
    private let events = Box<String>()
    private let completions = Box<TaskCompletionEvent>()

    override func makeConfiguration() -> SessionManager.Configuration {
        var configuration = super.makeConfiguration()
        let events = events
        let completions = completions
        configuration.eventMonitors = [
            ClosureEventMonitor(
                onResume: { _ in events.append("resume") }, onSuspend: { _ in events.append("suspend") },
                onComplete: { _, event in
                    events.append("complete")
                    completions.append(event)
                })
        ]
        configuration.postsNotifications = true
        return configuration
    }

    func testMonitorSeesResumeSuspendAndOneCompletionWithTheValue() {
        let response: DataResponse<JSONValue>? = wait { finish in
            let task = manager.dataTask(with: request("/bytes/100000?chunk=8192&chunk_delay_ms=5"), serializer: .data) { _ in }
            task.resume()
            task.suspend()
            task.resume()
            waitUntil("it completes") { task.state == .completed }
            manager.dataTask(with: request("/json"), serializer: .json, completion: finish).resume()
        }
        XCTAssertNotNil(response?.value)
        waitUntil("both completions are reported") { completions.count == 2 }
        XCTAssertEqual(Array(events.all.prefix(4)), ["resume", "suspend", "resume", "complete"])
        let json = completions.all.last
        XCTAssertNotNil(json?.value as? JSONValue)
        XCTAssertNotNil(json?.data)
        XCTAssertEqual(json?.response?.statusCode, 200)
        XCTAssertNil(json?.error)
    }

    func testCompletionEventCarriesTheError() {
        _ = data(request("/status/418"))
        waitUntil("reported") { completions.count == 1 }
        XCTAssertEqual(completions.first?.error?.statusCode, 418)
    }

    func testNotificationsArePostedForResumeAndCompletion() {
        let task = manager.dataTask(with: request("/get")) { _ in }
        let resumed = expectation(forNotification: .courierTaskDidResume, object: task)
        let completed = expectation(forNotification: .courierTaskDidComplete, object: task) { notification in
            let info = notification.userInfo ?? [:]
            return (info[CourierNotificationKey.response] as? HTTPURLResponse)?.statusCode == 200
                && info[CourierNotificationKey.responseData] is Data && info[CourierNotificationKey.error] == nil
        }
        task.resume()
        wait(for: [resumed, completed], timeout: 10)
    }

    func testSuspendNotificationIsPosted() {
        let task = manager.dataTask(with: request("/bytes/100000?chunk=8192&chunk_delay_ms=10")) { _ in }
        let suspended = expectation(forNotification: .courierTaskDidSuspend, object: task)
        task.resume()
        task.suspend()
        wait(for: [suspended], timeout: 5)
        task.cancel()
    }

    func testDownloadCompletionNotificationNamesThePublishedFile() {
        let destination = directory.appendingPathComponent("notified.bin")
        let task = manager.downloadTask(with: request("/bytes/10"), to: .file(destination)) { _ in }
        let completed = expectation(forNotification: .courierTaskDidComplete, object: task) { notification in
            (notification.userInfo?[CourierNotificationKey.fileURL] as? URL) == destination
        }
        task.resume()
        wait(for: [completed], timeout: 10)
    }
}
