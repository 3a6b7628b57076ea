import CourierTestSupport
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

    func testALoggingMonitorWritesEachReconnectionAsANoticeWithoutSecrets() {
        // Given a logging monitor and a reconnection whose URL carries a signature
        let records = Box<LoggingMonitor.Record>()
        let monitor = LoggingMonitor(level: .notice) { records.append($0) }
        let url = URL(string: "https://user:pw@example.com/sse?X-Amz-Signature=secret")!
        // When it is told of a reconnection after a drop, and of one after a normal end
        monitor.eventStreamWillReconnect(
            EventStreamReconnectEvent(
                url: url, reconnection: 2, failuresInARow: 1, reason: CourierError(code: .connectionLost, message: "reset"),
                delay: .milliseconds(1500), lastEventID: "41\nforged=1"))
        monitor.eventStreamWillReconnect(
            EventStreamReconnectEvent(
                url: url, reconnection: 3, failuresInARow: 0, reason: nil, delay: .seconds(3), lastEventID: nil))
        // Then each is one notice line, with the facts and nothing secret
        let all = records.all
        XCTAssertEqual(all.map(\.event), ["reconnect", "reconnect"])
        XCTAssertEqual(all.map(\.level), [.notice, .notice])
        XCTAssertEqual(all.first?.metadata["reconnection"], "2")
        XCTAssertEqual(all.first?.metadata["error"], "connectionLost")
        XCTAssertEqual(all.first?.metadata["delay_ms"], LoggingMonitor.milliseconds(.milliseconds(1500)))
        XCTAssertTrue(all.last?.message.contains("the server ended the response") ?? false, all.last?.message ?? "")
        for record in all {
            XCTAssertFalse(record.line.contains("secret") || record.line.contains("pw@"), record.line)
            XCTAssertFalse(record.line.contains("\n"), "one line: \(record.line)")
        }
        // A monitor above notice builds nothing.
        let quiet = Box<LoggingMonitor.Record>()
        LoggingMonitor(level: .error) { quiet.append($0) }.eventStreamWillReconnect(
            EventStreamReconnectEvent(url: url, reconnection: 1, failuresInARow: 0, reason: nil, delay: .zero, lastEventID: nil))
        XCTAssertEqual(quiet.count, 0)
    }
}
