import XCTest
@testable import courier

/// `courier queue status` without a database: its arguments (its table is `PostgresQueueStore.statusTable`'s,
/// Tests/CourierPostgresTests/PostgresStatusTableTests.swift). The command against a real server is in Tests/CourierPostgresTests/FleetCommandTests.swift.
final class QueueStatusCommandTests: XCTestCase {
    func testItTakesStatusAndOneConnectionStringAndNeverQuotesAStrayArgument() throws {
        XCTAssertEqual(try QueueStatusCommand.parse(["status", "--queue", "postgres://u@h/db"]), "postgres://u@h/db")
        XCTAssertEqual(try QueueStatusCommand.parse(["status", "--queue=host=/tmp dbname=x"]), "host=/tmp dbname=x")
        XCTAssertNil(try QueueStatusCommand.parse(["--help"]))
        XCTAssertThrowsError(try QueueStatusCommand.parse(["list"]))
        XCTAssertThrowsError(try QueueStatusCommand.parse(["status"]))
        XCTAssertThrowsError(try QueueStatusCommand.parse(["status", "postgres://u:secret@h/db"])) { error in
            XCTAssertFalse((error as? UsageError)?.message.contains("secret") ?? true)
        }
        XCTAssertThrowsError(try QueueStatusCommand.parse(["status", "--qeue=postgres://u:secret@h/db"])) { error in
            XCTAssertEqual((error as? UsageError)?.message, "unknown option '--qeue' for queue status; did you mean --queue?")
        }
    }

    func testGetTakesQueueOnlyWithAListAndKeepsItsValue() throws {
        guard case .queue(let options) = try GetCommand.Invocation.parse(["-i", "list.txt", "--queue", "postgres://u@h/db"]) else {
            return XCTFail("-i with --queue is a queue")
        }
        XCTAssertEqual(options.store, "postgres://u@h/db")
        XCTAssertThrowsError(try GetCommand.Invocation.parse(["-i", "list.txt", "--queue", ""]))
    }
}
