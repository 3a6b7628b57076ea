import CourierTestSupport
import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Many tasks on one cache at once: hits, misses, stores and evictions racing each other and
/// `cancel()`; every task completes exactly once and never with another URL's bytes.
final class ResponseCacheConcurrencyTests: CourierTestCase {
    override func makeConfiguration() -> SessionManager.Configuration {
        var configuration = super.makeConfiguration()
        // Small: stores evict while others read.
        configuration.responseCache = .memory(maximumBytes: 6_000)
        return configuration
    }

    func testConcurrentHitsMissesAndCancelsCompleteOnceWithTheirOwnBytes() {
        let count = 200
        // One answer stored first: lookups happen when a task starts, so without it every task of
        // the burst below could start before the first answer is stored (no hit at all).
        let warm = expectation(description: "stored")
        manager.dataTask(with: URLRequest(url: server.url("/response-headers?Cache-Control=max-age%3D60&Seed=1"))) { _ in
            warm.fulfill()
        }.resume()
        wait(for: [warm], timeout: 10)
        let completions = Box<Int>()
        let hits = Counter()
        let done = expectation(description: "all completed")
        done.expectedFulfillmentCount = count
        for index in 0..<count {
            let seed = index % 12
            let request = URLRequest(url: server.url("/response-headers?Cache-Control=max-age%3D60&Seed=\(seed)"))
            let task = manager.dataTask(with: request) { response in
                _ = completions.append(index)
                if response.cacheOutcome == .hit { _ = hits.increment() }
                if let data = response.data, response.error == nil {
                    let echoed = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
                    XCTAssertEqual(echoed?["Seed"] as? String, String(seed), "task \(index)")
                }
                done.fulfill()
            }
            task.resume()
            if index % 7 == 0 { DispatchQueue.global().async { task.cancel() } }
        }
        wait(for: [done], timeout: 60)
        Thread.sleep(forTimeInterval: 0.05)
        XCTAssertEqual(completions.count, count, "each task completed exactly once")
        XCTAssertEqual(Set(completions.all).count, count)
        XCTAssertGreaterThan(hits.count, 0, "some tasks were answered from the cache")
        XCTAssertLessThanOrEqual(manager.responseCache?.currentBytes ?? .max, 6_000)
    }
}
