import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A stream's waits are its policy's (issue 20, item 3): the manager's URLSession request
/// timeout (here 1 s, standing in for the default 60 s) cuts neither the wait for the head nor
/// the silence between chunks that the ``StreamPolicy`` allows.
final class StreamTimeoutTests: CourierTestCase {
    override func makeConfiguration() -> SessionManager.Configuration {
        let configuration = super.makeConfiguration()
        configuration.urlSessionConfiguration.timeoutIntervalForRequest = 1
        return configuration
    }

    func testAHeadLaterThanTheRequestTimeoutIsWaitedForWhenThePolicySetsNoLimit() async throws {
        // Given NDJSON whose head comes after 2.5 s (a model server loading its model)
        // When it is read with the default policy (no limit)
        var lines: [String] = []
        let (stream, response) = try await manager.bytes(for: request("/drip?numbytes=4&duration_ms=0&delay_ms=2500"))
        for try await line in stream.lines { lines.append(line) }
        // Then the answer arrives whole
        XCTAssertEqual(response.statusCode, 200)
        XCTAssertEqual(lines, ["****"])
    }

    func testGapsLongerThanTheRequestTimeoutBetweenLinesAreAllowedWhenThePolicySetsNoLimit() async throws {
        // Given NDJSON lines 1.5 s apart
        struct Line: Decodable { let index: Int }
        var indexes: [Int] = []
        // When they are decoded with the default policy
        for try await line in manager.jsonLines(Line.self, for: request("/ndjson?count=3&interval_ms=1500")) {
            indexes.append(line.index)
        }
        // Then every line arrives
        XCTAssertEqual(indexes, [1, 2, 3])
    }

    func testAnEventStreamSilentLongerThanTheRequestTimeoutIsNotReconnected() async throws {
        // Given events 1.5 s apart
        var events: [String] = []
        for try await event in manager.events(for: request("/sse?count=3&interval_ms=1500"), reconnection: .never) {
            events.append(event.lastEventID)
        }
        // Then one connection carried them all
        XCTAssertEqual(events, ["1", "2", "3"])
        XCTAssertEqual(server.requests.count, 1)
    }

    func testARedirectedStreamKeepsThePolicysWaits() async throws {
        // Given a redirect to a head that comes after 2.5 s
        let target = "/drip?numbytes=4&duration_ms=0&delay_ms=2500"
        let url = "/redirect-to?url=" + target.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        // When it is streamed with the default policy
        let (stream, response) = try await manager.bytes(for: request(url))
        var count = 0
        for try await chunk in stream.chunks { count += chunk.count }
        // Then the redirected request waited for it too
        XCTAssertEqual(response.statusCode, 200)
        XCTAssertEqual(count, 4)
    }

    func testTheHeadTimeoutBoundsTheWaitForTheHeadAndSaysSo() async throws {
        // Given a head after 3 s and a head limit of 300 ms
        let clock = ContinuousClock()
        let start = clock.now
        do {
            // When the stream is opened
            _ = try await manager.bytes(for: request("/delay/3000"), policy: StreamPolicy(headTimeout: .milliseconds(300)))
            XCTFail("no head within the head limit must fail")
        } catch {
            // Then it fails with timedOut, naming the setting, well before the server answers
            XCTAssertEqual(error.code, .timedOut)
            XCTAssertTrue(error.message.contains("StreamPolicy.headTimeout"), error.message)
        }
        XCTAssertLessThan(clock.now - start, .seconds(2))
    }

    func testAHeadTimeoutLongerThanTheIdleTimeoutLetsASlowHeadThroughAndTheIdleLimitStillHolds() async throws {
        // Given a head limit of 4 s and an idle limit of 300 ms
        let policy = StreamPolicy(headTimeout: .seconds(4), idleTimeout: .milliseconds(300))
        // When the head comes after 1.5 s
        let (slowHead, _) = try await manager.bytes(for: request("/drip?numbytes=4&duration_ms=0&delay_ms=1500"), policy: policy)
        var count = 0
        for try await chunk in slowHead.chunks { count += chunk.count }
        // Then the body arrives whole
        XCTAssertEqual(count, 4)
        // And when a body goes silent for 1 s after its head
        let (gaps, _) = try await manager.bytes(for: request("/drip?numbytes=3&duration_ms=3000"), policy: policy)
        do {
            for try await _ in gaps.chunks {}
            XCTFail("a gap longer than the idle limit must fail")
        } catch {
            // Then the idle limit fails it
            XCTAssertEqual(error.code, .timedOut)
            XCTAssertTrue(error.message.contains("StreamPolicy.idleTimeout"), error.message)
        }
    }
}
