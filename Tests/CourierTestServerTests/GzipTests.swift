import Foundation
import XCTest
@testable import CourierTestServer

/// CRC-32, the stored-block gzip writer, and `/gzip`, `/gzip-bomb`.
final class GzipTests: ServerTestCase {
    func testCRC32MatchesTheStandardCheckValue() {
        XCTAssertEqual(CRC32.checksum(Array("123456789".utf8)), 0xCBF4_3926)
        XCTAssertEqual(CRC32.checksum([UInt8]()), 0)
        XCTAssertEqual(CRC32.checksum(Array("6789".utf8), initial: CRC32.checksum(Array("12345".utf8))), 0xCBF4_3926)
    }

    func testCRC32OfZerosMatchesTheDirectComputation() {
        for count in [0, 1, 7, 1000, 65_536 + 3] {
            XCTAssertEqual(CRC32.checksumOfZeros(count: count), CRC32.checksum([UInt8](repeating: 0, count: count)), "\(count)")
        }
        let prefix = CRC32.checksum(Array("abc".utf8))
        XCTAssertEqual(
            CRC32.checksumOfZeros(count: 10, initial: prefix), CRC32.checksum(Array("abc".utf8) + [UInt8](repeating: 0, count: 10)))
    }

    func testGzipRouteInflatesToJSON() throws {
        let response = try fetch("GET", "/gzip")
        XCTAssertEqual(response.header("Content-Encoding"), "gzip")
        XCTAssertEqual(response.header("Content-Type"), "application/json")
        let inflated = try StoredGzip.inflate(response.body)
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: inflated) as? [String: Any])
        XCTAssertEqual(json["gzipped"] as? Bool, true)
        XCTAssertEqual(json["method"] as? String, "GET")
    }

    func testGzipOfLargeDataSpansSeveralStoredBlocks() throws {
        let payload = TestServer.deterministicBytes(count: 200_000, seed: 8)
        XCTAssertEqual(try StoredGzip.inflate(Gzip.compress(payload)), payload)
        XCTAssertEqual(try StoredGzip.inflate(Gzip.compress(Data())), Data())
    }

    func testGzipBombInflatesToTheRequestedNumberOfZeros() throws {
        for size in [0, 1, 65_535, 65_536, 300_000] {
            let response = try fetch("GET", "/gzip-bomb?size=\(size)")
            XCTAssertEqual(response.header("Content-Encoding"), "gzip")
            XCTAssertEqual(Int(response.header("Content-Length") ?? ""), response.body.count)
            XCTAssertEqual(try StoredGzip.inflate(response.body), Data(count: size), "size \(size)")
        }
        XCTAssertEqual(try fetch("GET", "/gzip-bomb?size=-1").status, 400)
    }

    func testGzipBombPiecesMatchTheWholeStream() throws {
        let size = 200_000
        let stream = Gzip.zeros(length: size)
        let whole = stream.bytes(in: 0..<stream.count)
        var pieced = Data()
        var offset = 0
        while offset < stream.count {
            let end = min(stream.count, offset + 7_777)
            pieced.append(stream.bytes(in: offset..<end))
            offset = end
        }
        XCTAssertEqual(pieced, whole)
        XCTAssertEqual(try StoredGzip.inflate(whole), Data(count: size))
    }
}

/// A minimal gzip reader that understands only stored deflate blocks and checks CRC and ISIZE.
enum StoredGzip {
    struct Failure: Error, CustomStringConvertible { let description: String }

    static func inflate(_ data: Data) throws -> Data {
        let bytes = [UInt8](data)
        guard bytes.count >= 18, bytes[0] == 0x1F, bytes[1] == 0x8B, bytes[2] == 8, bytes[3] == 0 else {
            throw Failure(description: "not a plain gzip header")
        }
        var position = 10
        var output = Data()
        while true {
            guard position + 5 <= bytes.count else { throw Failure(description: "truncated block header") }
            let header = bytes[position]
            guard header & 0b110 == 0 else { throw Failure(description: "not a stored block") }
            let length = Int(bytes[position + 1]) | Int(bytes[position + 2]) << 8
            let complement = Int(bytes[position + 3]) | Int(bytes[position + 4]) << 8
            guard length ^ complement == 0xFFFF else { throw Failure(description: "LEN/NLEN mismatch") }
            position += 5
            guard position + length <= bytes.count else { throw Failure(description: "truncated block") }
            output.append(contentsOf: bytes[position..<(position + length)])
            position += length
            if header & 1 == 1 { break }
        }
        guard position + 8 == bytes.count else { throw Failure(description: "trailer size") }
        let word = { (at: Int) in (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[at + $1]) << (8 * UInt32($1)) } }
        guard word(position) == CRC32.checksum(output) else { throw Failure(description: "CRC mismatch") }
        guard word(position + 4) == UInt32(truncatingIfNeeded: output.count) else { throw Failure(description: "ISIZE mismatch") }
        return output
    }
}
