import XCTest
@testable import Courier

final class WebSocketFrameDecoderTests: XCTestCase {
    private func clientDecoder(limit: Int = 1 << 20) -> WebSocketFrameDecoder {
        WebSocketFrameDecoder(configuration: .init(maximumFrameSize: limit))
    }

    private func decodeError(_ bytes: [UInt8], limit: Int = 1 << 20, line: UInt = #line) -> WebSocketProtocolError? {
        var decoder = clientDecoder(limit: limit)
        return protocolError({ () throws(WebSocketProtocolError) in try decoder.decode(bytes) }, line: line)
    }

    func testDecodesRFCUnmaskedHello() throws {
        var decoder = clientDecoder()
        let frames = try decoder.decode([0x81, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F])
        XCTAssertEqual(frames, [WebSocketFrame(opcode: .text, payload: Data("Hello".utf8))])
    }

    func testDecodesRFCMaskedHelloWhenFramesAreMasked() throws {
        // A server reads masked frames: §5.7's masked "Hello" is unmasked in place.
        var decoder = WebSocketFrameDecoder(configuration: .init(maximumFrameSize: 1024, expectsMaskedFrames: true))
        let frames = try decoder.decode([0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58])
        XCTAssertEqual(frames, [WebSocketFrame(opcode: .text, payload: Data("Hello".utf8))])
    }

    func testDecodesRFCFragmentsAndPingInOneChunk() throws {
        var decoder = clientDecoder()
        let bytes: [UInt8] = [0x01, 0x03, 0x48, 0x65, 0x6C, 0x89, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F, 0x80, 0x02, 0x6C, 0x6F]
        XCTAssertEqual(
            try decoder.decode(bytes),
            [
                WebSocketFrame(fin: false, opcode: .text, payload: Data("Hel".utf8)),
                WebSocketFrame(opcode: .ping, payload: Data("Hello".utf8)),
                WebSocketFrame(opcode: .continuation, payload: Data("lo".utf8)),
            ])
    }

    func testDecodes256ByteAnd64KiBLengths() throws {
        var decoder = clientDecoder()
        let small = Data((0..<256).map { UInt8($0) })
        let large = Data((0..<65536).map { UInt8(truncatingIfNeeded: $0 * 7) })
        let bytes = serverFrame(.binary, [UInt8](small)) + serverFrame(.binary, [UInt8](large))
        XCTAssertEqual(Array(bytes.prefix(4)), [0x82, 0x7E, 0x01, 0x00])
        XCTAssertEqual(try decoder.decode(bytes).map(\.payload), [small, large])
    }

    func testOneByteAtATimeEqualsWholeForAStreamOfMixedFrames() throws {
        let bytes =
            serverFrame(.text, Array("héllo wörld".utf8), fin: false) + serverFrame(.pong, [])
            + serverFrame(.continuation, Array(repeating: 0x41, count: 300)) + serverFrame(.binary, Array(repeating: 7, count: 70_000))
            + serverFrame(.ping, Array(repeating: 1, count: 125)) + serverFrame(.binary, [])
        var whole = clientDecoder()
        let expected = try whole.decode(bytes)
        XCTAssertEqual(expected.count, 6)

        var decoder = clientDecoder()
        var frames: [WebSocketFrame] = []
        for byte in bytes { frames += try decoder.decode([byte]) }
        XCTAssertEqual(frames, expected)
    }

    func testMaskedPayloadSplitAtOddPlacesIsUnmaskedWithTheRightPhase() throws {
        // A masked frame whose payload arrives in chunks of 3: each chunk starts at a different
        // key phase.
        let payload = (0..<1000).map { UInt8(truncatingIfNeeded: $0 * 13) }
        let bytes = [UInt8](try WebSocketFrame(opcode: .binary, payload: Data(payload)).encoded(maskingKey: rfcMaskingKey))
        var decoder = WebSocketFrameDecoder(configuration: .init(maximumFrameSize: 4096, expectsMaskedFrames: true))
        var frames: [WebSocketFrame] = []
        var start = 0
        while start < bytes.count {
            frames += try decoder.decode(Array(bytes[start..<min(start + 3, bytes.count)]))
            start += 3
        }
        XCTAssertEqual(frames.map(\.payload), [Data(payload)])
    }

    func testNonMinimalLengthsAreAccepted() throws {
        // 5 bytes announced with the 16-bit form and with the 64-bit form.
        var decoder = clientDecoder()
        let hello: [UInt8] = Array("Hello".utf8)
        let frames = try decoder.decode(rawHeader(0x81, 126, [0, 5]) + hello + rawHeader(0x82, 127, [0, 0, 0, 0, 0, 0, 0, 5]) + hello)
        XCTAssertEqual(frames.map(\.payload), [Data(hello), Data(hello)])
    }

    func testA64BitLengthWithTheTopBitSetIsAProtocolError() {
        let error = decodeError(rawHeader(0x82, 127, [0x80, 0, 0, 0, 0, 0, 0, 1]))
        XCTAssertEqual(error?.closeCode, .protocolError)
        // 2^63 - 1 is a legal length, only too big for the limit.
        XCTAssertEqual(decodeError(rawHeader(0x82, 127, [0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]))?.closeCode, .messageTooBig)
    }

