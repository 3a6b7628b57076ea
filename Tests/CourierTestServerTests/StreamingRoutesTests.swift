import CourierTestServer
import Foundation
import XCTest

/// `/sse` and `/ndjson`.
final class StreamingRoutesTests: ServerTestCase {
    /// Event `id` in the default shape.
    private func event(_ id: Int, eol: String = "\n") -> String {
        "id: \(id)\(eol)data: event \(id)\(eol)\(eol)"
    }

    /// NDJSON line `index` in the default shape.
    private func line(_ index: Int) -> String {
        "{\"index\":\(index),\"text\":\"item \(index)\"}\n"
    }

    // MARK: - SSE

    func testSSEFramesEventsAndEndsWithTheChunkedTerminator() throws {
        let response = try fetch("GET", "/sse?count=3")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.header("Content-Type"), "text/event-stream")
        XCTAssertEqual(response.header("Cache-Control"), "no-cache")
        XCTAssertEqual(response.header("Transfer-Encoding"), "chunked")
        XCTAssertNil(response.header("Content-Length"))
        XCTAssertTrue(response.wasChunked)
        XCTAssertFalse(response.truncated)
        XCTAssertEqual(response.text, (1...3).map { event($0) }.joined())
    }

    func testSSEDefaultsToTenEvents() throws {
        XCTAssertEqual(try fetch("GET", "/sse").text, (1...10).map { event($0) }.joined())
    }

    func testSSERetryCommentsEventNameDataLinesAndPadding() throws {
        let response = try fetch("GET", "/sse?count=2&retry=1500&comments=1&event=tick&data_lines=2&pad=3")
        XCTAssertEqual(
            response.text,
            """
            retry: 1500

            : keep-alive
            id: 1
            event: tick
            data: event 1 line 1
            data: event 1 line 2xxx

            : keep-alive
            id: 2
            event: tick
            data: event 2 line 1
            data: event 2 line 2xxx


            """)
    }

    func testSSEPaddingMakesEventsLargerThanABatch() throws {
        let pad = 100_000
        let response = try fetch("GET", "/sse?count=3&pad=\(pad)")
        let padding = String(repeating: "x", count: pad)
        XCTAssertEqual(response.text, (1...3).map { "id: \($0)\ndata: event \($0)\(padding)\n\n" }.joined())
    }

    func testSSEResumesAfterLastEventIDAndAnswers204WhenEverythingWasSent() throws {
        let client = try connect()
        let resumed = try client.request("GET", "/sse?count=10&retry=500", headers: [("Last-Event-ID", "7")])
        XCTAssertEqual(resumed.status, 200)
        XCTAssertEqual(resumed.text, "retry: 500\n\n" + (8...10).map { event($0) }.joined())

        // 204 on the same connection: it stays usable, with neither a body nor its framing.
        let done = try client.request("GET", "/sse?count=10&retry=500", headers: [("Last-Event-ID", "10")])
        XCTAssertEqual(done.status, 204)
        XCTAssertNil(done.header("Transfer-Encoding"))
        XCTAssertNil(done.header("Content-Length"))
        XCTAssertEqual(try client.request("GET", "/sse?count=0").status, 204)
        XCTAssertEqual(try client.request("GET", "/sse?count=1", headers: [("Last-Event-ID", "")]).text, event(1))
        XCTAssertEqual(
            try client.request("GET", "/sse?count=5", headers: [("Last-Event-ID", "0")]).text, (1...5).map { event($0) }.joined())
    }

    func testSSELineEndingsAndBOM() throws {
        XCTAssertEqual(
            try fetch("GET", "/sse?count=2&line_ending=crlf&retry=10").text,
            "retry: 10\r\n\r\n" + event(1, eol: "\r\n") + event(2, eol: "\r\n"))
        XCTAssertEqual(
            try fetch("GET", "/sse?count=2&line_ending=cr&comments=1").text,
            ": keep-alive\r" + event(1, eol: "\r") + ": keep-alive\r" + event(2, eol: "\r"))
        XCTAssertEqual(try fetch("GET", "/sse?count=1&line_ending=LF").text, event(1))

        let bom = try fetch("GET", "/sse?count=1&bom=1&retry=5")
        XCTAssertEqual(bom.body, Data([0xEF, 0xBB, 0xBF]) + Data(("retry: 5\n\n" + event(1)).utf8))
    }

    func testSSEDropAfterClosesWithoutTheTerminator() throws {
        let client = try connect()
        let response = try client.request("GET", "/sse?count=10&drop_after=3")
        XCTAssertEqual(response.status, 200)
        XCTAssertNil(response.header("Connection"), "a dropped connection is not announced")
        XCTAssertTrue(response.truncated)
        XCTAssertEqual(response.text, (1...3).map { event($0) }.joined())
        XCTAssertFalse(client.sawReset)
        XCTAssertTrue(client.serverClosed(within: 2))
    }

    func testSSEDropAfterCountsEventsOnThisConnection() throws {
        let response = try fetch("GET", "/sse?count=10&drop_after=3&retry=1", headers: [("Last-Event-ID", "4")])
        XCTAssertTrue(response.truncated)
        XCTAssertEqual(response.text, "retry: 1\n\n" + (5...7).map { event($0) }.joined())

        // Fewer events left than drop_after: the stream simply ends.
        let tail = try fetch("GET", "/sse?count=10&drop_after=3&drop_mid=1", headers: [("Last-Event-ID", "7")])
        XCTAssertFalse(tail.truncated)
        XCTAssertEqual(tail.text, (8...10).map { event($0) }.joined())

        let none = try fetch("GET", "/sse?count=10&drop_after=0&bom=1")
        XCTAssertTrue(none.truncated)
        XCTAssertEqual(none.body, Data([0xEF, 0xBB, 0xBF]))
    }

    func testSSEDropMidCutsTheNextEventInsideItsFirstDataLine() throws {
        let plain = try fetch("GET", "/sse?count=10&drop_after=2&drop_mid=1")
        XCTAssertTrue(plain.truncated)
        // "event 3" is 7 bytes: the cut keeps 3 of them.
        XCTAssertEqual(plain.text, event(1) + event(2) + "id: 3\ndata: eve")

        let named = try fetch("GET", "/sse?count=10&drop_after=0&drop_mid=1&event=e&data_lines=3&interval_ms=10")
        XCTAssertTrue(named.truncated)
        // "event 1 line 1" is 14 bytes: the cut keeps 7.
        XCTAssertEqual(named.text, "id: 1\nevent: e\ndata: event 1")
    }

    func testSSEBatchesUnpacedEventsIntoLargeChunks() throws {
        let count = 100_000
        let client = try connect(timeout: 60)
        try client.sendRequest("GET", "/sse?count=\(count)", headers: [("Connection", "close")])
        let wire = try client.readToEnd()
        let (sizes, payload, terminated) = try Self.dechunk(wire)
        XCTAssertTrue(terminated)
        let expected = (1...count).map { event($0) }.joined()
        XCTAssertEqual(payload.count, expected.utf8.count)
        XCTAssertTrue(payload == Data(expected.utf8), "the payload differs from events 1…\(count)")
        // Batched: every chunk but the last holds at least 64 KiB of events.
        XCTAssertLessThan(sizes.count, expected.utf8.count / (64 * 1024) + 2)
        XCTAssertTrue(sizes.dropLast().allSatisfy { $0 >= 64 * 1024 }, "chunk sizes: \(sizes.prefix(10))…")
    }

    func testSSEPacedEventsArriveOneChunkEach() throws {
        let started = Date()
        let client = try connect()
        try client.sendRequest("GET", "/sse?count=3&interval_ms=100&retry=7", headers: [("Connection", "close")])
        let (sizes, payload, terminated) = try Self.dechunk(try client.readToEnd())
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 0.19)
        XCTAssertTrue(terminated)
        XCTAssertEqual(String(decoding: payload, as: UTF8.self), "retry: 7\n\n" + (1...3).map { event($0) }.joined())
        XCTAssertEqual(sizes, [("retry: 7\n\n" + event(1)).utf8.count, event(2).utf8.count, event(3).utf8.count])
    }

    func testStopInterruptsTheIntervalBetweenEvents() throws {
        let client = try connect()
        try client.sendRequest("GET", "/sse?count=1000&interval_ms=60000")
        XCTAssertTrue(waitUntil { self.server.requests.count == 1 })
        let started = Date()
        server.stop()
        XCTAssertLessThan(Date().timeIntervalSince(started), 3)
        let response = try client.readResponse()
        XCTAssertTrue(response.truncated)
        XCTAssertEqual(response.text, event(1))
    }

    func testAClientThatLeavesMidStreamFreesTheConnection() throws {
        let client = try connect()
        try client.sendRequest("GET", "/sse?count=10000000&pad=1000")
        XCTAssertTrue(waitUntil { self.server.requests.count == 1 })
        client.close()
        XCTAssertEqual(try fetch("GET", "/get").status, 200)
        let started = Date()
        server.stop()
        XCTAssertLessThan(Date().timeIntervalSince(started), 3)
    }

    func testSSEHeadSendsTheHeadOnly() throws {
        let client = try connect()
        let response = try client.request("HEAD", "/sse?count=3")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.header("Transfer-Encoding"), "chunked")
        XCTAssertEqual(try client.request("GET", "/sse?count=1").text, event(1), "nothing followed the head")
    }

    func testSSERejectsInvalidParameters() throws {
        for query in [
            "count=-1", "count=10000001", "retry=x", "comments=2", "data_lines=0", "data_lines=101",
            "pad=1048577", "interval_ms=60001", "line_ending=crcr", "bom=maybe", "drop_after=-1",
            "drop_mid=x", "event=a%0Adata:%20injected",
        ] {
            XCTAssertEqual(try fetch("GET", "/sse?\(query)").status, 400, query)
        }
        XCTAssertEqual(try fetch("GET", "/sse", headers: [("Last-Event-ID", "abc")]).status, 400)
        XCTAssertEqual(try fetch("GET", "/sse", headers: [("Last-Event-ID", "-1")]).status, 400)
    }

    // MARK: - NDJSON

    func testNDJSONLines() throws {
        let response = try fetch("GET", "/ndjson?count=3")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.header("Content-Type"), "application/x-ndjson")
        XCTAssertTrue(response.wasChunked)
        XCTAssertFalse(response.truncated)
        XCTAssertEqual(response.text, (1...3).map(line).joined())
        for text in response.text.split(separator: "\n") {
            XCTAssertNoThrow(try JSONSerialization.jsonObject(with: Data(text.utf8)))
        }
        XCTAssertEqual(try fetch("GET", "/ndjson").text, (1...10).map(line).joined())
        let empty = try fetch("GET", "/ndjson?count=0")
        XCTAssertEqual(empty.status, 200)
        XCTAssertFalse(empty.truncated)
        XCTAssertEqual(empty.body, Data())
    }

    func testNDJSONPadAndBadLine() throws {
        XCTAssertEqual(
            try fetch("GET", "/ndjson?count=2&pad=4").text,
            "{\"index\":1,\"text\":\"item 1\",\"pad\":\"xxxx\"}\n{\"index\":2,\"text\":\"item 2\",\"pad\":\"xxxx\"}\n")
        let bad = try fetch("GET", "/ndjson?count=3&bad_line=2")
        XCTAssertEqual(bad.text, line(1) + "{\"index\":2,\n" + line(3))
        let lines = bad.text.split(separator: "\n").map { Data($0.utf8) }
        XCTAssertNoThrow(try JSONSerialization.jsonObject(with: lines[0]))
        XCTAssertThrowsError(try JSONSerialization.jsonObject(with: lines[1]))
        XCTAssertNoThrow(try JSONSerialization.jsonObject(with: lines[2]))
    }

    func testNDJSONDropAfterAndDropMid() throws {
        let client = try connect()
        let dropped = try client.request("GET", "/ndjson?count=5&drop_after=2")
        XCTAssertTrue(dropped.truncated)
        XCTAssertEqual(dropped.text, line(1) + line(2))
        XCTAssertFalse(client.sawReset)

        let cut = try fetch("GET", "/ndjson?count=5&drop_after=1&drop_mid=1&interval_ms=5")
        XCTAssertTrue(cut.truncated)
        // Line 2 without its newline is 27 bytes: the cut keeps 13.
        XCTAssertEqual(cut.text, line(1) + "{\"index\":2,\"t")
    }

    func testNDJSONRejectsInvalidParameters() throws {
        for query in ["count=x", "bad_line=0", "pad=-1", "interval_ms=-5", "drop_after=z"] {
            XCTAssertEqual(try fetch("GET", "/ndjson?\(query)").status, 400, query)
        }
    }

    func testIndexListsTheStreamingRoutes() throws {
        let text = try fetch("GET", "/").text
        XCTAssertTrue(text.contains("/sse"))
        XCTAssertTrue(text.contains("/ndjson"))
    }

    // MARK: - Helpers

    /// Splits a raw chunked response (head and body, read to the end) into its chunk sizes and
    /// payload; `terminated` tells whether the zero-size last chunk arrived.
    private static func dechunk(_ wire: Data) throws -> (sizes: [Int], payload: Data, terminated: Bool) {
        let bytes = [UInt8](wire)
        let crlf: [UInt8] = [13, 10]
        func find(_ pattern: [UInt8], from start: Int) -> Int? {
            guard bytes.count >= pattern.count, start <= bytes.count - pattern.count else { return nil }
            return (start...(bytes.count - pattern.count)).first { bytes[$0..<($0 + pattern.count)].elementsEqual(pattern) }
        }
        guard let headEnd = find(crlf + crlf, from: 0) else { throw RawClientError(description: "no response head") }
        var offset = headEnd + 4
        var sizes: [Int] = []
        var payload = Data()
        while let lineEnd = find(crlf, from: offset) {
            guard let size = Int(String(decoding: bytes[offset..<lineEnd], as: UTF8.self), radix: 16) else {
                throw RawClientError(description: "bad chunk size line at \(offset)")
            }
            if size == 0 { return (sizes, payload, true) }
            let start = lineEnd + 2
            guard start + size + 2 <= bytes.count else { break }
            sizes.append(size)
            payload.append(contentsOf: bytes[start..<(start + size)])
            offset = start + size + 2
        }
        return (sizes, payload, false)
    }
}
