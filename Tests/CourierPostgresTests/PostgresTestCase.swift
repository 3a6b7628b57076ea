import Courier
import CourierSupport
import CourierTestSupport
import XCTest
@testable import CourierPostgres

/// Base class of the tests against a real server (``ThrowawayPostgres``, one per test class): each
/// test gets a database of its own, and every store it opened is closed after it.
class PostgresTestCase: XCTestCase {
    nonisolated(unsafe) static var server: ThrowawayPostgres?
    nonisolated(unsafe) static var unavailable: String?

    override class func setUp() {
        super.setUp()
        do {
            server = try ThrowawayPostgres()
        } catch {
            unavailable = "\(error)"
        }
    }

    override class func tearDown() {
        server?.stop()
        server = nil
        super.tearDown()
    }

    var server: ThrowawayPostgres!
    var database = ""
    var stores: [PostgresQueueStore] = []

    override func setUpWithError() throws {
        try super.setUpWithError()
        guard let server = Self.server else {
            throw XCTSkip("no PostgreSQL server for these tests: \(Self.unavailable ?? "unknown")")
        }
        self.server = server
        database = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try admin("CREATE DATABASE \(database)")
    }

    override func tearDownWithError() throws {
        for store in stores { store.close() }
        stores = []
        if server != nil { try? admin("DROP DATABASE IF EXISTS \(database)") }
        try super.tearDownWithError()
    }

    /// Runs `sql` in the `postgres` database.
    func admin(_ sql: String) throws {
        let connection = try PostgresConnection(server.connectionString(), libpq: try LibPQ.load())
        defer { connection.close() }
        _ = try connection.execute(sql)
    }

    /// Runs `sql` in the test's database.
    @discardableResult
    func query(_ sql: String, _ parameters: [String?] = []) throws -> [[String?]] {
        let connection = try PostgresConnection(server.connectionString(database: database), libpq: try LibPQ.load())
        defer { connection.close() }
        do {
            return try connection.execute(sql, parameters)
        } catch {
            throw error.error
        }
    }

    func openStore() throws -> PostgresQueueStore {
        let store = try PostgresQueueStore(connectionString: server.connectionString(database: database))
        stores.append(store)
        return store
    }

    func newItem(_ id: String, host: String = "a.example", priority: Int = 0, split: DownloadSplit = .off) -> DownloadQueue.NewItem {
        DownloadQueue.NewItem(
            url: URL(string: "https://\(host)/files/\(id)")!, to: URL(fileURLWithPath: "/tmp/courier-pg-out/\(id)"), id: id,
            priority: priority, split: split)
    }
}
