import XCTest
@testable import Courier

/// How ``InputLineBuffer`` cuts an input's bytes into lines (`courier get -i`'s), without a process
/// or a socket.
final class InputLineBufferTests: XCTestCase {
    /// Every line `chunks` make, fed one chunk at a time, then (`atEnd`) the end of input.
    private func lines(_ chunks: [String], atEnd: Bool = true) throws -> [String] {
        var buffer = InputLineBuffer()
        var lines: [String] = []
        for chunk in chunks {
            buffer.append(Array(chunk.utf8))
            while let line = try buffer.next() { lines.append(String(decoding: line.bytes, as: UTF8.self)) }
        }
        while atEnd, let line = try buffer.next(atEnd: true) { lines.append(String(decoding: line.bytes, as: UTF8.self)) }
        return lines
    }

    func testLinesAreCutAtNewlinesWhereverTheChunksEnd() throws {
        XCTAssertEqual(try lines(["a\nb", "c\n\nd"]), ["a", "bc", "", "d"])
        XCTAssertEqual(try lines(["one\r\n", "two\r", "\nthree\n"]), ["one", "two", "three"], "a \\r before \\n is dropped")
        XCTAssertEqual(try lines(["x\n"]), ["x"], "no empty line after the last newline")
        XCTAssertEqual(try lines([]), [])
    }

    func testLinesAreNumberedFromOne() throws {
        var buffer = InputLineBuffer()
        buffer.append(Array("a\n\nb\n".utf8))
        XCTAssertEqual(try buffer.next()?.number, 1)
        XCTAssertEqual(try buffer.next()?.number, 2)
        XCTAssertEqual(try buffer.next()?.number, 3)
        XCTAssertNil(try buffer.next())
    }

    func testALineOfExactlyTheLimitIsAcceptedWithOrWithoutCarriageReturn() throws {
        let longest = String(repeating: "a", count: InputLineBuffer.maximumLineBytes)
        XCTAssertEqual(try lines([longest + "\n"]).map(\.utf8.count), [InputLineBuffer.maximumLineBytes])
        XCTAssertEqual(try lines([longest + "\r", "\n"]).map(\.utf8.count), [InputLineBuffer.maximumLineBytes])
        XCTAssertEqual(try lines([longest]).map(\.utf8.count), [InputLineBuffer.maximumLineBytes], "last line, no newline")
    }

    func testALineOverTheLimitIsRefusedWithItsNumber() {
        let over = String(repeating: "a", count: InputLineBuffer.maximumLineBytes + 1)
        // With its newline, without one and the input still open, at the end of input, with `\r\n`.
        for (chunks, atEnd) in [
            (["ok\n", over + "\n"], false), (["ok\n", over], false), (["ok\n", over], true), (["ok\n", over + "\r\n"], false),
        ] {
            XCTAssertThrowsError(try lines(chunks, atEnd: atEnd)) { error in
                XCTAssertEqual(error as? InputLineBuffer.LineTooLong, InputLineBuffer.LineTooLong(line: 2))
            }
        }
    }

    func testALineWithoutEndIsRefusedOnceItIsOverTheLimitNotAtItsEnd() {
        // Given a line that keeps coming in chunks and never ends
        var buffer = InputLineBuffer()
        let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 16 * 1024)
        var refusedAfter: Int?
        for count in 1...100 {
            buffer.append(chunk)
            do {
                _ = try buffer.next()
            } catch {
                refusedAfter = count
                break
            }
        }
        // Then it is refused as soon as it passes the limit, having held little more than it
        XCTAssertEqual(refusedAfter, InputLineBuffer.maximumLineBytes / chunk.count + 1)
        XCTAssertLessThanOrEqual(buffer.heldBytes, InputLineBuffer.maximumLineBytes + chunk.count)
    }

    func testTheBufferHoldsAboutOneLineAndOneChunkHoweverLongTheInput() throws {
        var buffer = InputLineBuffer()
        let chunk = Array(String(repeating: "http://h/file out=name\n", count: 2000).utf8)
        for _ in 0..<50 {
            buffer.append(chunk)
            while try buffer.next() != nil {}
            XCTAssertLessThanOrEqual(buffer.heldBytes, chunk.count)
        }
        XCTAssertEqual(buffer.count, 100_000)
    }

    // MARK: - The ledger
}
