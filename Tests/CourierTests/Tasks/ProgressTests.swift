import CourierTestSupport
import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

final class ProgressTests: CourierTestCase {
    private struct Sample: Sendable, Equatable {
        let completed: Int64
        let total: Int64
        let fraction: Double
    }

    private static func sample(_ progress: Progress) -> Sample {
        Sample(completed: progress.completedUnitCount, total: progress.totalUnitCount, fraction: progress.fractionCompleted)
    }

    func testDownloadProgressIsMonotonicBoundedAndEndsComplete() {
        let samples = Box<Sample>()
        let response: DataResponse<Data>? = wait { finish in
            manager.dataTask(
                with: request("/bytes/300000?chunk=16384&chunk_delay_ms=5"),
                downloadProgress: { samples.append(Self.sample($0)) }, completion: finish
            ).resume()
        }
        XCTAssertNil(response?.error)
        let all = samples.all
        XCTAssertGreaterThan(all.count, 2)
        XCTAssertEqual(all.last, Sample(completed: 300_000, total: 300_000, fraction: 1))
        for (earlier, later) in zip(all, all.dropFirst()) {
            XCTAssertLessThanOrEqual(earlier.completed, later.completed)
        }
        XCTAssertTrue(all.allSatisfy { $0.fraction <= 1 && $0.total == 300_000 })
    }

    func testUnknownTotalStaysUnknown() {
        let samples = Box<Sample>()
        _ = wait { finish in
            manager.dataTask(
                with: request("/stream-bytes/100000?chunk_size=4096"),
                downloadProgress: { samples.append(Self.sample($0)) }, completion: finish
            ).resume()
        }
        XCTAssertFalse(samples.all.isEmpty)
        XCTAssertTrue(samples.all.allSatisfy { $0.total == -1 }, "chunked: no total")
        XCTAssertEqual(samples.all.last?.completed, 100_000)
    }

    func testProgressCallbacksAreThrottled() {
        var configuration = makeConfiguration()
        configuration.progressInterval = .seconds(10)
        let throttled = SessionManager(configuration: configuration)
        let calls = Counter()
        _ = wait { finish in
            throttled.dataTask(
                with: request("/bytes/1000000?chunk=16384&chunk_delay_ms=1"),
                downloadProgress: { _ in calls.increment() }, completion: finish
            ).resume()
        }
        XCTAssertEqual(calls.count, 2, "one immediate update, then only the final one")
    }

    func testProgressCallbacksRunOnTheCompletionQueueBeforeTheCompletion() {
        let order = Box<String>()
        _ = wait { finish in
            manager.dataTask(
                with: request("/bytes/50000"), downloadProgress: { _ in order.append("progress") },
                completion: { _ in
                    order.append("completion")
                    finish(())
                }
            ).resume()
        }
        XCTAssertEqual(order.all.last, "completion")
        XCTAssertEqual(order.all.filter { $0 == "completion" }.count, 1)
        XCTAssertGreaterThan(order.all.count, 1)
    }

    func testUploadProgressReachesTheBodyLength() {
        let samples = Box<Sample>()
        let body = Data(repeating: 7, count: 2_000_000)
        let response = wait { finish in
            manager.uploadTask(
                with: request("/sink", method: "POST"), from: .data(body),
                uploadProgress: { samples.append(Self.sample($0)) }, completion: finish
            ).resume()
        }
        XCTAssertNil(response?.error)
        XCTAssertEqual(samples.all.last?.completed, 2_000_000)
        XCTAssertEqual(samples.all.last?.total, 2_000_000)
        XCTAssertEqual(samples.all.last?.fraction, 1)
    }

    func testEachReadIsAFreshProgressObject() {
        let task = manager.dataTask(with: request("/get")) { _ in }
        XCTAssertFalse(task.downloadProgress === task.downloadProgress)
        task.cancel()
    }

    func testProgressUpdatesSequenceEndsWhenTheTaskCompletes() async throws {
        let task = manager.dataTask(with: request("/bytes/200000?chunk=16384&chunk_delay_ms=2")) { _ in }
        let updates = task.progressUpdates(.download)
        task.resume()
        var last: Int64 = -1
        var count = 0
        for await progress in updates {
            XCTAssertGreaterThanOrEqual(progress.completedUnitCount, last)
            last = progress.completedUnitCount
            count += 1
        }
        XCTAssertGreaterThan(count, 0)
        XCTAssertEqual(last, 200_000)
    }

    func testProgressSequenceOfACompletedTaskEndsAtOnce() async {
        let finished = Counter()
        let task = manager.dataTask(with: request("/get")) { _ in finished.increment() }
        task.resume()
        while finished.count == 0 { try? await Task.sleep(for: .milliseconds(5)) }
        var count = 0
        for await _ in task.progressUpdates(.download) { count += 1 }
        XCTAssertEqual(count, 0)
    }
}
