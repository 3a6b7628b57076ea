import CourierTestSupport
import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

final class SessionManagerTests: CourierTestCase {
    func testDataTaskDeliversTheExactBodyAndResponse() throws {
        let response = data(request("/bytes/100000?seed=7"))
        XCTAssertNil(response.error)
        XCTAssertEqual(response.value, TestServer.deterministicBytes(count: 100_000, seed: 7))
        XCTAssertEqual(response.response?.statusCode, 200)
        XCTAssertEqual(response.request?.url, server.url("/bytes/100000?seed=7"))
    }

    func testTaskIsCreatedWithoutStartingAndResumeStartsIt() throws {
        let finished = Counter()
        let task = manager.dataTask(with: request("/get")) { _ in finished.increment() }
        XCTAssertEqual(task.state, .initialized)
        XCTAssertGreaterThan(task.taskIdentifier, 0)
        Thread.sleep(forTimeInterval: 0.2)
        XCTAssertTrue(server.requests.isEmpty, "nothing is sent before resume()")
        XCTAssertEqual(finished.count, 0)
        task.resume()
        waitUntil("the task completes") { finished.count == 1 }
        XCTAssertEqual(task.state, .completed)
        XCTAssertEqual(server.requests.count, 1)
    }

    func testTaskIdentifiersAreUniqueWithinAManager() {
        let ids = (0..<20).map { _ in manager.dataTask(with: request("/get")) { _ in }.taskIdentifier }
        XCTAssertEqual(Set(ids).count, 20)
    }

    func testCompletionRunsOffTheMainThreadOnTheManagersQueue() throws {
        let onMain = Box<Bool>()
        _ = wait { finish in
            manager.dataTask(with: request("/get")) { _ in
                onMain.append(Thread.isMainThread)
                finish(())
            }.resume()
        }
        XCTAssertEqual(onMain.all, [false])
    }

    func testCompletionRunsOnTheConfiguredQueue() throws {
        let key = DispatchSpecificKey<String>()
        let queue = DispatchQueue(label: "test.completion")
        queue.setSpecific(key: key, value: "configured")
        var configuration = makeConfiguration()
        configuration.completionQueue = queue
        let custom = SessionManager(configuration: configuration)
        let seen = Box<String?>()
        _ = wait { finish in
            custom.dataTask(with: request("/get")) { _ in
                seen.append(DispatchQueue.getSpecific(key: key))
                finish(())
            }.resume()
        }
        XCTAssertEqual(seen.first, "configured")
    }

    func testPerTaskQueueOverridesTheManagersQueue() throws {
        let key = DispatchSpecificKey<String>()
        let queue = DispatchQueue(label: "test.per-task")
        queue.setSpecific(key: key, value: "per-task")
        let seen = Box<String?>()
        _ = wait { finish in
            manager.dataTask(with: request("/get"), queue: .on(queue)) { _ in
                seen.append(DispatchQueue.getSpecific(key: key))
                finish(())
            }.resume()
        }
        XCTAssertEqual(seen.first, "per-task")
    }

