import Courier
import Foundation
import XCTest

/// Another module's `HTTPClient` (AsyncHTTPClient has one), standing in for the clash: inside this
/// file the plain name means this type, so Courier's must be written `Courier.HTTPClient`.
private struct HTTPClient {
    let eventLoopGroupProvider = "shared"
}

/// Module-qualified names must compile: no type in Courier may be called `Courier`, or it would
/// shadow the module and `Courier.HTTPClient` would be looked up as a member of that type.
final class ModuleQualifiedNameTests: XCTestCase {
    func testModuleQualifiedNamesReachCourierTypesBesideAClashingOne() {
        // Given another `HTTPClient` in scope
        let other = HTTPClient()
        // When Courier's types are named through the module
        let _: Courier.HTTPClient.Type = Courier.HTTPClient.self
        let client = Courier.HTTPClient(baseURL: URL(string: "https://api.example.com/v2/"))
        let code: Courier.CourierError.Code = .network
        // Then both are usable side by side
        XCTAssertEqual(other.eventLoopGroupProvider, "shared")
        XCTAssertEqual(try client.url(for: "users").absoluteString, "https://api.example.com/v2/users")
        XCTAssertEqual(code, Courier.CourierError.Code.network)
        XCTAssertEqual(Courier.CourierInfo.version, "0.1.0")
    }

    func testAnExpectedDigestIsReadFromHex() {
        let hex = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        XCTAssertEqual(DownloadPolicy.sha256(hex: hex)?.count, 32)
        XCTAssertEqual(DownloadPolicy.sha256(hex: hex.uppercased()), DownloadPolicy.sha256(hex: hex))
        XCTAssertNil(DownloadPolicy.sha256(hex: "0x" + hex.dropFirst(2)))
        XCTAssertNil(DownloadPolicy.sha256(hex: String(hex.dropLast())))
    }
}
