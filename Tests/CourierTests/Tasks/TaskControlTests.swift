import CourierTestSupport
import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Cancel, Courier's own pause/resume, and the lifecycle over real transfers.
final class TaskControlTests: CourierTestCase {
    /// 400 KB in 8 KB writes every 10 ms: about half a second, slow enough to pause mid-body.
    private let slowPath = "/bytes/400000?seed=3&chunk=8192&chunk_delay_ms=10"
    private var slowBody: Data { TestServer.deterministicBytes(count: 400_000, seed: 3) }

    func testCancelBeforeResumeCompletesOnceWithCancelledAndSendsNothing() {
        let response: DataResponse<Data>? = wait { finish in
            manager.dataTask(with: request("/get"), completion: finish).cancel()
        }
        XCTAssertEqual(response?.error?.code, .cancelled)
        XCTAssertTrue(response?.error?.isCancellation ?? false)
        Thread.sleep(forTimeInterval: 0.1)
        XCTAssertTrue(server.requests.isEmpty)
    }

    func testCancelDuringTheTransferCompletesWithCancelled() {
        let task = Box<DataTask>()
        let response: DataResponse<Data>? = wait { finish in
            let created = manager.dataTask(with: request(slowPath), completion: finish)
            task.append(created)
            created.resume()
            waitUntil("bytes arrive") { created.downloadProgress.completedUnitCount > 0 }
            created.cancel()
            created.cancel()  // repeated cancels are harmless
        }
        XCTAssertEqual(response?.error?.code, .cancelled)
        XCTAssertEqual(task.first?.state, .completed)
    }

    func testResumeAfterCompletionIsHarmless() {
        let finished = Counter()
        let task = manager.dataTask(with: request("/get")) { _ in finished.increment() }
        task.resume()
        waitUntil("completion") { finished.count == 1 }
        task.resume()
        task.suspend()
        task.cancel()
        Thread.sleep(forTimeInterval: 0.1)
        XCTAssertEqual(finished.count, 1)
        XCTAssertEqual(server.requests.count, 1)
    }

    func testSuspendStopsTheTransferAndResumeContinuesWithRangeWithoutDuplicatingBytes() {
        let states = Box<TaskLifecycle.State>()
        let response: DataResponse<Data>? = wait { finish in
            let task = manager.dataTask(with: request(slowPath), completion: finish)
            task.resume()
            states.append(task.state)
            waitUntil("some bytes arrive") { task.downloadProgress.completedUnitCount >= 50_000 }
            task.suspend()
            states.append(task.state)
            let heldAtPause = task.downloadProgress.completedUnitCount
            Thread.sleep(forTimeInterval: 0.15)
            XCTAssertEqual(task.downloadProgress.completedUnitCount, heldAtPause, "no bytes while paused")
            task.resume()
            states.append(task.state)
        }
        XCTAssertEqual(states.all, [.running, .suspended, .running])
        XCTAssertNil(response?.error)
        XCTAssertEqual(response?.value, slowBody, "every byte exactly once")
        let requests = server.requests
        XCTAssertEqual(requests.count, 2)
        let range = requests.last?.header("Range")
        XCTAssertNotNil(range)
        XCTAssertTrue(range?.hasPrefix("bytes=") ?? false)
        XCTAssertEqual(requests.last?.header("If-Range"), "\"bytes-400000-3\"")
        XCTAssertEqual(requests.last?.header("Accept-Encoding"), "identity")
        XCTAssertEqual(response?.response?.statusCode, 206)
    }

    func testRepeatedPausesNeverDuplicateBytes() {
        let response: DataResponse<Data>? = wait(timeout: 30) { finish in
            let task = manager.dataTask(with: request(slowPath), completion: finish)
            task.resume()
            for step in 1...4 {
                waitUntil("progress \(step)") {
                    task.downloadProgress.completedUnitCount >= Int64(step * 60_000) || task.state == .completed
                }
                task.suspend()
                task.resume()
            }
        }
        XCTAssertNil(response?.error)
        XCTAssertEqual(response?.value, slowBody)
    }

