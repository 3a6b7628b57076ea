import XCTest
@testable import Courier

final class WebSocketMessageAssemblerTests: XCTestCase {
    private typealias Output = WebSocketMessageAssembler.Output

    private func frame(_ opcode: WebSocketOpcode, _ payload: [UInt8], fin: Bool = true) -> WebSocketFrame {
        WebSocketFrame(fin: fin, opcode: opcode, payload: Data(payload))
    }

    /// The outputs of `frames`, or the first error.
    private func assemble(_ frames: [WebSocketFrame], limit: Int = 1 << 20) -> (outputs: [Output], error: WebSocketProtocolError?) {
        var assembler = WebSocketMessageAssembler(maximumMessageSize: limit)
        var outputs: [Output] = []
        for frame in frames {
            do throws(WebSocketProtocolError) {
                if let output = try assembler.receive(frame) { outputs.append(output) }
            } catch {
                return (outputs, error)
            }
        }
        return (outputs, nil)
    }

    func testUnfragmentedTextAndBinaryMessages() {
        let result = assemble([frame(.text, Array("Hello".utf8)), frame(.binary, [0, 1, 2]), frame(.text, [])])
        XCTAssertNil(result.error)
        XCTAssertEqual(result.outputs, [.text("Hello"), .binary(Data([0, 1, 2])), .text("")])
    }

    func testRFCFragmentedHelloIsOneMessage() {
        let result = assemble([frame(.text, Array("Hel".utf8), fin: false), frame(.continuation, Array("lo".utf8))])
        XCTAssertEqual(result.outputs, [.text("Hello")])
    }

    func testControlFramesBetweenFragmentsPassAtOnceAndLeaveTheMessageWhole() {
        let result = assemble([
            frame(.binary, [1], fin: false), frame(.ping, Array("p".utf8)), frame(.continuation, [], fin: false),
            frame(.pong, []), frame(.continuation, [2, 3]),
        ])
        XCTAssertNil(result.error)
        XCTAssertEqual(result.outputs, [.ping(Data("p".utf8)), .pong(Data()), .binary(Data([1, 2, 3]))])
    }

    func testANewDataFrameInTheMiddleOfAMessageIsAProtocolError() {
        for opcode: WebSocketOpcode in [.text, .binary] {
            let result = assemble([frame(.text, Array("a".utf8), fin: false), frame(opcode, Array("b".utf8))])
            XCTAssertEqual(result.error?.closeCode, .protocolError, "\(opcode)")
            XCTAssertTrue(result.outputs.isEmpty)
        }
    }

    func testAContinuationWithoutAStartIsAProtocolError() {
        XCTAssertEqual(assemble([frame(.continuation, Array("lo".utf8))]).error?.closeCode, .protocolError)
        // Nor after a message has ended.
        let result = assemble([frame(.text, Array("a".utf8)), frame(.continuation, [], fin: false)])
        XCTAssertEqual(result.outputs, [.text("a")])
        XCTAssertEqual(result.error?.closeCode, .protocolError)
    }

    func testAMessageOverTheLimitFailsWith1009AtTheFrameThatCrossesIt() {
        XCTAssertEqual(assemble([frame(.binary, Array(repeating: 0, count: 11))], limit: 10).error?.closeCode, .messageTooBig)
        let fragmented = assemble(
            [frame(.binary, Array(repeating: 0, count: 6), fin: false), frame(.continuation, Array(repeating: 0, count: 5))], limit: 10)
        XCTAssertEqual(fragmented.error?.closeCode, .messageTooBig)
        // Exactly the limit is fine, in one frame or several.
        XCTAssertNil(assemble([frame(.binary, Array(repeating: 0, count: 10))], limit: 10).error)
        XCTAssertNil(assemble([frame(.text, Array("abcde".utf8), fin: false), frame(.continuation, Array("fghij".utf8))], limit: 10).error)
    }

    func testTheLimitIsCheckedAtTheHeaderBeforeThePayloadIsKept() {
        var assembler = WebSocketMessageAssembler(maximumMessageSize: 100)
        let header = WebSocketFrameHeader(fin: true, reservedBits: 0, opcode: .binary, maskingKey: nil, payloadLength: 101)
        let error = protocolError { () throws(WebSocketProtocolError) in try assembler.inspect(header: header, payloadSoFar: Data()) }
        XCTAssertEqual(error?.closeCode, .messageTooBig)
    }

    func testBadUTF8FailsAtTheFragmentThatHoldsItBeforeTheMessageEnds() {
        // κόσμε in the first fragment, the surrogate ED A0 80 in the second, a third never needed.
        let result = assemble([
            frame(.text, [0xCE, 0xBA, 0xE1, 0xBD, 0xB9, 0xCF, 0x83, 0xCE, 0xBC, 0xCE, 0xB5], fin: false),
            frame(.continuation, [0xED, 0xA0, 0x80], fin: false),
        ])
        XCTAssertEqual(result.error?.closeCode, .invalidFramePayloadData)
        XCTAssertEqual(result.error?.message, "a text message that is not UTF-8 at byte 12")
    }

    func testACharacterSplitAcrossFragmentsIsValid() {
        // "€" is E2 82 AC: one byte in each of three fragments.
        let result = assemble([frame(.text, [0xE2], fin: false), frame(.continuation, [0x82], fin: false), frame(.continuation, [0xAC])])
        XCTAssertNil(result.error)
        XCTAssertEqual(result.outputs, [.text("€")])
    }

    func testATextMessageEndingInsideACharacterFailsWith1007() {
        let result = assemble([frame(.text, [0x41, 0xE2, 0x82], fin: false), frame(.continuation, [])])
        XCTAssertEqual(result.error?.closeCode, .invalidFramePayloadData)
        XCTAssertEqual(assemble([frame(.text, [0xF0, 0x9F])]).error?.closeCode, .invalidFramePayloadData)
    }

    func testBinaryMessagesAreNotCheckedAsText() {
        XCTAssertEqual(assemble([frame(.binary, [0xFF, 0xED, 0xA0, 0x80])]).outputs, [.binary(Data([0xFF, 0xED, 0xA0, 0x80]))])
    }

    func testACloseFrameInTheMiddleOfAMessageIsPassedOn() {
        let result = assemble([frame(.text, Array("a".utf8), fin: false), frame(.close, [0x03, 0xE8])])
        XCTAssertNil(result.error)
        guard case .close(let answer)? = result.outputs.first else { return XCTFail("no close: \(result.outputs)") }
        XCTAssertEqual(answer.receivedCode, .normalClosure)
    }
}