    func testCompletionGroupCoversEveryCompletion() throws {
        let group = DispatchGroup()
        var configuration = makeConfiguration()
        configuration.completionGroup = group
        let grouped = SessionManager(configuration: configuration)
        let finished = Counter()
        for _ in 0..<10 {
            grouped.dataTask(with: request("/get")) { _ in
                Thread.sleep(forTimeInterval: 0.01)
                finished.increment()
            }.resume()
        }
        waitUntil("tasks are dispatched") { grouped.runningTaskCount == 0 && finished.count > 0 }
        XCTAssertEqual(group.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(finished.count, 10, "the group is left only after every completion ran")
    }

    func testTableIsEmptyWhenNothingRuns() {
        XCTAssertEqual(manager.runningTaskCount, 0)
        let task = manager.dataTask(with: request("/drip?numbytes=10&duration_ms=300")) { _ in }
        XCTAssertEqual(manager.runningTaskCount, 0, "a task enters the table when it starts")
        task.resume()
        XCTAssertEqual(manager.runningTaskCount + manager.queuedTaskCount, 1, "counted from resume() on")
        waitUntil("the task starts") { manager.runningTaskCount == 1 }
        waitUntil("the task completes") { task.state == .completed }
        waitUntil("the table empties") { manager.runningTaskCount == 0 }
    }

    func testRequestTimeoutIsATypedErrorNamingTheURL() throws {
        var request = request("/never-answer")
        request.timeoutInterval = 1
        let response = data(request)
        XCTAssertEqual(response.error?.code, .timedOut)
        XCTAssertEqual(response.error?.url, request.url, "Linux timeouts carry no URL; Courier adds it")
    }

    func testConnectionRefusedIsAConnectionRefusedTransportError() throws {
        let closed = try TestServer()
        let url = closed.url("/get")
        closed.stop()
        let response = data(URLRequest(url: url))
        XCTAssertEqual(response.error?.code, .connectionRefused)
        XCTAssertNil(response.response)
    }

    func testUnsupportedSchemeIsAnInvalidRequest() {
        let response = data(URLRequest(url: URL(string: "gopher://127.0.0.1/x")!))
        XCTAssertEqual(response.error?.code, .invalidRequest)
    }

    func testCookiesAreNeitherStoredNorSentByDefault() {
        _ = data(request("/cookies/set?flavour=oat"))
        _ = data(request("/cookies"))
        XCTAssertNil(server.requests.last?.header("Cookie"))
    }

    func testCookiesWorkWhenEnabled() {
        var configuration = makeConfiguration()
        configuration.enableCookies()
        let cookieManager = SessionManager(configuration: configuration)
        _ = wait { finish in cookieManager.dataTask(with: request("/cookies/set?flavour=oat"), completion: finish).resume() }
        _ = wait { finish in cookieManager.dataTask(with: request("/cookies"), completion: finish).resume() }
        XCTAssertEqual(server.requests.last?.header("Cookie"), "flavour=oat")
    }
}

final class SessionLifecycleTests: CourierTestCase {
    func testTaskCreatedAfterInvalidationCompletesAtOnceWithATypedError() {
        manager.invalidate()
        XCTAssertTrue(manager.isInvalidated)
        let response: DataResponse<Data>? = wait { finish in
            _ = manager.dataTask(with: request("/get"), completion: finish)  // never resumed
        }
        XCTAssertEqual(response?.error?.code, .sessionInvalidated)
        XCTAssertTrue(server.requests.isEmpty)
    }

    func testResumeAfterInvalidationFailsInsteadOfCrashing() {
        let finished = Box<DataResponse<Data>>()
        let task = manager.dataTask(with: request("/get")) { finished.append($0) }
        manager.invalidate()
        task.resume()
        waitUntil("the task completes") { finished.count == 1 }
        XCTAssertEqual(finished.first?.error?.code, .sessionInvalidated)
    }

    func testInvalidateCancelingTasksFailsRunningTasksWithSessionInvalidated() {
        let response: DataResponse<Data>? = wait { finish in
            manager.dataTask(with: request("/never-answer"), completion: finish).resume()
            waitUntil("the server has the request") { server.requests.count == 1 }
            manager.invalidate(cancelingTasks: true)
        }
        XCTAssertEqual(response?.error?.code, .sessionInvalidated)
    }

    func testInvalidateWithoutCancelingLetsRunningTasksFinish() {
        let response: DataResponse<Data>? = wait { finish in
            manager.dataTask(with: request("/drip?numbytes=100&duration_ms=300"), completion: finish).resume()
            manager.invalidate(cancelingTasks: false)
        }
        XCTAssertNil(response?.error)
        XCTAssertEqual(response?.value?.count, 100)
    }

    func testInvalidationIsReportedToMonitorsAndNotificationCenter() {
        let invalidated = expectation(description: "monitor")
        let notified = expectation(forNotification: .courierSessionDidInvalidate, object: nil)
        var configuration = makeConfiguration()
        configuration.postsNotifications = true
        configuration.eventMonitors = [ClosureEventMonitor(onInvalidate: { _ in invalidated.fulfill() })]
        let observed = SessionManager(configuration: configuration)
        observed.invalidate()
        wait(for: [invalidated, notified], timeout: 5)
    }

    func testReleasedManagerIsDeallocated() {
        weak var weakManager: SessionManager?
        weak var weakSession: URLSession?
        do {
            let local = SessionManager(configuration: makeConfiguration())
            weakManager = local
            weakSession = local.session
            _ = wait { finish in local.dataTask(with: request("/get"), completion: finish).resume() }
        }
        XCTAssertNil(weakManager, "the manager is freed once released")
        waitUntil("the session is freed after invalidation") { weakSession == nil }
    }

    func testReleasingTheManagerCancelsItsRunningTasks() {
        let response: DataResponse<Data>? = wait { finish in
            var local: SessionManager? = SessionManager(configuration: makeConfiguration())
            local!.dataTask(with: request("/never-answer"), completion: finish).resume()
            waitUntil("the server has the request") { server.requests.count == 1 }
            local = nil
        }
        XCTAssertEqual(response?.error?.code, .sessionInvalidated)
    }
}
