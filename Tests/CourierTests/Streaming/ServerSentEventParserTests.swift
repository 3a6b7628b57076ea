import Foundation
import XCTest
@testable import Courier

final class ServerSentEventParserTests: XCTestCase {
    // MARK: - The standard's examples

    func testStockQuoteExampleJoinsDataLinesWithNewlines() throws {
        let events = try Self.parse("data: YHOO\ndata: +2\ndata: 10\n\n")
        XCTAssertEqual(events, [ServerSentEvent(data: "YHOO\n+2\n10")])
    }

    func testIDsCarryOverUntilABareIDClearsThem() throws {
        // Given the standard's example of a comment, then events with, without and after an `id`
        let stream = """
            : test stream

            data: first event
            id: 1

            data:second event
            id

            data:  third event


            """
        // When it is parsed
        let events = try Self.parse(stream)
        // Then a bare `id` is an empty ID, and only one space after the colon is dropped
        XCTAssertEqual(
            events,
            [
                ServerSentEvent(data: "first event", id: "1", lastEventID: "1"),
                ServerSentEvent(data: "second event", id: "", lastEventID: ""),
                ServerSentEvent(data: " third event", id: nil, lastEventID: ""),
            ])
    }

    func testBareDataLinesAreEmptyValuesAndTheLastBlockWaitsForItsEmptyLine() throws {
        // The standard's example: "data" alone is an empty value, two of them make one newline,
        // and the final block is never dispatched because the stream ends without an empty line.
        var parser = Self.parser()
        let events = try parser.feed(Data("data\n\ndata\ndata\n\ndata:".utf8))
        XCTAssertEqual(events, [ServerSentEvent(data: ""), ServerSentEvent(data: "\n")])
        XCTAssertEqual(parser.finish(), [])
    }

    func testOneSpaceAfterTheColonIsDroppedAndNoMore() throws {
        let events = try Self.parse("data:test\n\ndata: test\n\ndata:\n\ndata: \n\ndata:  two\n\ndata:\ttab\n\n")
        XCTAssertEqual(events.map(\.data), ["test", "test", "", "", " two", "\ttab"])
    }

    func testAColonInTheValueIsKept() throws {
        let events = try Self.parse("data: a: b:c\n\n")
        XCTAssertEqual(events.map(\.data), ["a: b:c"])
    }

    func testAStreamOfOnlyCommentsDispatchesNothing() throws {
        var parser = Self.parser()
        parser.lastEventID = "seed"
        let events = try parser.feed(Data(":\n: keep-alive\n\n:data: no\r\n\r:x\r\r".utf8))
        XCTAssertEqual(events, [])
        XCTAssertEqual(parser.lastEventID, "seed")
        XCTAssertNil(parser.reconnectionTime)
        XCTAssertEqual(parser.bufferedByteCount, 0)
    }

    // MARK: - Fields

    func testTheEventFieldNamesTheTypeUntilTheBlockEnds() throws {
        let events = try Self.parse("event: add\ndata: 1\n\nevent: a\nevent: b\ndata: 2\n\nevent: add\nevent:\ndata: 3\n\ndata: 4\n\n")
        XCTAssertEqual(events.map(\.event), ["add", "b", "message", "message"])
    }

    func testABlockWithoutDataDispatchesNothingAndForgetsItsEventType() throws {
        let events = try Self.parse("event: lonely\n\ndata: x\n\n")
        XCTAssertEqual(events, [ServerSentEvent(event: "message", data: "x")])
    }

    func testAnIDWithoutDataStillBecomesTheLastEventID() throws {
        // Given a block with only an `id`, then one with only data
        var parser = Self.parser()
        let events = try parser.feed(Data("id: 7\n\ndata: x\n\n".utf8))
        // Then the ID is committed by the empty line, and the next event reports it but has no ID of its own
        XCTAssertEqual(events, [ServerSentEvent(data: "x", id: nil, lastEventID: "7")])
        XCTAssertEqual(parser.lastEventID, "7")
    }

    func testAnIDContainingNULIsIgnored() throws {
        var parser = Self.parser()
        let events = try parser.feed(Data("id: 1\ndata: a\n\nid: 2\u{0}3\ndata: b\n\nid: \u{0}\n\n".utf8))
        XCTAssertEqual(
            events,
            [ServerSentEvent(data: "a", id: "1", lastEventID: "1"), ServerSentEvent(data: "b", id: nil, lastEventID: "1")])
        XCTAssertEqual(parser.lastEventID, "1")
    }

