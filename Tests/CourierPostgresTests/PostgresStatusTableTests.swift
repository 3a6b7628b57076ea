import XCTest
import CourierPostgres

/// ``PostgresQueueStore/statusTable(_:)``: a fleet's list at a glance, pure, no server (the rows
/// from a real one: FleetCommandTests.swift, `courier queue status`).
final class PostgresStatusTableTests: XCTestCase {
    func testTheTableListsEachStateAndWorkerThenTheTotal() {
        let text = PostgresQueueStore.statusTable([
            (state: "completed", worker: nil, count: 1930), (state: "leased", worker: "build-7:4121", count: 4),
            (state: "queued", worker: nil, count: 102),
        ])
        XCTAssertEqual(
            text.split(separator: "\n").map { $0.split(separator: " ").joined(separator: " ") },
            ["STATE WORKER ITEMS", "completed - 1930", "leased build-7:4121 4", "queued - 102", "total 2036"])
        XCTAssertEqual(text.split(separator: "\n")[2], "leased     build-7:4121                    4", "columns of 10 and 31")
        XCTAssertTrue(text.hasSuffix("total 2036\n"))
    }

    func testAnEmptyListIsItsHeadingAndATotalOfNothing() {
        XCTAssertEqual(PostgresQueueStore.statusTable([]), "STATE      WORKER                          ITEMS\ntotal 0\n")
    }
}
