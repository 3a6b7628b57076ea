import CourierTestServer
import CourierTestSupport
import XCTest

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The manager's live tasks as a whole: `allTasks` and `cancelAllTasks`, over real sockets, with
/// tasks in every phase a service meets (running, paused, waiting for an adapter).
final class AllTasksTests: CourierTestCase {
    /// An adapter that never answers until the test lets it (a token refresh that hangs).
    private final class HeldAdapter: RequestAdapter {
        let held = Box<@Sendable (Result<URLRequest, any Error>) -> Void>()
        func adapt(_ request: URLRequest, attempt: Int, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
            held.append(completion)
        }
    }

    func testAllTasksShowsEveryResumedUnfinishedTaskAndCancelAllEndsThemAll() throws {
        // Given four tasks: one never resumed, one waiting for its answer, one download paused
        // after its first bytes, and one waiting for an adapter that does not answer
        let results = Box<String>()
        let idle = manager.dataTask(with: request("/get")) { _ in results.append("idle") }
        let waiting = manager.dataTask(with: request("/never-answer")) { results.append("waiting \($0.error?.code.description ?? "ok")") }
        let destination = directory.appendingPathComponent("paused.bin")
        let paused = manager.downloadTask(with: request("/bytes/400000?chunk=8192&chunk_delay_ms=10"), to: .file(destination)) {
            results.append("paused \($0.error?.code.description ?? "ok")")
        }
        let adapter = HeldAdapter()
        let adapting = manager.dataTask(with: request("/get")) { results.append("adapting \($0.error?.code.description ?? "ok")") }
            .intercept(with: Interceptor(adapters: [adapter]))
        waiting.resume()
        paused.resume()
        adapting.resume()
        waitUntil("the download has bytes") { paused.downloadProgress.completedUnitCount > 0 }
        paused.suspend()
        waitUntil("the adapter holds the request") { adapter.held.count == 1 }
        waitUntil("the server has the first request") { server.requests.contains { $0.path == "/never-answer" } }
        // When the live tasks are listed
        let listed = manager.allTasks.map(\.taskIdentifier)
        // Then the three resumed ones are, in identifier order, and the one never resumed is not
        XCTAssertEqual(listed, [waiting.taskIdentifier, paused.taskIdentifier, adapting.taskIdentifier])
        XCTAssertFalse(listed.contains(idle.taskIdentifier))
        XCTAssertEqual(manager.allTasks.map(\.state), [.running, .suspended, .running])
        // When every task is cancelled
        let ended = expectation(description: "cancelAllTasks completes")
        manager.cancelAllTasks { resumeData in
            XCTAssertEqual(resumeData.count, 0)
            ended.fulfill()
        }
        wait(for: [ended], timeout: 10)
        // Then each completed once, cancelled, and none is live any more
        waitUntil("every completion arrived") { results.count == 3 }
        XCTAssertEqual(Set(results.all), ["waiting cancelled", "paused cancelled", "adapting cancelled"])
        XCTAssertEqual(manager.allTasks.count, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path))
        // And an adapter answering late changes nothing
        adapter.held.first?(.success(request("/get")))
        Thread.sleep(forTimeInterval: 0.1)
        XCTAssertEqual(results.count, 3)
        // And the manager still works
        XCTAssertNil(data(request("/get")).error)
        idle.cancel()
    }

    func testCancelAllProducingResumeDataHandsBackEachDownloadsResumeDataAndBothContinue() async throws {
        // Given two slow downloads under way
        let paths = ["/bytes/300000?seed=1&chunk=8192&chunk_delay_ms=10", "/bytes/300000?seed=2&chunk=8192&chunk_delay_ms=10"]
        let errors = Box<CourierError>()
        let tasks = paths.enumerated().map { index, path in
            manager.downloadTask(with: request(path), to: .file(directory.appendingPathComponent("\(index).bin"))) {
                if let error = $0.error { errors.append(error) }
            }
        }
        for task in tasks { task.resume() }
        waitUntil("both have bytes") { tasks.allSatisfy { $0.downloadProgress.completedUnitCount > 0 } }
        // When everything is cancelled, keeping what the downloads hold
        let resumeData = await manager.cancelAllTasks(producingResumeData: true)
        // Then each download's resume data comes back under its identifier, as its own error carries it
        XCTAssertEqual(Set(resumeData.keys), Set(tasks.map(\.taskIdentifier)))
        waitUntil("both completions arrived") { errors.count == 2 }
        XCTAssertEqual(Set(errors.all.map(\.code)), [.cancelled])
        for error in errors.all { XCTAssertNotNil(error.resumeData) }
        // And each continues from its bytes, with Range, into the exact file
        for (index, task) in tasks.enumerated() {
            guard let data = resumeData[task.taskIdentifier] else { continue }
            XCTAssertGreaterThan(data.bytesOnDisk, 0)
            let destination = directory.appendingPathComponent("\(index).bin")
            let report = wait { finish in
                manager.downloadTask(resumingFrom: data, to: .file(destination), completion: finish).resume()
            }
            XCTAssertNil(report?.error)
            XCTAssertEqual(try Data(contentsOf: destination), TestServer.deterministicBytes(count: 300_000, seed: UInt64(index + 1)))
        }
        XCTAssertEqual(server.requests.filter { $0.header("Range") != nil }.count, 2)
    }

    func testInvalidateCancelingTasksEndsATaskWaitingForItsAdapter() {
        // Given a task whose adapter never answers
        let adapter = HeldAdapter()
        let response: DataResponse<Data>? = wait { finish in
            manager.dataTask(with: request("/get"), completion: finish).intercept(with: Interceptor(adapters: [adapter])).resume()
            waitUntil("the adapter holds the request") { adapter.held.count == 1 }
            // When the manager is invalidated, cancelling its tasks
            manager.invalidate(cancelingTasks: true)
        }
        // Then the task ends at once, sessionInvalidated, and nothing was sent
        XCTAssertEqual(response?.error?.code, .sessionInvalidated)
        XCTAssertTrue(server.requests.isEmpty)
    }
}
