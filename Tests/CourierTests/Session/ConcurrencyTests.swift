import CourierTestSupport
import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Races between tasks, cancellation, pausing and invalidation. CI also runs this class under
/// ThreadSanitizer (`swift test --sanitize=thread --filter ConcurrencyTests`).
final class ConcurrencyTests: CourierTestCase {
    func test500ConcurrentTasksWithRandomCancelsCompleteExactlyOnce() {
        let total = 500
        let completions = Box<Int>()
        let outcomes = Box<String>()
        var generator = SystemRandomNumberGenerator()
        var tasks: [DataTask] = []
        for index in 0..<total {
            let path = index % 3 == 0 ? "/bytes/20000?chunk=4096&chunk_delay_ms=1" : "/bytes/512"
            let task = manager.dataTask(with: request(path)) { response in
                completions.append(index)
                outcomes.append(response.error.map { "\($0.code)" } ?? "ok")
            }
            tasks.append(task)
        }
        let created = tasks
        DispatchQueue.concurrentPerform(iterations: total) { index in
            created[index].resume()
        }
        let cancelled = tasks.filter { _ in Bool.random(using: &generator) }
        DispatchQueue.concurrentPerform(iterations: cancelled.count) { index in
            usleep(UInt32.random(in: 0...3000))
            cancelled[index].cancel()
        }
        waitUntil("every task completes", timeout: 60) { completions.count >= total }
        Thread.sleep(forTimeInterval: 0.2)
        XCTAssertEqual(completions.count, total)
        XCTAssertEqual(Set(completions.all).count, total, "each task completed exactly once")
        XCTAssertTrue(Set(outcomes.all).isSubset(of: ["ok", "cancelled"]), "\(Set(outcomes.all))")
        XCTAssertTrue(tasks.allSatisfy { $0.state == .completed })
        waitUntil("the table is empty") { manager.runningTaskCount == 0 }
    }

    func testLifecycleCallsFromManyThreadsNeverCompleteTwice() {
        for round in 0..<20 {
            let completions = Counter()
            let task = manager.dataTask(with: request("/bytes/50000?seed=\(round)&chunk=4096&chunk_delay_ms=1")) { _ in
                completions.increment()
            }
            DispatchQueue.concurrentPerform(iterations: 40) { index in
                switch index % 4 {
                case 0: task.resume()
                case 1: task.suspend()
                case 2: task.resume()
                default: if index == 39 { task.cancel() }
                }
            }
            task.resume()
            waitUntil("round \(round) completes") { completions.count == 1 }
            Thread.sleep(forTimeInterval: 0.01)
            XCTAssertEqual(completions.count, 1)
        }
    }

    func testCancelOrPauseRacingWithTheFirstResumeAlwaysFinishes() {
        let rounds = 300
        let completions = Counter()
        let outcomes = Box<String>()
        for round in 0..<rounds {
            let task = manager.dataTask(with: request("/bytes/100?seed=\(round)")) { response in
                completions.increment()
                outcomes.append(response.error.map { "\($0.code)" } ?? "ok")
            }
            DispatchQueue.concurrentPerform(iterations: 2) { side in
                if side == 0 {
                    task.resume()
                } else if round % 2 == 0 {
                    task.cancel()
                } else {
                    task.suspend()
                    task.resume()
                }
            }
            task.resume()
        }
        waitUntil("every task completes", timeout: 30) { completions.count == rounds }
        XCTAssertTrue(Set(outcomes.all).isSubset(of: ["ok", "cancelled"]), "\(Set(outcomes.all))")
        waitUntil("the table is empty") { manager.runningTaskCount == 0 }
    }

