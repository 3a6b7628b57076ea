import XCTest
@testable import CourierTestServer
final class ServerPlaceholderTests: XCTestCase { func testNothing() { XCTAssertTrue(true) } }
