import CourierTestServer
import Foundation
import XCTest

/// `/ws/echo` refuses what is not a WebSocket handshake; `WebSocketServerFrame` encodes frames as
/// RFC 6455 §5.7's examples.
final class WebSocketRouteTests: ServerTestCase {
    func testEchoRefusesAPlainGetWith426() throws {
        let client = try RawClient(port: server.port)
        let response = try client.request("GET", "/ws/echo")
        XCTAssertEqual(response.status, 426)
    }

    func testFramesEncodeAsTheRFCsExamples() {
        // §5.7: a single-frame unmasked text message "Hello", and a masked one
        XCTAssertEqual(WebSocketServerFrame.text("Hello").encoded, Data([0x81, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F]))
        XCTAssertEqual(
            WebSocketServerFrame(opcode: 1, payload: Data("Hello".utf8), maskingKey: [0x37, 0xFA, 0x21, 0x3D]).encoded,
            Data([0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58]))
        // A 256-byte binary message uses the 16-bit length
        XCTAssertEqual(WebSocketServerFrame.binary(Data(count: 256)).encoded.prefix(4), Data([0x82, 0x7E, 0x01, 0x00]))
        XCTAssertEqual(WebSocketServerFrame.close(1000, reason: "ok").closeCode, 1000)
    }
}
