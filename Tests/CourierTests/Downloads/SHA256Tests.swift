import XCTest
@testable import Courier

final class SHA256Tests: XCTestCase {
    private func hex(_ message: String) -> String {
        SHA256.hexString(SHA256.hash(Data(message.utf8)))
    }

    func testKnownAnswerVectorsFromFIPS180() {
        let vectors: [(message: String, digest: String)] = [
            ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            (
                "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
            ),
            (
                "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrs"
                    + "mnopqrstnopqrstu",
                "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"
            ),
        ]
        for vector in vectors {
            XCTAssertEqual(hex(vector.message), vector.digest, "\(vector.message.utf8.count) bytes")
        }
    }

    func testOneMillionAsFedInUnevenChunks() {
        // 999 does not divide 64, so most updates start and end inside a block.
        let chunk = Data(repeating: UInt8(ascii: "a"), count: 999)
        var hasher = SHA256()
        for _ in 0..<1000 { hasher.update(chunk) }
        hasher.update(Data(repeating: UInt8(ascii: "a"), count: 1000))
        XCTAssertEqual(
            SHA256.hexString(hasher.finalize()), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    func testLengthsAroundThePaddingBoundariesMatchSha256sum() {
        // Expected values from the system tool, computed once:
        //   s=0123456789012…(70 chars); printf '%s' "${s:0:N}" | sha256sum
        let expected: [Int: String] = [
            55: "f34d5a0f80c0cbf84c8c0b90218c22637abd199965249da736a20143c8c9c9d9",
            56: "83aa034bda83e458a0dc9cbce0d4e354716aa0ff770ed37ac0ed2b292052e4af",
            63: "074f6e9ac301d5d1b6df6f1dfb8c6f89c187ea945d352ce6a29279a9c630680b",
            64: "9674d9e078535b7cec43284387a6ee39956188e735a85452b0050b55341cda56",
            65: "52774b57c10e45040a61c14d35c1c8ebefe880082313aa0a21ebb077734cd067",
        ]
        let digits = String(repeating: "0123456789", count: 7)
        for (length, digest) in expected {
            XCTAssertEqual(hex(String(digits.prefix(length))), digest, "\(length) bytes")
        }
    }

    func testSplittingTheInputAtEveryOffsetGivesTheSameDigest() {
        let message = Data((0..<131).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) })
        let whole = SHA256.hash(message)
        for split in 0...message.count {
            var hasher = SHA256()
            hasher.update(message.prefix(split))
            hasher.update(message.dropFirst(split))
            XCTAssertEqual(hasher.finalize(), whole, "split at \(split)")
        }
    }

    func testRawBufferUpdatesMatchDataUpdates() {
        let message = Data((0..<200).map { UInt8(truncatingIfNeeded: $0) })
        var hasher = SHA256()
        message.withUnsafeBytes { buffer in
            hasher.update(bytes: UnsafeRawBufferPointer(rebasing: buffer[0..<70]))
            hasher.update(bytes: UnsafeRawBufferPointer(rebasing: buffer[70..<70]))
            hasher.update(bytes: UnsafeRawBufferPointer(rebasing: buffer[70...]))
        }
        XCTAssertEqual(hasher.finalize(), SHA256.hash(message))
    }

    func testFinalizeLeavesTheHasherUsable() {
        var hasher = SHA256()
        hasher.update(Data("ab".utf8))
        let copy = hasher
        XCTAssertEqual(hasher.finalize(), SHA256.hash(Data("ab".utf8)))
        XCTAssertEqual(hasher.finalize(), hasher.finalize())
        hasher.update(Data("c".utf8))
        XCTAssertEqual(hasher.finalize(), SHA256.hash(Data("abc".utf8)))
        XCTAssertEqual(copy.finalize(), SHA256.hash(Data("ab".utf8)))
    }

    func testHexRoundTripAcceptsEitherCase() throws {
        let digest = SHA256.hash(Data("abc".utf8))
        let text = SHA256.hexString(digest)
        XCTAssertEqual(text.count, 64)
        XCTAssertEqual(text, text.lowercased())
        XCTAssertEqual(SHA256.parseHex(text), digest)
        XCTAssertEqual(SHA256.parseHex(text.uppercased()), digest)
        let bytes = (0...31).map { UInt8($0 * 8 + 7) }
        XCTAssertEqual(SHA256.parseHex(SHA256.hexString(bytes)), bytes)
    }

    func testParseHexRejectsAnythingButSixtyFourHexDigits() {
        let valid = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        let bad: [String] = [
            "", String(valid.dropLast()), valid + "0", "0x" + String(valid.dropLast(2)), " " + String(valid.dropLast()),
            String(valid.dropLast()) + "g", String(valid.dropLast(2)) + "é", "z" + String(valid.dropFirst()),
            String(repeating: "-", count: 64),
        ]
        for text in bad { XCTAssertNil(SHA256.parseHex(text), text) }
    }
}
