import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `events(for:)` over real sockets: parsing, reconnection with `Last-Event-ID`, the 204 end,
/// refusals, overflow and idle gaps.
final class EventStreamTests: CourierTestCase {
    private let quick = ReconnectPolicy(
        delay: .milliseconds(20), minimumDelay: .milliseconds(10), maximumDelay: .milliseconds(200), maximumAttempts: 3)

    private func collect(_ stream: EventStream, limit: Int = .max) async throws(CourierError) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        for try await event in stream {
            events.append(event)
            if events.count >= limit { break }
        }
        return events
    }

    func testDroppedConnectionsReconnectWithLastEventIDAndTheConsumerSeesOneSequence() async throws {
        // Given a server that drops the connection after every 7 events and asks for 50 ms
        let stream = manager.events(for: request("/sse?count=20&drop_after=7&retry=50"), reconnection: quick)
        // When the events are read to the end
        let events = try await collect(stream)
        // Then ids 1…20 arrive once each, in order, and the end is the server's 204
        XCTAssertEqual(events.map(\.lastEventID), (1...20).map(String.init))
        XCTAssertEqual(events.map(\.data), (1...20).map { "event \($0)" })
        XCTAssertEqual(events.first?.event, "message")
        let lastIDs = server.requests.map { $0.header("Last-Event-ID") }
        XCTAssertEqual(lastIDs, [nil, "7", "14", "20"])
        XCTAssertEqual(server.requests.first?.header("Accept"), "text/event-stream")
        XCTAssertEqual(stream.statistics.connections, 4)
    }

    func testAnEventCutInTheMiddleIsDroppedAndComesBackWhole() async throws {
        let stream = manager.events(
            for: request("/sse?count=6&drop_after=2&drop_mid=1&data_lines=3"), reconnection: quick)
        let events = try await collect(stream)
        XCTAssertEqual(events.map(\.lastEventID), (1...6).map(String.init))
        XCTAssertEqual(events[2].data, "event 3 line 1\nevent 3 line 2\nevent 3 line 3")
    }

    func testTheWaitIsTheServersRetryCappedByThePolicy() async throws {
        // The server asks for an hour; the policy caps the wait at 200 ms.
        let clock = ContinuousClock()
        let start = clock.now
        let events = try await collect(
            manager.events(for: request("/sse?count=4&drop_after=2&retry=3600000"), reconnection: quick))
        XCTAssertEqual(events.count, 4)
        XCTAssertLessThan(clock.now - start, .seconds(3))
    }

    func testLineEndingsBOMCommentsAndEventNamesAreParsedOverTheWire() async throws {
        for ending in ["lf", "crlf", "cr"] {
            let events = try await collect(
                manager.events(
                    for: request("/sse?count=3&line_ending=\(ending)&bom=1&comments=1&event=tick&data_lines=2"),
                    reconnection: quick))
            XCTAssertEqual(events.count, 3, ending)
            XCTAssertEqual(events.map(\.event), ["tick", "tick", "tick"], ending)
            XCTAssertEqual(events.last?.data, "event 3 line 1\nevent 3 line 2", ending)
        }
    }

    func testEventsSplitAcrossManyTinyWritesAreParsedWhole() async throws {
        // Given a raw server that writes an event stream one byte at a time
        let body = Array("\u{FEFF}: hi\r\nid: 1\r\nevent: a\r\ndata: x\r\ndata:  y\r\n\r\nid: 2\rdata: z\r\r".utf8)
        let server = try ScriptedServer { _, _ in
            var steps: [ScriptedServer.Reply.Step] = [
                .send(ScriptedServer.Reply.head(status: 200, headers: [("Content-Type", "text/event-stream")]))
            ]
            for byte in body { steps += [.send(Data([byte])), .pause(milliseconds: 1)] }
            return ScriptedServer.Reply(steps)
        }
        defer { server.stop() }
        let (stream, _) = try await manager.bytes(from: server.url("/"))
        var events: [ServerSentEvent] = []
        for try await event in stream.events { events.append(event) }
        XCTAssertEqual(
            events,
            [
                ServerSentEvent(event: "a", data: "x\n y", id: "1", lastEventID: "1"),
                ServerSentEvent(data: "z", id: "2", lastEventID: "2"),
            ])
    }

    func testAnErrorStatusEndsTheStreamWithoutReconnecting() async throws {
        do {
            _ = try await collect(manager.events(for: request("/status/404"), reconnection: quick))
            XCTFail("a 404 must fail")
        } catch {
            XCTAssertEqual(error.code, .unacceptableStatusCode)
        }
        XCTAssertEqual(server.requests.count, 1)
    }

    func testAnotherContentTypeIsRefused() async throws {
        do {
            _ = try await collect(manager.events(for: request("/ndjson"), reconnection: quick))
            XCTFail("NDJSON is not an event stream")
        } catch {
            XCTAssertEqual(error.code, .unacceptableContentType)
        }
        XCTAssertEqual(server.requests.count, 1)
    }

    func testA204AtOnceIsAnEmptySequence() async throws {
        var request = request("/sse?count=5")
        request.setValue("5", forHTTPHeaderField: "Last-Event-ID")
        let events = try await collect(manager.events(for: request, reconnection: quick))
        XCTAssertEqual(events, [])
    }

    func testReconnectingStopsAfterThePolicysFailuresInARow() async throws {
        // Given a server that stops answering after the first connection
        let server = try ScriptedServer { _, index in
            if index == 0 {
                return .response(
                    status: 200, headers: [("Content-Type", "text/event-stream")], body: Data("id: 1\ndata: one\n\n".utf8))
            }
            return .bytes("")  // closes without a response
        }
        defer { server.stop() }
        var events: [ServerSentEvent] = []
        do {
            for try await event in manager.events(for: URLRequest(url: server.url("/")), reconnection: quick) {
                events.append(event)
            }
            XCTFail("the stream must give up")
        } catch {
            XCTAssertTrue(error.isTransport, "\(error)")
        }
        XCTAssertEqual(events.map(\.data), ["one"])
        // The first connection, then 1 + maximumAttempts failed ones.
        XCTAssertEqual(server.requests.count, 1 + 1 + quick.maximumAttempts)
        XCTAssertEqual(server.requests.last?.header("Last-Event-ID"), "1")
    }

    func testNeverReconnectEndsWithTheFirstResponse() async throws {
        // A response that ends normally ends the sequence…
        let all = try await collect(manager.events(for: request("/sse?count=5"), reconnection: .never))
        XCTAssertEqual(all.count, 5)
        // …and a dropped one fails it after the events it delivered, without a second request.
        server.clearRequests()
        var events: [ServerSentEvent] = []
        do {
            for try await event in manager.events(for: request("/sse?count=10&drop_after=3"), reconnection: .never) {
                events.append(event)
            }
            XCTFail("the drop must fail the sequence")
        } catch {
            XCTAssertEqual(error.code, .connectionLost)
        }
        XCTAssertEqual(events.count, 3)
        XCTAssertEqual(server.requests.count, 1)
    }

    func testASilentConnectionIsDroppedAndReconnectedByTheIdleTimeout() async throws {
        // Given events 2 s apart and an idle limit of 300 ms: each reconnection gets the next
        // event at once (the server answers Last-Event-ID), so the stream is faster than the drip.
        let policy = StreamPolicy(idleTimeout: .milliseconds(300))
        let clock = ContinuousClock()
        let start = clock.now
        let events = try await collect(
            manager.events(for: request("/sse?count=3&interval_ms=2000"), policy: policy, reconnection: quick))
        XCTAssertEqual(events.map(\.lastEventID), ["1", "2", "3"])
        XCTAssertLessThan(clock.now - start, .seconds(3))
        XCTAssertGreaterThan(server.requests.count, 1)
    }

    func testOverflowWithPauseReconnectsAfterTheConsumerDrainedAndLosesNothing() async throws {
        // Given 400 events of ~2 KB, 32 KiB allowed, and a consumer that stalls at the start
        let policy = StreamPolicy(bufferLimit: 32 * 1024, overflow: .pause)
        let stream = manager.events(for: request("/sse?count=400&pad=2000"), policy: policy, reconnection: quick)
        var iterator = stream.makeAsyncIterator()
        var events: [ServerSentEvent] = []
        if let first = try await iterator.next() { events.append(first) }
        try await Task.sleep(for: .milliseconds(300))
        while let event = try await iterator.next() { events.append(event) }
        XCTAssertEqual(events.map(\.lastEventID), (1...400).map(String.init))
        XCTAssertGreaterThan(stream.statistics.connections, 1)
        XCTAssertLessThanOrEqual(stream.statistics.buffer.highWaterMark, 32 * 1024 + 256 * 1024)
    }

    func testOverflowWithFailFailsTheSequence() async throws {
        let policy = StreamPolicy(bufferLimit: 32 * 1024, overflow: .fail)
        let stream = manager.events(for: request("/sse?count=400&pad=2000"), policy: policy, reconnection: quick)
        var iterator = stream.makeAsyncIterator()
        _ = try await iterator.next()
        try await Task.sleep(for: .milliseconds(300))
        do {
            while try await iterator.next() != nil {}
            XCTFail("the overflow must fail the sequence")
        } catch {
            XCTAssertEqual(error.code, .bufferOverflow)
        }
    }

    func testCancellingTheConsumerStopsTheStreamDuringTheReconnectWait() async throws {
        let manager = manager!
        let url = server.url("/sse?count=10&drop_after=1&retry=10000")
        let consumer = Task { () -> CourierError? in
            do throws(CourierError) {
                for try await _ in manager.events(
                    for: URLRequest(url: url), reconnection: ReconnectPolicy(maximumDelay: .seconds(30)))
                {}
                return nil
            } catch {
                return error
            }
        }
        waitUntil("the first connection ended", timeout: 5) { self.server.requests.count == 1 && manager.runningTaskCount == 0 }
        try await Task.sleep(for: .milliseconds(100))
        consumer.cancel()
        let error = await consumer.value
        XCTAssertEqual(error?.code, .cancelled)
        XCTAssertEqual(server.requests.count, 1)
    }

    func testLeavingTheLoopCancelsTheConnectionEvenWhileTheSequenceIsKept() async throws {
        let stream = manager.events(for: request("/sse?count=100&interval_ms=200"), reconnection: quick)
        for try await _ in stream { break }
        waitUntil("the connection was cancelled", timeout: 5) { self.manager.runningTaskCount == 0 }
        XCTAssertEqual(stream.statistics.connections, 1)
    }

    func testConnectionsThatKeepEndingEmptyAreGivenUpOnWithAnErrorNotAnEnd() async throws {
        // Given a server that answers every connection with an empty event stream
        let server = try ScriptedServer { _, _ in
            .response(status: 200, headers: [("Content-Type", "text/event-stream"), ("Content-Length", "0")])
        }
        defer { server.stop() }
        let policy = ReconnectPolicy(
            delay: .milliseconds(10), minimumDelay: .milliseconds(10), maximumDelay: .milliseconds(20), maximumAttempts: 2)
        do {
            for try await _ in manager.events(for: URLRequest(url: server.url("/")), reconnection: policy) {}
            XCTFail("giving up must throw, not end like a 204")
        } catch {
            XCTAssertEqual(error.code, .invalidResponse)
        }
        XCTAssertEqual(server.requests.count, 3)
    }
}
