import XCTest
@testable import Courier

/// CRC-32C against the published check value and the iSCSI test vectors (RFC 3720, B.4), and
/// the slicing-by-8 path against a bit-at-a-time reference at every length and alignment.
final class CRC32CTests: XCTestCase {
    func testTheStandardCheckValueAndTheISCSIVectors() {
        XCTAssertEqual(CRC32C.checksum(Array("123456789".utf8)), 0xE306_9283)
        XCTAssertEqual(CRC32C.checksum([UInt8](repeating: 0, count: 32)), 0x8A91_36AA)
        XCTAssertEqual(CRC32C.checksum([UInt8](repeating: 0xFF, count: 32)), 0x62A8_AB43)
        XCTAssertEqual(CRC32C.checksum((0..<32).map { UInt8($0) }), 0x46DD_794E)
        XCTAssertEqual(CRC32C.checksum((0..<32).map { UInt8(31 - $0) }), 0x113F_DB5C)
        XCTAssertEqual(CRC32C.checksum([UInt8]()), 0)
    }

    func testEveryLengthAndOffsetMatchesTheBitwiseDefinition() {
        let bytes = (0..<80).map { UInt8(truncatingIfNeeded: $0 &* 151 &+ 7) }
        for start in 0..<8 {
            for end in start...bytes.count {
                XCTAssertEqual(CRC32C.checksum(bytes[start..<end]), reference(bytes[start..<end]), "\(start)..<\(end)")
            }
        }
    }

    func testAChecksumCanBeContinuedPieceByPiece() {
        let bytes = Array("the journal checksums the length, then the payload".utf8)
        for split in 0...bytes.count {
            let continued = bytes[split...].withUnsafeBytes {
                CRC32C.checksum($0, continuing: CRC32C.checksum(bytes[..<split]))
            }
            XCTAssertEqual(continued, CRC32C.checksum(bytes), "split at \(split)")
        }
    }

    /// CRC-32C one bit at a time, straight from the definition.
    private func reference(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
        }
        return ~crc
    }
}
