import XCTest
@testable import Courier

final class WebSocketCloseAnswerTests: XCTestCase {
    private func payload(_ code: UInt16, _ reason: [UInt8] = []) -> Data {
        Data([UInt8(code >> 8), UInt8(code & 0xFF)] + reason)
    }

    func testAnEmptyCloseIsAnsweredWith1000AndReportsNoStatus() {
        let answer = WebSocketCloseAnswer(closePayload: Data())
        XCTAssertNil(answer.receivedCode)
        XCTAssertEqual(answer.replyCode, .normalClosure)
        XCTAssertNil(answer.violation)
    }

    func testAOneBytePayloadIsAProtocolError() {
        // Autobahn 7.3.2.
        let answer = WebSocketCloseAnswer(closePayload: Data("a".utf8))
        XCTAssertEqual(answer.replyCode, .protocolError)
        XCTAssertEqual(answer.violation?.closeCode, .protocolError)
    }

    func testValidCodesAreEchoed() {
        // Autobahn 7.7.x's codes, and 1012–1014, which IANA has registered since RFC 6455.
        for code: UInt16 in [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 3999, 4000, 4999] {
            let answer = WebSocketCloseAnswer(closePayload: payload(code))
            XCTAssertEqual(answer.receivedCode?.rawValue, code)
            XCTAssertEqual(answer.replyCode.rawValue, code, "\(code) is echoed")
            XCTAssertNil(answer.violation, "\(code)")
        }
    }

    func testInvalidCodesAreAnsweredWith1002() {
        // Autobahn 7.9.x's codes, 1015 (never sent, §7.4.1), and the numbers past 4999.
        for code: UInt16 in [0, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65535] {
            let answer = WebSocketCloseAnswer(closePayload: payload(code))
            XCTAssertEqual(answer.receivedCode?.rawValue, code)
            XCTAssertEqual(answer.replyCode, .protocolError, "\(code)")
            XCTAssertEqual(answer.violation?.closeCode, .protocolError, "\(code)")
        }
    }

    func testAReasonThatIsNotUTF8IsAnsweredWith1007() {
        // Autobahn 7.5.1's reason: κόσμε, a surrogate, "edited".
        let reason: [UInt8] = [
            0xCE, 0xBA, 0xE1, 0xBD, 0xB9, 0xCF, 0x83, 0xCE, 0xBC, 0xCE, 0xB5, 0xED, 0xA0, 0x80, 0x65, 0x64, 0x69, 0x74, 0x65, 0x64,
        ]
        let answer = WebSocketCloseAnswer(closePayload: payload(1000, reason))
        XCTAssertEqual(answer.replyCode, .invalidFramePayloadData)
        XCTAssertEqual(answer.violation?.closeCode, .invalidFramePayloadData)
    }

    func testAValidReasonIsKept() {
        let answer = WebSocketCloseAnswer(closePayload: payload(4001, Array("bye ✓".utf8)))
        XCTAssertEqual(answer.receivedReason, Data("bye ✓".utf8))
        XCTAssertEqual(answer.replyCode.rawValue, 4001)
    }

    func testACloseFramesReasonIsCutAtACharacterBoundaryToFit() throws {
        // 61 two-byte characters are 122 bytes; a 62nd would make 124 > 123.
        let frame = WebSocketFrame.close(.goingAway, reason: String(repeating: "é", count: 70))
        XCTAssertEqual(frame.payload.count, 2 + 122)
        XCTAssertEqual(Array(frame.payload.prefix(2)), [0x03, 0xE9])
        XCTAssertNoThrow(try frame.encoded(maskingKey: rfcMaskingKey))
        XCTAssertEqual(WebSocketFrame.close(nil).payload, Data())
        XCTAssertEqual(WebSocketFrame.close(.normalClosure, reason: "ok").payload, Data([0x03, 0xE8, 0x6F, 0x6B]))
    }

    func testProtocolErrorsBecomeCourierErrors() {
        let tooBig = WebSocketProtocolError(.messageTooBig, "big").courierError(url: URL(string: "ws://h/"))
        XCTAssertEqual(tooBig.code, .responseTooLarge)
        let broken = WebSocketProtocolError(.protocolError, "bad").courierError(url: nil)
        XCTAssertEqual(broken.code, .invalidResponse)
        XCTAssertTrue(broken.message.contains("1002"))
        XCTAssertEqual(WebSocketProtocolError(.invalidFramePayloadData, "utf").courierError(url: nil).code, .invalidResponse)
    }
}
