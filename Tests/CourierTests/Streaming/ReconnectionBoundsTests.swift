import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An event stream's reconnections stay bounded even when every connection delivers an event
/// (issue 20, item 2): a server that asks for `retry: 0`, sends one event and closes.
final class ReconnectionBoundsTests: CourierTestCase {
    /// Reads `stream` for `duration`, then cancels the reader.
    private func read(_ stream: EventStream, for duration: Duration) async throws {
        let reader = Task {
            do throws(CourierError) {
                for try await _ in stream {}
            } catch {}
        }
        try await Task.sleep(for: duration)
        reader.cancel()
        await reader.value
    }

    func testRetryZeroWithOneEventPerConnectionWaitsTheDefaultMinimumDelay() async throws {
        // Given a server that asks for `retry: 0` and drops every connection after one event
        let stream = manager.events(for: request("/sse?count=100000&drop_after=1&retry=0"))
        // When the stream is read for 2 s with the default policy
        try await read(stream, for: .seconds(2))
        // Then the minimum delay (500 ms) spaces the reconnections: at most 1 + 4 requests
        // (without it: hundreds)
        XCTAssertLessThanOrEqual(server.requests.count, 5)
        XCTAssertGreaterThanOrEqual(server.requests.count, 3)
    }

    func testTheReconnectionsPerMinuteAreBoundedWhateverTheyDeliver() async throws {
        // Given the same server, a 10 ms minimum delay and at most 5 reconnections a minute
        let policy = ReconnectPolicy(minimumDelay: .milliseconds(10), maximumReconnectionsPerMinute: 5)
        let stream = manager.events(for: request("/sse?count=100000&drop_after=1&retry=0"), reconnection: policy)
        // When the stream is read for 1.5 s
        try await read(stream, for: .milliseconds(1500))
        // Then it connected 1 + 5 times, each connection delivering its event, and then waited
        XCTAssertEqual(server.requests.count, 6)
        XCTAssertEqual(server.requests.last?.header("Last-Event-ID"), "5")
    }
}