    func testAnIDIsOnlyCommittedWhenItsBlockEnds() throws {
        var parser = Self.parser()
        _ = try parser.feed(Data("id: 1\n\nid: 2\ndata: unfinished\n".utf8))
        XCTAssertEqual(parser.lastEventID, "1")
        XCTAssertEqual(parser.finish(), [])
        XCTAssertEqual(parser.lastEventID, "1", "an event cut off by the end of the stream never happened")
    }

    func testRetryWithDigitsSetsTheReconnectionTimeAndAnythingElseIsIgnored() throws {
        // Given a valid retry, then values that are not only ASCII digits
        var parser = Self.parser()
        let events = try parser.feed(
            Data(
                "retry: 1500\ndata: a\n\nretry: 10a\nretry: -1\nretry: 1.5\nretry:  20\nretry: +3\nretry: ٣\nretry:\nretry\ndata: b\n\n"
                    .utf8))
        // Then the first sets the time and is reported on its event; the others change nothing
        XCTAssertEqual(events.map(\.retry), [.milliseconds(1500), nil])
        XCTAssertEqual(parser.reconnectionTime, .milliseconds(1500))
    }

    func testRetryTakesEffectWithoutAnEvent() throws {
        var parser = Self.parser()
        XCTAssertEqual(try parser.feed(Data("retry: 0\n\nretry: 007\n".utf8)), [])
        XCTAssertEqual(parser.reconnectionTime, .milliseconds(7))
    }

    func testARetryTooLargeForIntIsClampedToIntMaxMilliseconds() throws {
        // Given a value of many more digits than Int holds
        var parser = Self.parser()
        let events = try parser.feed(Data("retry: 99999999999999999999999999999999\ndata: x\n\n".utf8))
        // Then it is kept as the longest representable wait rather than trapping or being ignored
        XCTAssertEqual(parser.reconnectionTime, .milliseconds(Int.max))
        XCTAssertEqual(events.first?.retry, .milliseconds(Int.max))
        // And the boundary itself is exact, while a non-digit after an overflow still invalidates the value
        _ = try parser.feed(Data("retry: \(Int.max)\n".utf8))
        XCTAssertEqual(parser.reconnectionTime, .milliseconds(Int.max))
        _ = try parser.feed(Data("retry: 5\nretry: 99999999999999999999999x\n".utf8))
        XCTAssertEqual(parser.reconnectionTime, .milliseconds(5))
    }

    func testRetryDigitsAreReadInBaseTen() {
        func milliseconds(_ text: String) -> Int? {
            Array(text.utf8).withUnsafeBytes { ServerSentEventParser.milliseconds($0) }
        }
        XCTAssertEqual(milliseconds("0"), 0)
        XCTAssertEqual(milliseconds("0012"), 12)
        XCTAssertEqual(milliseconds("9223372036854775807"), Int.max)
        XCTAssertEqual(milliseconds("9223372036854775808"), Int.max)
        XCTAssertNil(milliseconds(""))
        XCTAssertNil(milliseconds(" 1"))
        XCTAssertNil(milliseconds("1e3"))
    }

    func testUnknownFieldsAndFieldNamesWithSpacesAreIgnored() throws {
        let events = try Self.parse("data : not data\nfoo: bar\nDATA: upper\nevent : not event\ndata: yes\n\n")
        XCTAssertEqual(events, [ServerSentEvent(data: "yes")])
    }

    func testInvalidUTF8BecomesReplacementCharacters() throws {
        var bytes = Array("data: a".utf8) + [0xFF, 0xC3] + Array("\nevent: t".utf8) + [0xE2, 0x82] + Array("\n\n".utf8)
        var parser = Self.parser()
        var events = try parser.feed(Data(bytes))
        XCTAssertEqual(events, [ServerSentEvent(event: "t\u{FFFD}", data: "a\u{FFFD}\u{FFFD}")])
        // A multi-byte character split across chunks is decoded whole.
        bytes = Array("data: é🙂\n\n".utf8)
        events = try parser.feed(Data(bytes[..<8])) + parser.feed(Data(bytes[8..<11])) + parser.feed(Data(bytes[11...]))
        XCTAssertEqual(events.map(\.data), ["é🙂"])
    }

