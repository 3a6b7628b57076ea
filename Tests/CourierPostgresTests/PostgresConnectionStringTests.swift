import Courier
import XCTest
@testable import CourierPostgres

/// What the store shows of a connection string, and a missing libpq: pure, no server.
final class PostgresConnectionStringTests: XCTestCase {
    func testPasswordsAreMaskedInBothForms() {
        XCTAssertEqual(
            PostgresConnectionString.redacted("host=/run/pg user=app password='se cret' dbname=jobs"),
            "host=/run/pg user=app password=*** dbname=jobs")
        XCTAssertEqual(PostgresConnectionString.redacted("password = hunter2 host=db"), "password=*** host=db")
        let uri = PostgresConnectionString.redacted("postgres://app:hunter2@db.internal:5432/jobs?sslmode=require&password=x2")
        XCTAssertFalse(uri.contains("hunter2"))
        XCTAssertFalse(uri.contains("x2"))
        XCTAssertTrue(uri.contains("db.internal:5432/jobs"), uri)
    }

    func testSecretsAreFoundAndScrubbedFromAnyText() {
        let secrets = PostgresConnectionString.secrets(in: "postgresql://app:p%40ss@db/jobs")
        XCTAssertTrue(secrets.contains("p@ss"))
        XCTAssertEqual(PostgresConnectionString.scrub("server said p@ss and p%40ss", secrets: secrets), "server said *** and ***")
        XCTAssertEqual(PostgresConnectionString.secrets(in: "user=a password='it''s'").isEmpty, false)
        XCTAssertEqual(PostgresConnectionString.secrets(in: "host=db user=a"), [])
    }

    func testAMissingLibpqIsATypedErrorNamingTheDebianPackage() {
        XCTAssertThrowsError(try PostgresQueueStore(connectionString: "host=/nowhere", library: "libpq-courier-missing.so.5")) { error in
            let error = error as? CourierError
            XCTAssertEqual(error?.code, .storeUnavailable)
            XCTAssertTrue(error?.message.contains("libpq5") == true, "\(String(describing: error))")
        }
    }

    func testResumeRecordsRoundTripThroughHex() {
        let bytes = Data((0...255).map { UInt8($0) })
        XCTAssertEqual(PostgresQueueStore.bytes(hex: PostgresQueueStore.hex(bytes)), bytes)
        XCTAssertNil(PostgresQueueStore.bytes(hex: "abc"))
        XCTAssertNil(PostgresQueueStore.bytes(hex: "zz"))
    }
}
