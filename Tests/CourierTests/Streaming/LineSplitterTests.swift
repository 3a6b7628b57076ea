import Foundation
import XCTest
@testable import Courier

final class LineSplitterTests: XCTestCase {
    func testLFCRLFAndLoneCREachEndALine() throws {
        XCTAssertEqual(try Self.lines("a\nb\r\nc\rd\n"), ["a", "b", "c", "d"])
    }

    func testEmptyLinesAreReturned() throws {
        XCTAssertEqual(try Self.lines("\na\n\nb\r\n\r\nc\r\r\n\n"), ["", "a", "", "b", "", "c", "", ""])
    }

    func testACRAtTheEndOfAChunkAndAnLFAtTheStartOfTheNextAreOneLineEnd() throws {
        // Given a CRLF cut between two chunks
        var splitter = Self.splitter()
        XCTAssertEqual(try splitter.feed(Data("a\r".utf8)), [Data("a".utf8)], "the CR ends the line at once")
        // When the LF arrives with the next line
        let lines = try splitter.feed(Data("\nb\n".utf8))
        // Then it does not make an empty line
        XCTAssertEqual(lines, [Data("b".utf8)])
    }

    func testACRAtTheEndOfAChunkFollowedByAnotherCRIsAnEmptyLine() throws {
        var splitter = Self.splitter()
        XCTAssertEqual(try splitter.feed(Data("a\r".utf8)), [Data("a".utf8)])
        XCTAssertEqual(try splitter.feed(Data("\r".utf8)), [Data()])
        XCTAssertEqual(try splitter.feed(Data("\n".utf8)), [], "the LF completes the second CR")
        XCTAssertEqual(try splitter.feed(Data("\n".utf8)), [Data()])
    }

    func testAnEmptyChunkBetweenCRAndLFKeepsThemOneLineEnd() throws {
        var splitter = Self.splitter()
        var lines = try splitter.feed(Data("a\r".utf8))
        lines += try splitter.feed(Data())
        lines += try splitter.feed(Data("\nb\n".utf8))
        XCTAssertEqual(lines, [Data("a".utf8), Data("b".utf8)])
    }

    func testALineCutAcrossManyChunksIsReturnedWhole() throws {
        var splitter = Self.splitter()
        var lines: [Data] = []
        for piece in ["he", "l", "", "lo wor", "ld\r\nnext", "\n"] { lines += try splitter.feed(Data(piece.utf8)) }
        XCTAssertEqual(lines, [Data("hello world".utf8), Data("next".utf8)])
        XCTAssertEqual(splitter.bufferedByteCount, 0)
    }

    func testBytesArePassedThroughUnchanged() throws {
        let bytes: [UInt8] = [0xFF, 0x00, 0xC3, 0xA9, 0x20, 0x09]
        var splitter = Self.splitter()
        XCTAssertEqual(try splitter.feed(Data(bytes + [0x0A])), [Data(bytes)])
    }

    func testDataSlicesAreReadFromTheirOwnIndices() throws {
        let whole = Data("xxxxab\ncd\nyyyy".utf8)
        var splitter = Self.splitter()
        XCTAssertEqual(try splitter.feed(whole[4..<10]), [Data("ab".utf8), Data("cd".utf8)])
    }

    // MARK: - End of stream

    func testFinishReturnsAnUnterminatedLastLine() throws {
        var splitter = Self.splitter()
        XCTAssertEqual(try splitter.feed(Data("a\nlast".utf8)), [Data("a".utf8)])
        XCTAssertEqual(splitter.finish(), Data("last".utf8))
        XCTAssertNil(splitter.finish(), "finishing twice returns the line once")
    }

    func testFinishReturnsNilWhenNothingIsPending() throws {
        for text in ["", "a\n", "a\r\n", "a\r", "\n"] {
            var splitter = Self.splitter()
            _ = try splitter.feed(Data(text.utf8))
            XCTAssertNil(splitter.finish(), text.debugDescription)
        }
    }