    /// Runs `path`, pauses once 30 KB have arrived, resumes, and returns the outcome.
    private func pausedOnce(_ path: String) -> DataResponse<Data>? {
        wait { finish in
            let task = manager.dataTask(with: request(path), completion: finish)
            task.resume()
            waitUntil("some bytes arrive") { task.downloadProgress.completedUnitCount >= 30_000 }
            task.suspend()
            task.resume()
        }
    }

    func testResumeWithoutValidatorRestartsCleanlyFromZero() {
        let response = pausedOnce("/bytes/200000?seed=4&chunk=8192&chunk_delay_ms=10&no_validators=1")
        XCTAssertEqual(response?.value, TestServer.deterministicBytes(count: 200_000, seed: 4))
        XCTAssertNil(server.requests.last?.header("Range"), "no validator: Range would be unsafe")
        XCTAssertEqual(response?.response?.statusCode, 200)
    }

    func testResumeWhenTheServerIgnoresRangeStartsOverInsteadOfAppending() {
        let response = pausedOnce("/bytes/200000?seed=5&chunk=8192&chunk_delay_ms=10&ignore_range=1")
        XCTAssertNotNil(server.requests.last?.header("Range"))
        XCTAssertEqual(response?.response?.statusCode, 200)
        XCTAssertEqual(response?.value, TestServer.deterministicBytes(count: 200_000, seed: 5), "200 replaces, never appends")
    }

    func testResumeWithAWeakETagRestartsWithoutRange() {
        let response = pausedOnce("/bytes/200000?seed=6&chunk=8192&chunk_delay_ms=10&weak_etag=1")
        XCTAssertEqual(response?.value, TestServer.deterministicBytes(count: 200_000, seed: 6))
        XCTAssertEqual(server.requests.count, 2)
        XCTAssertNotEqual(server.requests.last?.header("If-Range")?.hasPrefix("W/"), true, "weak ETags are not validators")
    }

    func testSuspendedTaskCanBeCancelled() {
        let response: DataResponse<Data>? = wait { finish in
            let task = manager.dataTask(with: request(slowPath), completion: finish)
            task.resume()
            waitUntil("bytes arrive") { task.downloadProgress.completedUnitCount > 0 }
            task.suspend()
            task.cancel()
        }
        XCTAssertEqual(response?.error?.code, .cancelled)
    }

    func testInvalidationCompletesASuspendedTask() {
        let response: DataResponse<Data>? = wait { finish in
            let task = manager.dataTask(with: request(slowPath), completion: finish)
            task.resume()
            waitUntil("bytes arrive") { task.downloadProgress.completedUnitCount > 0 }
            task.suspend()
            manager.invalidate()
        }
        XCTAssertEqual(response?.error?.code, .sessionInvalidated)
    }

    func testSuspendBeforeResumeIsANoOp() {
        let response: DataResponse<Data>? = wait { finish in
            let task = manager.dataTask(with: request("/get"), completion: finish)
            task.suspend()
            XCTAssertEqual(task.state, .initialized)
            task.resume()
        }
        XCTAssertNil(response?.error)
    }

    func testPausedDownloadResumesIntoAnExactFile() throws {
        let destination = directory.appendingPathComponent("paused.bin")
        let response: DownloadResponse? = wait { finish in
            let task = manager.downloadTask(with: request(slowPath), to: .file(destination), completion: finish)
            task.resume()
            waitUntil("bytes arrive") { task.downloadProgress.completedUnitCount >= 50_000 }
            task.suspend()
            task.resume()
        }
        XCTAssertNil(response?.error)
        XCTAssertEqual(try Data(contentsOf: destination), slowBody)
        XCTAssertEqual(stagingFiles(in: directory), [])
    }

    func testDroppedHandleStillCompletes() {
        let response: DataResponse<Data>? = wait { finish in
            manager.dataTask(with: request("/delay/100"), completion: finish).resume()
        }
        XCTAssertNil(response?.error)
    }
}
