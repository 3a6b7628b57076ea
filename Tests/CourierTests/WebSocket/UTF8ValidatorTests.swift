import CourierTestSupport
import XCTest
@testable import Courier

final class UTF8ValidatorTests: XCTestCase {
    /// The verdict on `bytes` fed in `chunks` pieces: the absolute offset of the first bad byte,
    /// or `nil`, and whether the text may end there.
    private func verdict(_ bytes: [UInt8], splitAt splits: [Int] = []) -> (bad: Int?, complete: Bool) {
        var validator = UTF8Validator()
        var start = 0
        for end in splits + [bytes.count] {
            let bad = bytes[start..<end].withUnsafeBytes { validator.validate($0) }
            if let bad { return (start + bad, false) }
            start = end
        }
        return (nil, validator.isComplete)
    }

    private let valid: [[UInt8]] = [
        [], Array("Hello, world".utf8), Array("κόσμε".utf8),
        [0x7F], [0xC2, 0x80], [0xDF, 0xBF], [0xE0, 0xA0, 0x80], [0xED, 0x9F, 0xBF], [0xEE, 0x80, 0x80],
        [0xEF, 0xBF, 0xBF], [0xF0, 0x90, 0x80, 0x80], [0xF4, 0x8F, 0xBF, 0xBF], Array("😀 and 中文 mixed in ASCII runs".utf8),
    ]

    /// Each invalid sequence and the offset of its first bad byte.
    private let invalid: [(bytes: [UInt8], bad: Int, why: String)] = [
        ([0xC0, 0x80], 0, "overlong NUL (C0 never starts a character)"),
        ([0xC1, 0xBF], 0, "overlong 2-byte form"),
        ([0xE0, 0x80, 0x80], 1, "overlong 3-byte form"),
        ([0xE0, 0x9F, 0xBF], 1, "overlong U+07FF"),
        ([0xF0, 0x80, 0x80, 0x80], 1, "overlong 4-byte form"),
        ([0xF0, 0x8F, 0xBF, 0xBF], 1, "overlong U+FFFF"),
        ([0xED, 0xA0, 0x80], 1, "high surrogate U+D800"),
        ([0xED, 0xBF, 0xBF], 1, "low surrogate U+DFFF"),
        ([0xF4, 0x90, 0x80, 0x80], 1, "U+110000, above U+10FFFF"),
        ([0xF5, 0x80, 0x80, 0x80], 0, "F5 never starts a character"),
        ([0xFF], 0, "FF never appears"),
        ([0xFE], 0, "FE never appears"),
        ([0x80], 0, "a lone continuation byte"),
        ([0x41, 0xC2, 0x41], 2, "a 2-byte sequence cut short by ASCII"),
        ([0xE2, 0x82, 0x41], 2, "a 3-byte sequence cut short by ASCII"),
        ([0xF0, 0x9F, 0x98, 0xC2], 3, "a 4-byte sequence cut short by a lead byte"),
        // Autobahn case 6.3.1's payload: κόσμε, then a surrogate (ED A0 80), then "edited".
        ([0xCE, 0xBA, 0xE1, 0xBD, 0xB9, 0xCF, 0x83, 0xCE, 0xBC, 0xCE, 0xB5, 0xED, 0xA0, 0x80, 0x65, 0x64], 12, "κόσμε + surrogate"),
        (Array("0123456789abcdef".utf8) + [0x80] + Array("0123456789".utf8), 16, "a bad byte after a whole ASCII word"),
    ]

    func testValidTextIsAcceptedAtEveryBoundaryOfTheRanges() {
        for bytes in valid {
            let result = verdict(bytes)
            XCTAssertNil(result.bad, "\(bytes)")
            XCTAssertTrue(result.complete, "\(bytes)")
        }
    }

    func testOverlongsSurrogatesAndCodePointsAbove10FFFFFailAtTheirFirstBadByte() {
        for row in invalid {
            XCTAssertEqual(verdict(row.bytes).bad, row.bad, row.why)
        }
    }

    func testTruncatedSequencesAreIncompleteButNotYetBad() {
        // The start of a character at the end of a chunk: more may come.
        for bytes: [UInt8] in [[0xC2], [0xE0, 0xA0], [0xF0, 0x90, 0x80], [0xF4], [0x41, 0xE2, 0x82]] {
            let result = verdict(bytes)
            XCTAssertNil(result.bad, "\(bytes)")
            XCTAssertFalse(result.complete, "\(bytes)")
        }
    }

    func testEverySplitPositionGivesTheSameVerdictAsTheWhole() {
        // Every sequence above, cut once at every position and cut into single bytes.
        let samples = valid + invalid.map(\.bytes) + [[0xC2], [0xF0, 0x90, 0x80], [0xE2, 0x82, 0xAC, 0xF0, 0x9F, 0x98, 0x80]]
        for bytes in samples {
            let whole = verdict(bytes)
            for split in 0...bytes.count {
                let cut = verdict(bytes, splitAt: [split])
                XCTAssertEqual(cut.bad, whole.bad, "\(bytes) split at \(split)")
                XCTAssertEqual(cut.complete, whole.complete, "\(bytes) split at \(split)")
            }
            let single = verdict(bytes, splitAt: bytes.indices.dropFirst().map { $0 })
            XCTAssertEqual(single.bad, whole.bad, "\(bytes) byte by byte")
            XCTAssertEqual(single.complete, whole.complete, "\(bytes) byte by byte")
        }
    }

    func testAgreesWithTheStandardLibraryOnRandomNearUTF8Input() {
        // The standard library's validation as the oracle for the whole-buffer verdict, on byte
        // strings built from pieces near UTF-8's edges; seeded, so a failure replays.
        var generator = SplitMix64(seed: 34)
        let pieces: [[UInt8]] = [
            [0x41], [0x7F], [0x80], [0xBF], [0xC0], [0xC1], [0xC2], [0xDF], [0xE0], [0xE1], [0xEC], [0xED], [0xEE],
            [0xEF], [0xF0], [0xF1], [0xF3], [0xF4], [0xF5], [0xFF], [0x8F], [0x90], [0x9F], [0xA0],
            Array("é".utf8), Array("€".utf8), Array("😀".utf8), Array("abcdefghij".utf8),
        ]
        for _ in 0..<5000 {
            let bytes = (0..<Int.random(in: 0...8, using: &generator)).flatMap { _ in pieces.randomElement(using: &generator) ?? [] }
            let expected = String(validating: bytes, as: UTF8.self) != nil
            let result = verdict(bytes)
            XCTAssertEqual(result.bad == nil && result.complete, expected, "\(bytes)")
            if let split = bytes.indices.randomElement(using: &generator) {
                let cut = verdict(bytes, splitAt: [split])
                XCTAssertEqual(cut.bad, result.bad, "\(bytes) split at \(split)")
            }
        }
    }

    func testAfterABadByteNothingIsValidAgain() {
        var validator = UTF8Validator()
        XCTAssertEqual([0xFF].withUnsafeBytes { validator.validate($0) }, 0)
        XCTAssertEqual(Array("ok".utf8).withUnsafeBytes { validator.validate($0) }, 0)
        XCTAssertFalse(validator.isComplete)
    }
}