    // MARK: - Line ends

    func testLFCRLFAndCREachEndALine() throws {
        let expected = [ServerSentEvent(data: "a\nb"), ServerSentEvent(event: "x", data: "c")]
        XCTAssertEqual(try Self.parse("data: a\ndata: b\n\nevent: x\ndata: c\n\n"), expected)
        XCTAssertEqual(try Self.parse("data: a\r\ndata: b\r\n\r\nevent: x\r\ndata: c\r\n\r\n"), expected)
        XCTAssertEqual(try Self.parse("data: a\rdata: b\r\revent: x\rdata: c\r\r"), expected)
        XCTAssertEqual(try Self.parse("data: a\rdata: b\r\n\nevent: x\ndata: c\r\r\n"), expected)
    }

    func testACRAtTheEndOfAChunkAndAnLFAtTheStartOfTheNextAreOneLineEnd() throws {
        // Given a CRLF cut between two chunks inside a block
        var parser = Self.parser()
        var events = try parser.feed(Data("data: a\r".utf8))
        events += try parser.feed(Data("\ndata: b\r".utf8))
        // When the block ends with a CR and an LF that also arrive apart
        events += try parser.feed(Data("\r".utf8))
        XCTAssertEqual(events, [ServerSentEvent(data: "a\nb")], "the CR ends the block at once")
        events = try parser.feed(Data("\ndata: c\n\n".utf8))
        // Then no extra empty line was seen, which would have split "a" and "b" or dispatched twice
        XCTAssertEqual(events, [ServerSentEvent(data: "c")])
    }

    func testACRFollowedByAnotherCRIsAnEmptyLine() throws {
        var parser = Self.parser()
        var events = try parser.feed(Data("data: a\r".utf8))
        events += try parser.feed(Data("\r".utf8))
        XCTAssertEqual(events, [ServerSentEvent(data: "a")])
    }

    // MARK: - Byte order mark

    func testOneLeadingByteOrderMarkIsDropped() throws {
        XCTAssertEqual(try Self.parse("\u{FEFF}data: a\n\n"), [ServerSentEvent(data: "a")])
    }

    func testOnlyOneByteOrderMarkIsDropped() throws {
        // The second mark becomes part of the first field's name, which then is not "data".
        XCTAssertEqual(try Self.parse("\u{FEFF}\u{FEFF}data: a\n\ndata: b\n\n"), [ServerSentEvent(data: "b")])
    }

    func testAByteOrderMarkLaterInTheStreamIsText() throws {
        XCTAssertEqual(
            try Self.parse("data: a\n\n\u{FEFF}data: b\n\ndata: \u{FEFF}c\n\n"),
            [ServerSentEvent(data: "a"), ServerSentEvent(data: "\u{FEFF}c")])
    }

    func testAByteOrderMarkSplitAcrossChunksIsDropped() throws {
        var parser = Self.parser()
        var events = try parser.feed(Data([0xEF]))
        events += try parser.feed(Data()) + parser.feed(Data([0xBB]))
        events += try parser.feed(Data([0xBF]) + Data("data: a\n\n".utf8))
        XCTAssertEqual(events, [ServerSentEvent(data: "a")])
    }

    func testTheStartOfAByteOrderMarkThatIsNotOneStaysInTheLine() throws {
        // Given a line limit of 3 and a stream starting with two bytes of a mark, then others
        var parser = ServerSentEventParser(maximumLineLength: 3, maximumEventSize: 100)
        XCTAssertEqual(try parser.feed(Data([0xEF, 0xBB])), [])
        XCTAssertEqual(parser.bufferedByteCount, 2)
        // When two more bytes of the same line arrive
        // Then the held bytes count towards the line: they were text, not a mark
        XCTAssertThrowsError(try parser.feed(Data("ab".utf8)))
        // And a prefix followed by a line end makes an ignored line, not a lost one
        parser = Self.parser()
        XCTAssertEqual(try parser.feed(Data([0xEF])), [])
        XCTAssertEqual(try parser.feed(Data("\ndata:x\n\n".utf8)), [ServerSentEvent(data: "x")])
    }

    func testResetExpectsAByteOrderMarkAgain() throws {
        var parser = Self.parser()
        _ = try parser.feed(Data("\u{FEFF}data: a\n\n".utf8))
        parser.reset()
        XCTAssertEqual(try parser.feed(Data("\u{FEFF}data: b\n\n".utf8)), [ServerSentEvent(data: "b")])
    }

