import XCTest
@testable import Courier

final class WebSocketReaderTests: XCTestCase {
    private func reader(frameLimit: Int = 1 << 20, messageLimit: Int = 1 << 20) -> WebSocketReader {
        WebSocketReader(maximumFrameSize: frameLimit, maximumMessageSize: messageLimit)
    }

    func testALargeFragmentedMessageReadOneByteAtATimeEqualsReadingItWhole() {
        // 200 KB of text with multi-byte characters cut across fragment boundaries, a ping
        // between fragments, then a binary message in a 64-bit-length frame.
        let text = String(repeating: "Grüße, 世界! 😀 ", count: 8000)
        let utf8 = Array(text.utf8)
        var bytes: [UInt8] = []
        var start = 0
        let cuts = [1, 7, 1000, 4097, 65_536, 70_001]
        for (index, size) in cuts.enumerated() {
            let end = index == cuts.count - 1 ? utf8.count : min(start + size, utf8.count)
            bytes += serverFrame(index == 0 ? .text : .continuation, Array(utf8[start..<end]), fin: index == cuts.count - 1)
            if index == 2 { bytes += serverFrame(.ping, Array("mid".utf8)) }
            start = end
        }
        let binary = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        bytes += serverFrame(.binary, binary)

        var whole = reader()
        let expected = whole.read(bytes)
        XCTAssertNil(expected.failure)
        XCTAssertEqual(expected.outputs, [.ping(Data("mid".utf8)), .text(text), .binary(Data(binary))])

        var oneByOne = reader()
        XCTAssertEqual(oneByOne.read(bytes, chunkSize: 1), expected)
        var inSevens = reader()
        XCTAssertEqual(inSevens.read(bytes, chunkSize: 7), expected)
    }

    func testBadUTF8InsideOneLongFrameFailsBeforeTheFrameEnds() {
        // A 1000-byte text frame whose 11th byte is bad: the failure comes with the chunk that
        // holds that byte, not with the frame's last byte (Autobahn's "fail fast", cases 6.4.x).
        var payload = Array(repeating: UInt8(ascii: "a"), count: 1000)
        payload[10] = 0xFF
        let bytes = serverFrame(.text, payload)
        var reader = reader()
        XCTAssertNil(reader.read(Array(bytes.prefix(4 + 10))).failure)
        let result = reader.read(Array(bytes[14..<20]))
        XCTAssertEqual(result.failure?.closeCode, .invalidFramePayloadData)
        XCTAssertEqual(result.failure?.message, "a text message that is not UTF-8 at byte 10")
    }

    func testBadUTF8SplitAcrossFragmentsFailsAtTheFirstBadByte() {
        // F4 90 is above U+10FFFF: F4 ends the first fragment, 90 starts the second.
        let bytes = serverFrame(.text, [0x41, 0xF4], fin: false) + serverFrame(.continuation, [0x90, 0x80, 0x80])
        for size in 1...bytes.count {
            var reader = reader()
            let result = reader.read(bytes, chunkSize: size)
            XCTAssertEqual(result.failure?.closeCode, .invalidFramePayloadData, "chunks of \(size)")
            XCTAssertEqual(result.failure?.message, "a text message that is not UTF-8 at byte 2", "chunks of \(size)")
        }
    }

    func testAMessageOverTheLimitFailsAtTheHeaderOfTheFrameThatCrossesIt() {
        var reader = reader(frameLimit: 1 << 20, messageLimit: 1000)
        let first = serverFrame(.binary, Array(repeating: 1, count: 600), fin: false)
        XCTAssertNil(reader.read(first).failure)
        // Only the next frame's header: 600 + 500 > 1000, refused before its payload comes.
        let header = Array(serverFrame(.continuation, Array(repeating: 2, count: 500)).prefix(4))
        XCTAssertEqual(reader.read(header).failure?.closeCode, .messageTooBig)
    }

    func testFramesBeforeAFailureInTheSameChunkAreStillDelivered() {
        // Autobahn 4.1.3: a text message, then a reserved opcode, then a ping.
        var reader = reader()
        let result = reader.read(serverFrame(.text, Array("Hi".utf8)) + rawHeader(0x85, 0x00) + serverFrame(.ping, []))
        XCTAssertEqual(result.outputs, [.text("Hi")])
        XCTAssertEqual(result.failure?.closeCode, .protocolError)
        // The failure stays.
        XCTAssertEqual(reader.read(serverFrame(.text, [])), WebSocketReader.Result(failure: result.failure))
    }

    func testNothingAfterTheClosingFrameIsRead() {
        var reader = reader()
        let result = reader.read(serverFrame(.close, [0x03, 0xE8]) + serverFrame(.text, Array("late".utf8)) + rawHeader(0x83, 0x00))
        XCTAssertNil(result.failure)
        XCTAssertEqual(result.outputs.count, 1)
        XCTAssertTrue(reader.receivedClose)
        XCTAssertEqual(reader.read(serverFrame(.text, Array("later".utf8))), WebSocketReader.Result())
    }

    func testAFrameOverTheFrameLimitFailsWith1009() {
        var reader = reader(frameLimit: 16, messageLimit: 1 << 20)
        XCTAssertEqual(reader.read(rawHeader(0x82, 17)).failure?.closeCode, .messageTooBig)
    }
}
