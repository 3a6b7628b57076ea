import XCTest
@testable import CourierTestServer
final class SmokeTests: XCTestCase { func testStarts() throws { let s = try TestServer(); XCTAssertNotEqual(s.port, 0) } }