    func testAFrameOverTheLimitFailsWith1009AtItsHeader() {
        // Only the header has arrived: the frame is refused before any payload is kept.
        XCTAssertEqual(decodeError(rawHeader(0x82, 126, [0x01, 0x01]), limit: 256)?.closeCode, .messageTooBig)
        var decoder = clientDecoder(limit: 256)
        XCTAssertNoThrow(try decoder.decode(rawHeader(0x82, 126, [0x01, 0x00])), "256 bytes is at the limit")
    }

    func testEachReservedBitWithoutAnExtensionIsAProtocolError() {
        for bit: UInt8 in [0x40, 0x20, 0x10, 0x70] {
            let error = decodeError(rawHeader(0x81 | bit, 0x00))
            XCTAssertEqual(error?.closeCode, .protocolError, "bits \(bit)")
        }
    }

    func testAReservedBitAnExtensionNegotiatedIsAccepted() throws {
        var decoder = WebSocketFrameDecoder(configuration: .init(maximumFrameSize: 64, allowedReservedBits: 0x40))
        let frames = try decoder.decode(rawHeader(0xC1, 0x01, [0x41]))
        XCTAssertEqual(frames.first?.reservedBits, 0x40)
        var strict = WebSocketFrameDecoder(configuration: .init(maximumFrameSize: 64, allowedReservedBits: 0x40))
        XCTAssertEqual(
            protocolError({ () throws(WebSocketProtocolError) in try strict.decode(rawHeader(0xA1, 0x00)) })?.closeCode, .protocolError)
    }

    func testEveryReservedOpcodeIsAProtocolError() {
        for opcode: UInt8 in [0x3, 0x4, 0x5, 0x6, 0x7, 0xB, 0xC, 0xD, 0xE, 0xF] {
            let error = decodeError(rawHeader(0x80 | opcode, 0x00))
            XCTAssertEqual(error?.closeCode, .protocolError, "opcode \(opcode)")
            XCTAssertTrue(error?.message.contains("opcode") ?? false)
        }
    }

    func testControlFramesOver125BytesAreAProtocolErrorInEveryLengthForm() {
        for opcode: UInt8 in [0x8, 0x9, 0xA] {
            XCTAssertEqual(decodeError(rawHeader(0x80 | opcode, 126, [0, 126]))?.closeCode, .protocolError)
            XCTAssertEqual(decodeError(rawHeader(0x80 | opcode, 127, [0, 0, 0, 0, 0, 0, 0, 126]))?.closeCode, .protocolError)
        }
    }

    func testFragmentedControlFramesAreAProtocolError() {
        for opcode: UInt8 in [0x8, 0x9, 0xA] {
            XCTAssertEqual(decodeError(rawHeader(opcode, 0x00))?.closeCode, .protocolError, "opcode \(opcode)")
        }
    }

    func testAMaskedFrameFromTheServerIsAProtocolError() {
        let error = decodeError([0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58])
        XCTAssertEqual(error?.closeCode, .protocolError)
        XCTAssertEqual(error?.message, "a masked frame from the server")
    }

    func testAnUnmaskedFrameFromAClientIsAProtocolErrorForAServer() {
        var decoder = WebSocketFrameDecoder(configuration: .init(maximumFrameSize: 64, expectsMaskedFrames: true))
        XCTAssertEqual(protocolError({ () throws(WebSocketProtocolError) in try decoder.decode([0x81, 0x00]) })?.closeCode, .protocolError)
    }

    func testABadHeaderFailsAtItsSecondByteWithoutWaitingForMore() {
        // The first two bytes of a ping announcing 126 bytes: no extended length has arrived.
        var decoder = clientDecoder()
        XCTAssertNoThrow(try decoder.decode([0x89]))
        XCTAssertEqual(protocolError({ () throws(WebSocketProtocolError) in try decoder.decode([126]) })?.closeCode, .protocolError)
    }

    func testAfterAnErrorEveryCallFailsTheSameWay() {
        var decoder = clientDecoder()
        let first = protocolError { () throws(WebSocketProtocolError) in try decoder.decode([0x83, 0x00]) }
        // A valid frame afterwards is not read: the stream cannot be trusted past a bad frame.
        let second = protocolError { () throws(WebSocketProtocolError) in try decoder.decode([0x81, 0x00]) }
        XCTAssertEqual(first, second)
    }

    func testPartialFrameShowsTheHeaderAndThePayloadSoFar() throws {
        var decoder = clientDecoder()
        XCTAssertTrue(try decoder.decode([0x81, 0x05, 0x48]).isEmpty)
        let partial = try XCTUnwrap(decoder.partialFrame)
        XCTAssertEqual(partial.header.opcode, .text)
        XCTAssertEqual(partial.header.payloadLength, 5)
        XCTAssertEqual(partial.payload, Data([0x48]))
        XCTAssertEqual(try decoder.decode([0x65, 0x6C, 0x6C, 0x6F]).count, 1)
        XCTAssertNil(decoder.partialFrame)
    }

    func testDecodeFrameStopsAfterEachFrameAndLeavesTheRestOfTheInput() throws {
        var decoder = clientDecoder()
        let bytes = serverFrame(.text, [0x41]) + serverFrame(.binary, [0x42, 0x43])
        try bytes.withUnsafeBytes { buffer in
            var input = buffer
            XCTAssertEqual(try decoder.decodeFrame(from: &input)?.payload, Data([0x41]))
            XCTAssertEqual(input.count, 4)
            XCTAssertEqual(try decoder.decodeFrame(from: &input)?.payload, Data([0x42, 0x43]))
            XCTAssertEqual(input.count, 0)
            XCTAssertNil(try decoder.decodeFrame(from: &input))
        }
    }
}