    // MARK: - End of stream and reconnection

    func testATrailingIncompleteEventIsDiscarded() throws {
        for tail in ["data: never", "data: never\n", "data: never\r\n", "event: x\ndata: never\n"] {
            var parser = Self.parser()
            XCTAssertEqual(try parser.feed(Data("data: one\n\n\(tail)".utf8)), [ServerSentEvent(data: "one")], tail)
            XCTAssertEqual(parser.finish(), [], tail)
            XCTAssertEqual(parser.bufferedByteCount, 0, tail)
        }
    }

    func testResetDropsThePartialEventButKeepsLastEventIDAndReconnectionTime() throws {
        // Given an event, a reconnection time, and a block cut off by a dropped connection
        var parser = Self.parser()
        _ = try parser.feed(Data("id: 41\nretry: 3000\ndata: a\n\nevent: half\nid: 42\ndata: cut".utf8))
        // When the parser is reset for the next connection
        parser.reset()
        // Then nothing of the half block survives, but the ID and the time do
        XCTAssertEqual(parser.lastEventID, "41")
        XCTAssertEqual(parser.reconnectionTime, .milliseconds(3000))
        XCTAssertEqual(parser.bufferedByteCount, 0)
        XCTAssertEqual(
            try parser.feed(Data("\ndata: b\n\n".utf8)), [ServerSentEvent(data: "b", lastEventID: "41")],
            "the partial line was dropped and the new connection's first line end ended an empty line")
    }

    func testASeededLastEventIDIsReportedUntilTheServerSendsAnother() throws {
        var parser = Self.parser()
        parser.lastEventID = "from-before"
        let events = try parser.feed(Data("data: a\n\nid: new\ndata: b\n\n".utf8))
        XCTAssertEqual(
            events,
            [ServerSentEvent(data: "a", lastEventID: "from-before"), ServerSentEvent(data: "b", id: "new", lastEventID: "new")])
    }

    func testDataSlicesAreReadFromTheirOwnIndices() throws {
        let whole = Data("xxxxdata: a\n\nyyyy".utf8)
        var parser = Self.parser()
        XCTAssertEqual(try parser.feed(whole[4..<13]), [ServerSentEvent(data: "a")])
    }

    // MARK: - Limits

    func testALineOverTheLimitThrowsAndOneAtTheLimitDoesNot() throws {
        var parser = ServerSentEventParser(maximumLineLength: 10, maximumEventSize: 100)
        XCTAssertEqual(try parser.feed(Data("data: 1234\r\n\r\n".utf8)), [ServerSentEvent(data: "1234")])
        XCTAssertThrowsError(try parser.feed(Data("data: 12345\n".utf8))) { error in
            let error = error as? CourierError
            XCTAssertEqual(error?.code, .responseTooLarge)
            XCTAssertTrue(error?.message.contains("line") == true, error?.message ?? "")
            XCTAssertTrue(error?.message.contains("10 bytes") == true, error?.message ?? "")
        }
        XCTAssertEqual(parser.bufferedByteCount, 0)
    }

    func testAnEndlessLineThrowsAsSoonAsItPassesTheLimitWithoutGrowing() throws {
        // Given a line that never ends, arriving in small chunks
        var parser = ServerSentEventParser(maximumLineLength: 1000, maximumEventSize: 1000)
        let chunk = Data(repeating: UInt8(ascii: "x"), count: 7)
        var fed = 0
        // When chunks are fed until the parser refuses
        do {
            while fed < 10_000 {
                _ = try parser.feed(chunk)
                fed += chunk.count
                XCTAssertLessThanOrEqual(parser.bufferedByteCount, 1000)
            }
            XCTFail("the line was never refused")
        } catch {
            // Then it refused with the first chunk that passed the limit, and let go of the line
            XCTAssertEqual(error.code, .responseTooLarge)
            XCTAssertEqual(fed, 994)
            XCTAssertEqual(parser.bufferedByteCount, 0)
        }
    }