    func testFinishStartsAFreshStream() throws {
        // Given a stream that ended just after a CR
        var splitter = Self.splitter()
        _ = try splitter.feed(Data("a\r".utf8))
        XCTAssertNil(splitter.finish())
        // Then an LF starting the next stream is a line end of its own
        XCTAssertEqual(try splitter.feed(Data("\n".utf8)), [Data()])
    }

    // MARK: - Limits

    func testALineAtTheLimitPassesAndOneOverItThrows() throws {
        var splitter = LineSplitter(maximumLineLength: 5)
        XCTAssertEqual(try splitter.feed(Data("12345\r\n".utf8)), [Data("12345".utf8)], "the terminator does not count")
        XCTAssertThrowsError(try splitter.feed(Data("123456\n".utf8))) { error in
            let error = error as? CourierError
            XCTAssertEqual(error?.code, .responseTooLarge)
            XCTAssertTrue(error?.message.contains("line") == true, error?.message ?? "")
            XCTAssertTrue(error?.message.contains("5 bytes") == true, error?.message ?? "")
        }
        XCTAssertEqual(splitter.bufferedByteCount, 0)
    }

    func testAnEndlessLineThrowsAsSoonAsItPassesTheLimitWithoutGrowing() throws {
        // Given a line that never ends, arriving in chunks
        var splitter = LineSplitter(maximumLineLength: 100)
        let chunk = Data(repeating: UInt8(ascii: "x"), count: 30)
        var fed = 0
        // When chunks are fed until the splitter refuses
        do {
            while fed < 10_000 {
                _ = try splitter.feed(chunk)
                fed += chunk.count
                XCTAssertLessThanOrEqual(splitter.bufferedByteCount, 100)
            }
            XCTFail("the line was never refused")
        } catch {
            // Then the fourth chunk (120 bytes) was refused, and the partial line let go
            XCTAssertEqual(error.code, .responseTooLarge)
            XCTAssertEqual(fed, 90)
            XCTAssertEqual(splitter.bufferedByteCount, 0)
        }
        // And the splitter reads on from the next chunk
        XCTAssertEqual(try splitter.feed(Data("ok\n".utf8)), [Data("ok".utf8)])
    }

    func testALongLineWithinOneChunkIsRefusedBeforeItsEnd() throws {
        var splitter = LineSplitter(maximumLineLength: 4)
        XCTAssertThrowsError(try splitter.feed(Data("ok\n12345".utf8)))
    }

    // MARK: - Chunking

    func testEveryTwoWaySplitAndOneByteAtATimeGiveTheSameLines() throws {
        // Given a stream mixing terminators, empty lines, multi-byte text and an unterminated end
        let stream = Array("first\r\n\nsecond é🙂\rthird\r\r\n\r\nfourth\n\rlast".utf8)
        let expected = ["first", "", "second é🙂", "third", "", "", "fourth", "", "last"].map { Data($0.utf8) }
        // When it is cut in two at each byte boundary
        for cut in 0...stream.count {
            var splitter = Self.splitter()
            var lines = try splitter.feed(Data(stream[..<cut])) + splitter.feed(Data(stream[cut...]))
            if let last = splitter.finish() { lines.append(last) }
            // Then the lines are the same
            XCTAssertEqual(lines, expected, "cut at \(cut)")
        }
        // And so they are one byte at a time
        var splitter = Self.splitter()
        var lines: [Data] = []
        for byte in stream { lines += try splitter.feed(Data([byte])) }
        if let last = splitter.finish() { lines.append(last) }
        XCTAssertEqual(lines, expected)
    }

    // MARK: - Helpers

    private static func splitter() -> LineSplitter { LineSplitter(maximumLineLength: 1 << 16) }

    /// The lines of a whole stream fed at once, as text.
    private static func lines(_ text: String) throws -> [String] {
        var splitter = splitter()
        var lines = try splitter.feed(Data(text.utf8))
        if let last = splitter.finish() { lines.append(last) }
        return lines.map { String(decoding: $0, as: UTF8.self) }
    }
}
