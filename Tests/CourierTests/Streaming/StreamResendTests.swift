import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Which requests a stream sends again by itself, over real sockets (issue 20, item 1): an
/// OpenAI-style `POST` answered with `text/event-stream` is sent once, and its sequence ends with
/// its response, unless the caller opts in.
final class StreamResendTests: CourierTestCase {
    private let quick = ReconnectPolicy(
        delay: .milliseconds(20), minimumDelay: .milliseconds(10), maximumDelay: .milliseconds(200), maximumAttempts: 3)
    private let body = Data(#"{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}"#.utf8)

    private func chatRequest(_ pathAndQuery: String) -> URLRequest {
        var request = request(pathAndQuery, method: "POST")
        request.httpBody = body
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        return request
    }

    private func collect(_ stream: EventStream, limit: Int) async throws(CourierError) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        for try await event in stream {
            events.append(event)
            if events.count >= limit { break }
        }
        return events
    }

    func testAPostIsSentOnceAndItsSequenceEndsAfterDone() async throws {
        // Given an LLM-style answer: no ids, three chunks, then `data: [DONE]` and a normal end
        let stream = manager.events(for: chatRequest("/sse?count=3&ids=0&done=1"), reconnection: quick)
        // When the events are read (at most 20, so a stream that reconnects cannot run forever)
        let events = try await collect(stream, limit: 20)
        // Then the answer arrives once, and the server saw one POST with its body
        XCTAssertEqual(events.map(\.data), ["event 1", "event 2", "event 3", "[DONE]"])
        XCTAssertEqual(server.requests.count, 1)
        XCTAssertEqual(server.requests.first?.method, "POST")
        XCTAssertEqual(server.requests.first?.body, body)
        XCTAssertEqual(stream.statistics.connections, 1)
    }

    func testADroppedPostFailsWithTheDropInsteadOfSendingItAgain() async throws {
        // Given a POST whose connection drops after 2 events
        var events: [ServerSentEvent] = []
        do {
            // When the events are read
            for try await event in manager.events(
                for: chatRequest("/sse?count=10&ids=0&drop_after=2"), reconnection: quick)
            {
                events.append(event)
                if events.count >= 20 { break }
            }
            XCTFail("a dropped POST must fail, not reconnect")
        } catch {
            // Then the consumer gets the 2 events, then the transport error, after one request
            XCTAssertEqual(error.code, .connectionLost, "\(error)")
        }
        XCTAssertEqual(events.count, 2)
        XCTAssertEqual(server.requests.count, 1)
    }

    func testACallerWhoOptsInHasAPostReconnect() async throws {
        // Given the same answer, and a caller who declares the POST harmless to repeat
        var policy = quick
        policy.reconnectsAnyMethod = true
        // When 8 events are read
        let events = try await collect(manager.events(for: chatRequest("/sse?count=3&ids=0&done=1"), reconnection: policy), limit: 8)
        // Then the stream reconnected once, sending the POST with its body again
        XCTAssertEqual(events.map(\.data).filter { $0 == "[DONE]" }.count, 2)
        XCTAssertEqual(server.requests.count, 2)
        XCTAssertEqual(server.requests.map(\.body), [body, body])
    }

    func testAGetStillReconnectsAfterANormalEnd() async throws {
        // Given a GET answered without ids, ending normally
        // When 8 events are read
        let events = try await collect(manager.events(for: request("/sse?count=3&ids=0"), reconnection: quick), limit: 8)
        // Then it reconnected after each end, as the WHATWG rules say
        XCTAssertEqual(events.count, 8)
        XCTAssertEqual(server.requests.count, 3)
    }

    func testAPostEventStreamThatOverflowsUnderPauseFailsAndSaysWhy() async throws {
        // Given a POST whose events outgrow a 32 KiB buffer while the consumer stalls, under .pause
        let policy = StreamPolicy(bufferLimit: 32 * 1024, overflow: .pause)
        var iterator = manager.events(for: chatRequest("/sse?count=400&pad=2000&ids=0"), policy: policy, reconnection: quick)
            .makeAsyncIterator()
        _ = try await iterator.next()
        try await Task.sleep(for: .milliseconds(300))
        // When the rest is read
        do {
            while try await iterator.next() != nil {}
            XCTFail("an overflow that would need a reconnection must fail a POST")
        } catch {
            // Then it fails with the overflow, naming the rule, after one request
            XCTAssertEqual(error.code, .bufferOverflow)
            XCTAssertTrue(error.message.contains("a POST is not sent again"), error.message)
        }
        XCTAssertEqual(server.requests.count, 1)
    }

    func testAPostByteStreamIsNeverContinuedWithRange() async throws {
        // Given a POST answered by a body with a strong validator, a small buffer under .pause,
        // and a consumer that stalls
        var request = request("/bytes/1000000?seed=3", method: "POST")
        request.httpBody = body
        let (stream, _) = try await manager.bytes(
            for: request, policy: StreamPolicy(bufferLimit: 64 * 1024, overflow: .pause))
        var iterator = stream.chunks.makeAsyncIterator()
        _ = try await iterator.next()
        try await Task.sleep(for: .milliseconds(300))
        // When the rest is read
        do {
            while try await iterator.next() != nil {}
            XCTFail("a POST must not pause: its continuation would send it again")
        } catch {
            // Then the stream fails with the overflow and says a POST is not sent again, after one request
            XCTAssertEqual(error.code, .bufferOverflow)
            XCTAssertTrue(error.message.contains("only a GET can, and a POST is never sent again"), error.message)
        }
        XCTAssertEqual(server.requests.count, 1)
    }
}