    func testAnEventOverTheSizeLimitThrowsAndOneAtTheLimitDoesNot() throws {
        // "1234" + "\n" + "567" is 8 bytes of data.
        var parser = ServerSentEventParser(maximumLineLength: 100, maximumEventSize: 8)
        XCTAssertEqual(try parser.feed(Data("data: 1234\ndata: 567\n\n".utf8)), [ServerSentEvent(data: "1234\n567")])
        XCTAssertThrowsError(try parser.feed(Data("data: 1234\ndata: 5678\n\n".utf8))) { error in
            let error = error as? CourierError
            XCTAssertEqual(error?.code, .responseTooLarge)
            XCTAssertTrue(error?.message.contains("event") == true, error?.message ?? "")
            XCTAssertTrue(error?.message.contains("8 bytes") == true, error?.message ?? "")
        }
        XCTAssertEqual(parser.bufferedByteCount, 0)
    }

    func testAnEndlessEventThrowsWithoutGrowingPastItsLimit() throws {
        // Given data lines that never reach an empty line
        var parser = ServerSentEventParser(maximumLineLength: 64, maximumEventSize: 4096)
        let line = Data("data: 0123456789\n".utf8)
        var lines = 0
        do {
            while lines < 10_000 {
                _ = try parser.feed(line)
                lines += 1
                XCTAssertLessThanOrEqual(parser.bufferedByteCount, 4096 + 1)
            }
            XCTFail("the event was never refused")
        } catch {
            // Then the line that would have passed 4096 bytes of data was refused: 372 lines of 11 bytes
            // (10 digits and the joining newline) is 4092, and one more value makes 4102.
            XCTAssertEqual(error.code, .responseTooLarge)
            XCTAssertEqual(lines, 372)
            XCTAssertEqual(parser.bufferedByteCount, 0)
        }
        // And after a reset the parser reads a new connection
        parser.reset()
        XCTAssertEqual(try parser.feed(Data("data: ok\n\n".utf8)), [ServerSentEvent(data: "ok")])
    }

    func testCommentsAndDispatchedEventsAreNotBuffered() throws {
        var parser = ServerSentEventParser(maximumLineLength: 64, maximumEventSize: 64)
        for _ in 0..<1000 {
            _ = try parser.feed(Data(": ping\ndata: 0123456789012345678901234567890123456789\n\n".utf8))
        }
        XCTAssertEqual(parser.bufferedByteCount, 0)
    }

    // MARK: - Chunking

    func testEveryTwoWaySplitOfAStreamGivesTheSameEvents() throws {
        // Given a short stream using every rule, with its events from one whole feed
        let stream = Array(
            "\u{FEFF}: hi\nid: 1\nevent: é\ndata: a🙂\r\ndata\r\n\r\nretry: 250\rdata:b\r\rid\ndata:  c\n\nid: x\u{0}\nignored\ndata: d\r\n\n"
                .utf8)
        let expected = [
            ServerSentEvent(event: "é", data: "a🙂\n", id: "1", lastEventID: "1"),
            ServerSentEvent(data: "b", lastEventID: "1", retry: .milliseconds(250)),
            ServerSentEvent(data: " c", id: "", lastEventID: ""),
            ServerSentEvent(data: "d", lastEventID: ""),
        ]
        XCTAssertEqual(try Self.parse(stream, chunkSize: stream.count), expected)
        // When it is cut in two at each byte boundary, then in three at each pair of boundaries
        for cut in 0...stream.count {
            var parser = Self.parser()
            let events = try parser.feed(Data(stream[..<cut])) + parser.feed(Data(stream[cut...]))
            // Then the events and the parser's state are the same
            XCTAssertEqual(events, expected, "cut at \(cut)")
            XCTAssertEqual(parser.lastEventID, "", "cut at \(cut)")
            XCTAssertEqual(parser.reconnectionTime, .milliseconds(250), "cut at \(cut)")
        }
        for first in 0...stream.count {
            for second in first...stream.count {
                var parser = Self.parser()
                let events =
                    try parser.feed(Data(stream[..<first])) + parser.feed(Data(stream[first..<second]))
                    + parser.feed(Data(stream[second...]))
                XCTAssertEqual(events, expected, "cuts at \(first) and \(second)")
            }
        }
    }

