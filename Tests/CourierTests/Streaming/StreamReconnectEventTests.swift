import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An event stream tells the manager's monitors about every reconnection
/// (``EventMonitor/eventStreamWillReconnect(_:)``), over real sockets.
final class StreamReconnectEventTests: CourierTestCase {
    private let reconnections = Box<EventStreamReconnectEvent>()

    override func makeConfiguration() -> SessionManager.Configuration {
        var configuration = super.makeConfiguration()
        let reconnections = reconnections
        configuration.eventMonitors = [ClosureEventMonitor(onStreamReconnect: { reconnections.append($0) })]
        return configuration
    }

    private let quick = ReconnectPolicy(
        delay: .milliseconds(20), minimumDelay: .milliseconds(10), maximumDelay: .milliseconds(200), maximumAttempts: 2)

    func testEachReconnectionIsAnnouncedWithWhyHowLongAndTheIDItSends() async throws {
        // Given a server that drops the connection after every second event and asks for 50 ms
        let stream = manager.events(for: request("/sse?count=6&drop_after=2&retry=50"), reconnection: quick)
        // When the stream is read to its 204
        var received = 0
        for try await _ in stream { received += 1 }
        // Then each of the three reconnections was announced, before it was made
        XCTAssertEqual(received, 6)
        waitUntil("three announcements") { reconnections.count >= 3 }
        let events = reconnections.all
        XCTAssertEqual(events.map(\.reconnection), [1, 2, 3])
        XCTAssertEqual(events.map(\.lastEventID), ["2", "4", "6"])
        XCTAssertEqual(events.map(\.delay), Array(repeating: .milliseconds(50), count: 3), "the server's retry:")
        XCTAssertEqual(events.map(\.failuresInARow), [0, 0, 0], "every connection delivered events")
        XCTAssertEqual(events.map { $0.reason?.isTransport }, [true, true, nil], "two drops, then the normal end after event 6")
        XCTAssertEqual(events.first?.url, server.url("/sse?count=6&drop_after=2&retry=50"))
        XCTAssertEqual(server.requests.count, 4)
    }

    func testANormalEndIsAnnouncedWithoutAnErrorAndRefusedConnectionsCountAsFailures() async throws {
        // Given a server that ends its response normally after one event, then stops listening
        let body = Data("id: 1\ndata: x\n\n".utf8)
        let ended = try ScriptedServer { _, _ in
            .response(
                status: 200, headers: [("Content-Type", "text/event-stream"), ("Content-Length", "\(body.count)")], body: body)
        }
        let url = ended.url("/once")
        // When the stream is read until it gives up
        let stream = manager.events(for: URLRequest(url: url), reconnection: quick)
        var failure: CourierError?
        do {
            for try await _ in stream { ended.stop() }
        } catch {
            failure = error
        }
        // Then the first reconnection says the server ended the response, the later ones why they failed
        waitUntil("the announcements") { reconnections.count >= 3 }
        let events = reconnections.all
        XCTAssertEqual(events.count, 3, "\(events.map(\.reason))")
        XCTAssertNil(events.first?.reason, "a normal end")
        XCTAssertEqual(events.dropFirst().map(\.reason?.code), [.connectionRefused, .connectionRefused])
        XCTAssertEqual(events.map(\.failuresInARow), [0, 1, 2])
        XCTAssertEqual(failure?.code, .connectionRefused)
    }
}
