import CourierTestSupport
import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Courier makes and resumes URLSession tasks on the manager's own serial call queue, so neither
/// the caller of `resume()` nor the manager's callbacks wait for URLSession's work queue. Tasks
/// therefore start a moment after `resume()`; cancelling, pausing and invalidating in that moment
/// must still end every task exactly once.
final class CallQueueTests: CourierTestCase {
    /// FoundationNetworking asks for a streamed upload body on its work queue, so a stream factory
    /// that waits holds that queue, as libcurl does while transfers run.
    func testResumeReturnsWhileURLSessionsWorkQueueIsBusy() {
        let release = DispatchGroup()
        release.enter()
        let upload = holdURLSessionsWorkQueue(until: release)

        let response = Box<DataResponse<Data>>()
        let started = Date()
        manager.dataTask(with: request("/bytes/100?seed=1")) { response.append($0) }.resume()
        // Waiting for the work queue would last until the factory gives up (20 s).
        XCTAssertLessThan(Date().timeIntervalSince(started), 5, "resume() waited for URLSession's work queue")
        XCTAssertEqual(response.count, 0)

        release.leave()
        waitUntil("the task completes") { response.count == 1 }
        XCTAssertEqual(response.first?.value, TestServer.deterministicBytes(count: 100, seed: 1))
        waitUntil("the upload completes") { upload.state == .completed }
    }

    /// Holds URLSession's work queue, and so the call queue's next `dataTask(with:)`, until
    /// `release` is left (a group, so that every later request for the body passes at once).
    private func holdURLSessionsWorkQueue(until release: DispatchGroup) -> UploadTask {
        let entered = DispatchSemaphore(value: 0)
        let upload = manager.uploadTask(
            with: request("/anything", method: "POST"),
            from: .stream(length: 1) {
                entered.signal()
                _ = release.wait(timeout: .now() + 20)
                return InputStream(data: Data("x".utf8))
            }
        ) { _ in }
        upload.resume()
        XCTAssertEqual(entered.wait(timeout: .now() + 10), .success, "URLSession asked for the body")
        return upload
    }

    func testPausedAndResumedBeforeItStartedSendsOneRequest() {
        let release = DispatchGroup()
        release.enter()
        let upload = holdURLSessionsWorkQueue(until: release)
        let response: DataResponse<Data>? = wait { finish in
            let task = manager.dataTask(with: request("/bytes/2048?seed=5&paused=1"), completion: finish)
            let started = Date()
            task.resume()  // its attempt waits on the call queue
            task.suspend()
            task.resume()  // a second attempt: only this one may start
            XCTAssertLessThan(Date().timeIntervalSince(started), 5, "pausing waited for URLSession's work queue")
            release.leave()
        }
        XCTAssertEqual(response?.value, TestServer.deterministicBytes(count: 2048, seed: 5))
        XCTAssertEqual(server.requests.filter { $0.query["paused"] != nil }.count, 1)
        waitUntil("the upload completes") { upload.state == .completed }
    }

    func testCancelRightAfterResumeCompletesEachTaskOnceWithCancelled() {
        let codes = Box<CourierError.Code?>()
        for index in 0..<50 {
            // A slow answer: on a loaded machine a quick one can complete while this thread is
            // descheduled between resume() and cancel(), and a completed task cannot be cancelled.
            let task = manager.dataTask(with: request("/delay/300?index=\(index)")) { codes.append($0.error?.code) }
            task.resume()
            task.cancel()
        }
        waitUntil("every task completes") { codes.count == 50 }
        Thread.sleep(forTimeInterval: 0.1)  // room for a wrongful second completion
        XCTAssertEqual(codes.count, 50)
        XCTAssertEqual(Set(codes.all), [.cancelled])
    }

    func testPauseRightAfterResumeThenResumeDeliversTheBodyOnce() {
        for seed in 0..<10 {
            let response: DataResponse<Data>? = wait { finish in
                let task = manager.dataTask(with: request("/bytes/4096?seed=\(seed)"), completion: finish)
                task.resume()
                task.suspend()
                task.resume()
            }
            XCTAssertEqual(response?.value, TestServer.deterministicBytes(count: 4096, seed: UInt64(seed)))
        }
    }

    func testInvalidateCancelingRightAfterResumeEndsEveryTaskOnce() {
        let local = SessionManager(configuration: makeConfiguration())
        let codes = Box<CourierError.Code?>()
        for _ in 0..<20 {
            local.dataTask(with: request("/delay/200")) { codes.append($0.error?.code) }.resume()
        }
        local.invalidate(cancelingTasks: true)
        XCTAssertTrue(local.isInvalidated)
        waitUntil("every task completes") { codes.count == 20 }
        Thread.sleep(forTimeInterval: 0.1)
        XCTAssertEqual(codes.count, 20)
        XCTAssertEqual(Set(codes.all), [.sessionInvalidated])
        XCTAssertEqual(local.runningTaskCount + local.queuedTaskCount, 0)
    }

    func testTasksResumedBeforeAGracefulInvalidationAllFinish() {
        var configuration = makeConfiguration()
        configuration.maximumRunningTasksPerHost = 2  // most of them are still queued
        let local = SessionManager(configuration: configuration)
        let bodies = Box<Int>()
        for seed in 0..<12 {
            local.dataTask(with: request("/bytes/1000?seed=\(seed)")) { bodies.append($0.value?.count ?? -1) }.resume()
        }
        local.invalidate()
        let late = wait { finish in local.dataTask(with: request("/get"), completion: finish).resume() }
        XCTAssertEqual(late?.error?.code, .sessionInvalidated, "a task resumed after invalidate() fails")
        waitUntil("every task completes") { bodies.count == 12 }
        XCTAssertEqual(bodies.all, Array(repeating: 1000, count: 12))
    }
}
