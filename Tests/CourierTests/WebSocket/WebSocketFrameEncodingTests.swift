import XCTest
@testable import Courier

final class WebSocketFrameEncodingTests: XCTestCase {
    private func encode(_ frame: WebSocketFrame, key: WebSocketMaskingKey? = nil) throws -> [UInt8] {
        try [UInt8](frame.encoded(maskingKey: key))
    }

    func testUnmaskedHelloIsRFCExample() throws {
        // §5.7: a single-frame unmasked text message.
        let frame = WebSocketFrame(opcode: .text, payload: Data("Hello".utf8))
        XCTAssertEqual(try encode(frame), [0x81, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F])
    }

    func testMaskedHelloIsRFCExample() throws {
        // §5.7: a single-frame masked text message.
        let frame = WebSocketFrame(opcode: .text, payload: Data("Hello".utf8))
        XCTAssertEqual(try encode(frame, key: rfcMaskingKey), [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58])
    }

    func testFragmentedHelloIsRFCExample() throws {
        // §5.7: a fragmented unmasked text message, "Hel" then "lo".
        XCTAssertEqual(try encode(WebSocketFrame(fin: false, opcode: .text, payload: Data("Hel".utf8))), [0x01, 0x03, 0x48, 0x65, 0x6C])
        XCTAssertEqual(try encode(WebSocketFrame(opcode: .continuation, payload: Data("lo".utf8))), [0x80, 0x02, 0x6C, 0x6F])
    }

    func testPingAndMaskedPongAreRFCExamples() throws {
        // §5.7: an unmasked ping and a masked pong, both carrying "Hello".
        XCTAssertEqual(try encode(WebSocketFrame(opcode: .ping, payload: Data("Hello".utf8))), [0x89, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F])
        XCTAssertEqual(
            try encode(WebSocketFrame(opcode: .pong, payload: Data("Hello".utf8)), key: rfcMaskingKey),
            [0x8A, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58])
    }

    func test256BytesUseThe16BitLengthAsInRFCExample() throws {
        // §5.7: 256 bytes of binary data in a single unmasked frame: 0x82 0x7E 0x0100.
        let bytes = try encode(WebSocketFrame(opcode: .binary, payload: Data(repeating: 0xAB, count: 256)))
        XCTAssertEqual(Array(bytes.prefix(4)), [0x82, 0x7E, 0x01, 0x00])
        XCTAssertEqual(bytes.count, 4 + 256)
    }

    func test64KiBUseThe64BitLengthAsInRFCExample() throws {
        // §5.7: 64 KiB in a single unmasked frame: 0x82 0x7F 0x0000000000010000.
        let bytes = try encode(WebSocketFrame(opcode: .binary, payload: Data(repeating: 0xCD, count: 65536)))
        XCTAssertEqual(Array(bytes.prefix(10)), [0x82, 0x7F, 0, 0, 0, 0, 0, 0x01, 0x00, 0x00])
        XCTAssertEqual(bytes.count, 10 + 65536)
    }

    func testLengthFormIsMinimalAtEachBoundary() throws {
        let rows: [(count: Int, header: [UInt8])] = [
            (0, [0x82, 0x00]), (125, [0x82, 125]), (126, [0x82, 126, 0x00, 126]),
            (65535, [0x82, 126, 0xFF, 0xFF]), (65536, [0x82, 127, 0, 0, 0, 0, 0, 1, 0, 0]),
        ]
        for row in rows {
            let bytes = try encode(WebSocketFrame(opcode: .binary, payload: Data(count: row.count)))
            XCTAssertEqual(Array(bytes.prefix(row.header.count)), row.header, "\(row.count) bytes")
            XCTAssertEqual(bytes.count, row.header.count + row.count, "\(row.count) bytes")
            XCTAssertEqual(WebSocketFrame.headerSize(payloadLength: row.count, masked: false), row.header.count)
        }
    }

    func testControlFrameOver125BytesOrFragmentedIsRefused() {
        let big = WebSocketFrame(opcode: .ping, payload: Data(count: 126))
        XCTAssertEqual(courierError { () throws(CourierError) in try big.encoded(maskingKey: nil) }?.code, .invalidRequest)
        let fragmented = WebSocketFrame(fin: false, opcode: .close)
        XCTAssertEqual(courierError { () throws(CourierError) in try fragmented.encoded(maskingKey: nil) }?.code, .invalidRequest)
        let reserved = WebSocketFrame(reservedBits: 0x40, opcode: .text)
        XCTAssertEqual(courierError { () throws(CourierError) in try reserved.encoded(maskingKey: nil) }?.code, .invalidRequest)
        // 125 bytes is still a control frame's size.
        XCTAssertNoThrow(try WebSocketFrame(opcode: .pong, payload: Data(count: 125)).encoded(maskingKey: nil))
    }

    func testMaskingEightAtATimeMatchesTheRuleByteForByteAtEveryOffsetAndLength() {
        // §5.3: octet i is XORed with key octet i mod 4. The word-wide loop and the tail must
        // agree with that for every length and every starting phase.
        let key = WebSocketMaskingKey(0x01, 0x80, 0xFE, 0x5A)
        for offset in 0..<4 {
            for length in 0..<40 {
                let original = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
                var masked = original
                masked.withUnsafeMutableBytes { key.apply(to: $0, offset: offset) }
                let expected = original.enumerated().map { $0.element ^ key.byte(offset + $0.offset) }
                XCTAssertEqual(masked, expected, "offset \(offset), length \(length)")
                // Masking twice gives the payload back.
                masked.withUnsafeMutableBytes { key.apply(to: $0, offset: offset) }
                XCTAssertEqual(masked, original)
            }
        }
    }

    func testMaskedFramesOfEveryLengthFormRoundTripThroughAServersDecoder() throws {
        // What a client sends, read as a server reads it, gives the frame back.
        var decoder = WebSocketFrameDecoder(configuration: .init(maximumFrameSize: 1 << 20, expectsMaskedFrames: true))
        for (index, count) in [0, 1, 3, 125, 126, 127, 65535, 65536, 70_001].enumerated() {
            let payload = Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ index) })
            let frame = WebSocketFrame(fin: index % 2 == 0, opcode: index % 2 == 0 ? .binary : .text, payload: payload)
            let key = WebSocketMaskingKey(UInt8(index), 0xA5, UInt8(255 - index), 0x3C)
            let bytes = try frame.encoded(maskingKey: key)
            XCTAssertEqual(bytes.count, WebSocketFrame.headerSize(payloadLength: count, masked: true) + count)
            XCTAssertEqual(try decoder.decode(bytes), [frame], "\(count) bytes")
        }
    }

    func testMaskingKeyFromBytesNeedsExactlyFour() {
        XCTAssertEqual(WebSocketMaskingKey([0x37, 0xFA, 0x21, 0x3D]), rfcMaskingKey)
        XCTAssertNil(WebSocketMaskingKey([0x37, 0xFA, 0x21]))
        XCTAssertNil(WebSocketMaskingKey([0x37, 0xFA, 0x21, 0x3D, 0x00]))
    }
}