    func testDownloadsWithDropsRetriesAndCancelsCompleteOnceAndLeaveNoStrayFiles() {
        let count = 40
        let content = TestServer.deterministicBytes(count: 120_000, seed: 5)
        server.addFile("shared.bin", data: content, etag: "\"v1\"")
        var policy = DownloadPolicy()
        policy.retry.initialDelay = .milliseconds(1)
        policy.retry.retryLimit = 10
        let outcomes = Box<String>()
        var tasks: [DownloadTask] = []
        for index in 0..<count {
            let destination = directory.appendingPathComponent("d\(index).bin")
            tasks.append(
                manager.downloadTask(
                    with: request("/files/shared.bin?close_after=30000&chunk=4096&chunk_delay_ms=1"),
                    to: .file(destination), policy: policy
                ) { response in
                    if let error = response.error {
                        outcomes.append(error.resumeData == nil ? "\(error.code)" : "\(error.code)+resume")
                    } else {
                        outcomes.append((try? Data(contentsOf: destination)) == content ? "ok" : "corrupt")
                    }
                })
        }
        let all = tasks
        DispatchQueue.concurrentPerform(iterations: count) { index in
            all[index].resume()
            switch index % 4 {
            case 1: usleep(UInt32.random(in: 0...20_000)); all[index].cancel()
            case 2: usleep(UInt32.random(in: 0...20_000)); all[index].cancel(producingResumeData: { _ in })
            default: break
            }
        }
        waitUntil("every download completes", timeout: 60) { outcomes.count == count }
        Thread.sleep(forTimeInterval: 0.1)
        XCTAssertEqual(outcomes.count, count, "each download completed exactly once")
        XCTAssertFalse(outcomes.all.contains("corrupt"))
        XCTAssertTrue(Set(outcomes.all).isSubset(of: ["ok", "cancelled", "cancelled+resume"]), "\(Set(outcomes.all))")
        // Only downloads cancelled with resume data may leave a partial file and record behind.
        let kept = outcomes.all.filter { $0 == "cancelled+resume" }.count
        XCTAssertLessThanOrEqual(stagingFiles(in: directory).count, kept * 2)
        waitUntil("the table is empty") { manager.runningTaskCount == 0 }
    }

    func testRetriesRacingWithCancelsCompleteExactlyOnce() {
        let count = 80
        var policy = RetryPolicy()
        policy.retryLimit = 3
        policy.initialDelay = .milliseconds(1)
        let outcomes = Box<String>()
        let tasks = (0..<count).map { index in
            manager.dataTask(with: request("/status/503?n=\(index)")) { response in
                outcomes.append(response.error.map { "\($0.code)" } ?? "ok")
            }.intercept(with: Interceptor(retriers: [policy]))
        }
        DispatchQueue.concurrentPerform(iterations: count) { index in
            tasks[index].resume()
            if index % 2 == 0 {
                usleep(UInt32.random(in: 0...5_000))
                tasks[index].cancel()
            }
        }
        waitUntil("every task completes", timeout: 60) { outcomes.count == count }
        Thread.sleep(forTimeInterval: 0.1)
        XCTAssertEqual(outcomes.count, count, "exactly once each")
        XCTAssertTrue(Set(outcomes.all).isSubset(of: ["unacceptableStatusCode", "cancelled"]), "\(Set(outcomes.all))")
        XCTAssertGreaterThanOrEqual(
            outcomes.all.filter { $0 == "unacceptableStatusCode" }.count, count / 2, "every task never cancelled ran out of retries")
        waitUntil("the table is empty") { manager.runningTaskCount == 0 }
    }

    func testInvalidationRacingWithTaskCreationNeverCrashes() {
        let completions = Counter()
        let created = Counter()
        let manager = manager!
        let url = server.url("/bytes/100")
        DispatchQueue.concurrentPerform(iterations: 64) { index in
            if index == 32 { manager.invalidate(cancelingTasks: true) }
            let task = manager.dataTask(with: URLRequest(url: url)) { _ in completions.increment() }
            created.increment()
            task.resume()
        }
        waitUntil("every task completes") { completions.count == created.count }
    }

    func testProgressAndStateReadsRaceSafelyWithTheTransfer() {
        let task = manager.dataTask(with: request("/bytes/500000?chunk=16384&chunk_delay_ms=1")) { _ in }
        task.resume()
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            while task.state != .completed {
                _ = task.downloadProgress.fractionCompleted
                _ = task.response
                _ = task.currentRequest
            }
        }
        XCTAssertEqual(task.downloadProgress.completedUnitCount, 500_000)
    }

    func testManyManagersCanBeCreatedUsedAndReleased() {
        let completions = Counter()
        let url = server.url("/get")
        DispatchQueue.concurrentPerform(iterations: 20) { _ in
            let local = SessionManager()
            let done = DispatchSemaphore(value: 0)
            local.dataTask(with: URLRequest(url: url)) { _ in
                completions.increment()
                done.signal()
            }.resume()
            done.wait()
        }
        XCTAssertEqual(completions.count, 20)
    }
}
