import CourierTestServer
import XCTest

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Every stream has a `cancel()` that ends its transfer at once, whatever the stream is doing:
/// reading, waiting for a head, or waiting to reconnect.
final class StreamCancelTests: CourierTestCase {
    /// Cancels `cancel` after `delay` from another thread, as a shutdown hook would.
    private func cancelSoon(after delay: Duration = .milliseconds(300), _ cancel: @escaping @Sendable () -> Void) {
        DispatchQueue.global().asyncAfter(deadline: .now() + delay.seconds) { cancel() }
    }

    /// Awaits `body`, which must throw `cancelled` within `limit` of now.
    private func assertCancelledPromptly(
        within limit: TimeInterval = 3, file: StaticString = #filePath, line: UInt = #line,
        _ body: () async throws(CourierError) -> Void
    ) async {
        let started = Date()
        do {
            try await body()
            XCTFail("expected cancellation", file: file, line: line)
        } catch {
            XCTAssertEqual(error.code, .cancelled, "\(error)", file: file, line: line)
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), limit, file: file, line: line)
    }

    func testCancellingAnEventStreamWhileItReadsEndsTheLoopAndTheConnection() async throws {
        // Given an event stream that delivers one event and then a long quiet
        let stream = manager.events(for: request("/sse?count=3&interval_ms=20000"))
        var iterator = stream.makeAsyncIterator()
        let first = try await iterator.next()
        XCTAssertEqual(first?.id, "1")
        // When another thread cancels it
        cancelSoon { stream.cancel() }
        // Then the pending next() throws cancelled at once, and the connection is closed
        await assertCancelledPromptly { () async throws(CourierError) in _ = try await iterator.next() }
        waitUntil("the connection closed", timeout: 5) { self.manager.runningTaskCount == 0 }
    }

    func testCancellingDuringTheWaitBeforeAReconnectionEndsItThere() async throws {
        // Given a stream whose server asks for a 20 s wait after a dropped connection
        let stream = manager.events(
            for: request("/sse?count=5&drop_after=1&retry=20000"),
            reconnection: ReconnectPolicy(maximumDelay: .seconds(30)))
        var iterator = stream.makeAsyncIterator()
        _ = try await iterator.next()
        cancelSoon { stream.cancel() }
        // Then the wait ends at the cancel, with no reconnection
        await assertCancelledPromptly { () async throws(CourierError) in _ = try await iterator.next() }
        XCTAssertEqual(stream.statistics.connections, 1)
        XCTAssertEqual(server.requests.count, 1)
    }

    func testCancellingWhileTheHeadIsAwaitedEndsTheConnectionAttempt() async throws {
        let stream = manager.events(for: request("/never-answer"))
        var iterator = stream.makeAsyncIterator()
        cancelSoon { stream.cancel() }
        await assertCancelledPromptly { () async throws(CourierError) in _ = try await iterator.next() }
        waitUntil("the connection closed", timeout: 5) { self.manager.runningTaskCount == 0 }
    }

    func testAStreamCancelledBeforeItsFirstNextSendsNothing() async throws {
        let stream = manager.events(for: request("/sse?count=3"))
        stream.cancel()
        var iterator = stream.makeAsyncIterator()
        await assertCancelledPromptly { () async throws(CourierError) in _ = try await iterator.next() }
        XCTAssertEqual(server.requests.count, 0)
    }

    /// One `/ndjson` line.
    private struct Item: Decodable, Sendable { let index: Int }

    func testCancellingJSONLinesEndsItsTransfer() async throws {
        let lines = manager.jsonLines(Item.self, for: request("/ndjson?count=3&interval_ms=20000"))
        var iterator = lines.makeAsyncIterator()
        _ = try await iterator.next()
        cancelSoon { lines.cancel() }
        await assertCancelledPromptly { () async throws(CourierError) in _ = try await iterator.next() }
        waitUntil("the connection closed", timeout: 5) { self.manager.runningTaskCount == 0 }
    }

    func testCancellingAByteStreamEndsItsTransfer() async throws {
        let (bytes, _) = try await manager.bytes(for: request("/ndjson?count=3&interval_ms=20000"))
        var iterator = bytes.makeAsyncIterator()
        _ = try await iterator.next()
        cancelSoon { bytes.cancel() }
        await assertCancelledPromptly { () async throws(CourierError) in
            // The bytes already delivered come first; then the cancellation.
            while try await iterator.next() != nil {}
        }
        waitUntil("the connection closed", timeout: 5) { self.manager.runningTaskCount == 0 }
    }
}
