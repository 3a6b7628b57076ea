import XCTest
@testable import Courier
import CourierSupport

final class SHA1Tests: XCTestCase {
    private func hex(_ bytes: [UInt8]) -> String { SHA256.hexString(SHA1.hash(bytes)) }

    func testKnownAnswerVectorsFromRFC3174() {
        // RFC 3174 §7.3's TEST1, TEST2 and TEST4, and the empty message.
        XCTAssertEqual(hex(Array("abc".utf8)), "a9993e364706816aba3e25717850c26c9cd0d89d")
        XCTAssertEqual(
            hex(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
        XCTAssertEqual(
            hex(Array(String(repeating: "0123456701234567012345670123456701234567012345670123456701234567", count: 10).utf8)),
            "dea356a2cddd90c7a7ecedc5ebb563934f460452")
        XCTAssertEqual(hex([]), "da39a3ee5e6b4b0d3255bfef95601890afd80709")
    }

    func testOneMillionTimesTheLetterA() {
        // RFC 3174 §7.3's TEST3: many blocks, and a length that needs the padding's second block.
        XCTAssertEqual(hex([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)), "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
    }

    func testPaddingBoundariesAt55And56And64Bytes() {
        // 55 bytes fit the length in the same block; 56 need a second; 64 are one whole block.
        // Digests from `printf 'a%.0s' {1..N} | sha1sum`.
        XCTAssertEqual(hex([UInt8](repeating: 0x61, count: 55)), "c1c8bbdc22796e28c0e15163d20899b65621d65a")
        XCTAssertEqual(hex([UInt8](repeating: 0x61, count: 56)), "c2db330f6083854c99d4b5bfb6e8f29f201be699")
        XCTAssertEqual(hex([UInt8](repeating: 0x61, count: 64)), "0098ba824b5c16427bd7a1122a5a442a25ec644d")
    }
}
