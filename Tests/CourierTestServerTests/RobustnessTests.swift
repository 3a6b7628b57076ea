import Foundation
import XCTest
@testable import CourierTestServer
import CourierSupport

/// Hostile input must never trap: the parsers are fed pseudo-random bytes, in process and over the wire.
final class RobustnessTests: ServerTestCase {
    /// A small xorshift generator so every run feeds the same inputs.
    private struct Xorshift {
        var state: UInt64
        mutating func next() -> UInt64 {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return state
        }
        mutating func bytes(_ count: Int, from alphabet: [UInt8]) -> [UInt8] {
            (0..<count).map { _ in alphabet[Int(next() % UInt64(alphabet.count))] }
        }
    }

    /// Bytes that matter to HTTP framing, over-represented so the parsers reach their edge cases.
    private let alphabet = Array("GET /x HTTP/1.1\r\n:;,-=0123456789abcdefABCDEF \t\u{7F}%".utf8) + [0, 0x80, 0xFF, 0xC3]

    func testParsersNeverTrapOnRandomInput() {
        var random = Xorshift(state: 0x9E37_79B9_7F4A_7C15)
        for _ in 0..<3_000 {
            let bytes = random.bytes(Int(random.next() % 200), from: alphabet)
            let head = bytes + Array("\r\n\r\n".utf8)
            if let parsed = try? HTTPRequestParser.parseHead(head[...]) {
                _ = try? HTTPRequestParser.framing(of: parsed)
                _ = HTTPRequest(head: parsed, body: Data(), bodyLength: 0, connectionID: 1).recorded.query
            }
            _ = HTTPRequestParser.parseChunkSize(bytes[...])
            let text = String(decoding: bytes, as: UTF8.self)
            for total in [0, 1, 100] {
                if case .partial(let range) = RangeRequest.evaluate("bytes=" + text, total: total) {
                    XCTAssertTrue(range.lowerBound >= 0 && range.upperBound <= total && !range.isEmpty)
                }
            }
            _ = QueryString.parse(text)
            _ = HTTPDate.parse(text)
        }
    }

    func testRandomGarbageOnTheWireIsRefusedAndTheServerKeepsServing() throws {
        var random = Xorshift(state: 42)
        for _ in 0..<150 {
            let client = try connect(timeout: 5)
            var garbage = random.bytes(Int(random.next() % 300), from: alphabet)
            garbage += Array("\r\n\r\n".utf8)
            try client.send(Data(garbage))
            client.shutdownWrite()
            _ = try? client.readToEnd()
        }
        XCTAssertEqual(try fetch("GET", "/get").status, 200)
    }
}
