import XCTest
@testable import Courier
final class PlaceholderTests: XCTestCase { func testVersionIsSet() { XCTAssertFalse(Courier.version.isEmpty) } }
