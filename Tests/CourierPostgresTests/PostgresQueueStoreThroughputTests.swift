import Courier
import CourierSupport
import XCTest
@testable import CourierPostgres

/// 1, 2, 4 and 8 workers (a store each, on threads of their own) drain 2,000 items leasing and
/// completing one at a time: every item is leased exactly once. Each run prints a `STORE` line
/// with items per second and the store's time per item (the figures in Docs/Performance.md).
final class PostgresQueueStoreThroughputTests: PostgresTestCase {
    func testWorkersDrainTwoThousandItemsEachLeasedExactlyOnce() throws {
        let count = 2000
        for workers in [1, 2, 4, 8] {
            let writer = try openStore()
            let prefix = "w\(workers)-"
            try writer.add((0..<count).map { newItem(prefix + String($0), host: "h\($0 % 2).example") })
            let stores = try (0..<workers).map { _ in try openStore() }
            let leased = Locked<[String]>([])
            let failures = Locked<[String]>([])
            let start = Date()
            DispatchQueue.concurrentPerform(iterations: workers) { index in
                do {
                    while let lease = try stores[index].lease(worker: "w\(index)", duration: 60, maximumPerHost: 100) {
                        try stores[index].complete(lease, file: lease.item.destination)
                        leased.withLock { $0.append(lease.item.id) }
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
            let seconds = Date().timeIntervalSince(start)
            XCTAssertEqual(failures.withLock { $0 }, [])
            let ids = leased.withLock { $0 }
            XCTAssertEqual(ids.count, count, "\(workers) workers")
            XCTAssertEqual(Set(ids).count, count, "\(workers) workers: each item once")
            let perItem = seconds * 1000 * Double(workers) / Double(count)
            print(
                "STORE workers=\(workers) items=\(count) seconds=\(String(format: "%.2f", seconds)) items_per_s=\(String(format: "%.0f", Double(count) / seconds)) ms_per_item_per_worker=\(String(format: "%.2f", perItem))"
            )
        }
    }
}