    func testAThousandEventStreamSplitAtEveryByteBoundaryGivesTheSameEvents() throws {
        // Given 1,000 events using every rule, and the events they are known to make
        let (stream, blocks, expected) = Self.thousandEvents()
        XCTAssertEqual(try Self.parse(stream, chunkSize: stream.count), expected)
        // When the stream is split at each byte boundary. After an empty line the parser keeps
        // only the last event ID, the reconnection time and a possible CR awaiting its LF, so a
        // cut only changes how the block around it is read: each cut is checked on that block,
        // from the parser's state at the block's start (the whole stream per cut would take
        // quadratic time). Cuts between blocks are exercised by building those states.
        var atBlockStart = Self.parser()
        XCTAssertEqual(try atBlockStart.feed(Data(stream[..<blocks[0].lowerBound])), [])
        for (index, block) in blocks.enumerated() {
            for cut in block.dropFirst() {
                var parser = atBlockStart
                let events =
                    try parser.feed(Data(stream[block.lowerBound..<cut])) + parser.feed(Data(stream[cut..<block.upperBound]))
                // Then each block makes its event, whatever the cut
                XCTAssertEqual(events, [expected[index]], "block \(index), cut at \(cut)")
            }
            XCTAssertEqual(try atBlockStart.feed(Data(stream[block])), [expected[index]], "block \(index)")
        }
    }

    func testAThousandEventStreamFedOneByteAtATimeGivesTheSameEvents() throws {
        let (stream, _, expected) = Self.thousandEvents()
        var parser = Self.parser()
        var events: [ServerSentEvent] = []
        for byte in stream { events += try parser.feed(Data([byte])) }
        XCTAssertEqual(events, expected)
        XCTAssertEqual(parser.finish(), [])
        // Other chunk sizes put every boundary next to different neighbours.
        for size in [2, 3, 5, 8, 13, 64, 4096] {
            XCTAssertEqual(try Self.parse(stream, chunkSize: size), expected, "chunks of \(size)")
        }
    }

    // MARK: - Helpers

    private static func parser() -> ServerSentEventParser {
        ServerSentEventParser(maximumLineLength: 1 << 16, maximumEventSize: 1 << 20)
    }

    /// The events of a whole stream fed at once, with the end of the stream.
    private static func parse(_ text: String) throws -> [ServerSentEvent] {
        try parse(Array(text.utf8), chunkSize: max(1, text.utf8.count))
    }

    private static func parse(_ bytes: [UInt8], chunkSize: Int) throws -> [ServerSentEvent] {
        var parser = parser()
        var events: [ServerSentEvent] = []
        for start in stride(from: 0, to: bytes.count, by: chunkSize) {
            events += try parser.feed(Data(bytes[start..<min(start + chunkSize, bytes.count)]))
        }
        return events + parser.finish()
    }

    /// A byte order mark and 1,000 blocks mixing LF, CRLF and CR, comments, IDs (empty ones
    /// too), event types, multi-line and empty data, retry, unknown fields and multi-byte text;
    /// the range of each block (with its empty line), and the event each makes.
    private static func thousandEvents() -> (stream: [UInt8], blocks: [Range<Int>], events: [ServerSentEvent]) {
        var stream: [UInt8] = [0xEF, 0xBB, 0xBF]
        var blocks: [Range<Int>] = []
        var events: [ServerSentEvent] = []
        var lastEventID = ""
        for index in 0..<1000 {
            let end = ["\n", "\r\n", "\r"][index % 3]
            var lines: [String] = []
            if index % 7 == 0 { lines.append(": comment \(index)") }
            var id: String?
            if index % 5 == 0 {
                id = "\(index)"
                lines.append("id: \(index)")
            }
            if index % 25 == 0 {
                id = ""
                lines.append("id")
            }
            var type = "message"
            if index % 4 != 0 {
                type = "e\(index % 4)"
                lines.append("event:\(type)")
            }
            let data: String
            if index % 6 == 0 {
                lines += ["data:é\(index)", "data", "data: 🙂 x"]
                data = "é\(index)\n\n🙂 x"
            } else {
                lines.append("data: \(index) ü")
                data = "\(index) ü"
            }
            var retry: Duration?
            if index % 50 == 0 {
                retry = .milliseconds(index * 10)
                lines.append("retry: \(index * 10)")
            }
            if index % 9 == 0 { lines.append("unknown: field") }
            if let id { lastEventID = id }
            let start = stream.count
            for line in lines { stream += Array((line + end).utf8) }
            stream += Array(end.utf8)
            blocks.append(start..<stream.count)
            events.append(ServerSentEvent(event: type, data: data, id: id, lastEventID: lastEventID, retry: retry))
        }
        return (stream, blocks, events)
    }
}
