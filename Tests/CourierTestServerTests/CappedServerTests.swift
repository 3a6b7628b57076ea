@testable import CourierTestServer
import Dispatch
import Foundation
import XCTest
import CourierSupport

/// `rate`, `slow_at`/`slow_factor` and `max_conns` over real sockets, and the traffic the server
/// counts for them. Timings are lower bounds only: on a shared machine anything can be late.
final class CappedServerTests: ServerTestCase {
    private static let mebibyte = 1 << 20

    /// Fetches `target` on its own connection to `port`; returns the response and how long it took.
    private static func timedFetch(_ target: String, port: UInt16) throws -> (response: RawResponse, seconds: Double) {
        let started = DispatchTime.now().uptimeNanoseconds
        let client = try RawClient(port: port, timeout: 30)
        defer { client.close() }
        let response = try client.request("GET", target)
        return (response, Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9)
    }

    /// The traffic of `path` once no response of it is in flight: a client can have a response's
    /// last byte before the server has counted it.
    private func settledTraffic(_ path: String) -> PathTraffic {
        XCTAssertTrue(waitUntil { self.server.traffic(for: path).inFlight == 0 })
        return server.traffic(for: path)
    }

    private func timedFetch(_ target: String) throws -> (response: RawResponse, seconds: Double) {
        try Self.timedFetch(target, port: server.port)
    }

    /// Runs `count` fetches of `target` at once, each on its own thread and connection.
    private func concurrentFetches(_ count: Int, _ target: String) -> [Result<(response: RawResponse, seconds: Double), any Error>] {
        let results = Locked<[Int: Result<(response: RawResponse, seconds: Double), any Error>]>([:])
        let port = server.port
        DispatchQueue.concurrentPerform(iterations: count) { index in
            let result = Result { try Self.timedFetch(target, port: port) }
            results.withLock { $0[index] = result }
        }
        return results.withLock { all in (0..<count).compactMap { all[$0] } }
    }

    func testRatePacesTwoMebibytesAtFourMebibytesPerSecondForAtLeastHalfASecond() throws {
        // Given a 2 MiB body paced at 4 MiB/s
        let size = 2 * Self.mebibyte

        // When it is fetched
        let (response, seconds) = try timedFetch("/bytes/\(size)?seed=3&rate=\(4 * Self.mebibyte)")

        // Then every byte arrives, and no sooner than the rate allows
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.body, TestServer.deterministicBytes(count: size, seed: 3))
        XCTAssertGreaterThanOrEqual(seconds, 0.45)
        XCTAssertEqual(settledTraffic("/bytes/\(size)").bodyBytesServed, Int64(size))
    }

    func testFourConcurrentRatedResponsesAreEachPacedOnTheirOwn() throws {
        // Given a 2 MiB body paced at 4 MiB/s per response
        let size = 2 * Self.mebibyte

        // When four connections fetch it at once
        let results = concurrentFetches(4, "/bytes/\(size)?seed=5&rate=\(4 * Self.mebibyte)")

        // Then each one took at least its own 0.45 s: the rate is per response, not shared
        XCTAssertEqual(results.count, 4)
        for result in results {
            let (response, seconds) = try result.get()
            XCTAssertEqual(response.body, TestServer.deterministicBytes(count: size, seed: 5))
            XCTAssertGreaterThanOrEqual(seconds, 0.45)
        }
        let traffic = settledTraffic("/bytes/\(size)")
        XCTAssertEqual(traffic.responses, 4)
        XCTAssertEqual(traffic.inFlight, 0)
        XCTAssertEqual(traffic.bodyBytesServed, Int64(4 * size))
        XCTAssertGreaterThanOrEqual(traffic.peakInFlight, 2, "four paced half-second responses overlap")
    }

    func testSlowAtSlowsTheResponseThatStartedFirstForTheRestOfItsBody() throws {
        // Given a 512 KiB body at 1 MiB/s that slows one response to a quarter once 256 KiB of
        // the path were served
        let size = 512 * 1024
        let target = "/bytes/\(size)?seed=9&rate=\(Self.mebibyte)&slow_at=\(256 * 1024)&slow_factor=4"

        // When one response starts, and a second one after it
        let first = Locked<Result<(response: RawResponse, seconds: Double), any Error>?>(nil)
        let firstDone = DispatchSemaphore(value: 0)
        let port = server.port
        Thread.detachNewThread {
            let result = Result { try Self.timedFetch(target, port: port) }
            first.withLock { $0 = result }
            firstDone.signal()
        }
        XCTAssertTrue(waitUntil { self.server.traffic(for: "/bytes/\(size)").bodyBytesServed > 0 })
        let (second, _) = try timedFetch(target)
        XCTAssertEqual(firstDone.wait(timeout: .now() + 30), .success)

        // Then the first one was slowed: when the path passed 256 KiB it had sent at most that,
        // so at least 256 KiB remained at 256 KiB/s
        let (firstResponse, firstSeconds) = try XCTUnwrap(first.withLock { $0 }).get()
        XCTAssertEqual(firstResponse.body, TestServer.deterministicBytes(count: size, seed: 9))
        XCTAssertEqual(second.body, TestServer.deterministicBytes(count: size, seed: 9))
        XCTAssertGreaterThanOrEqual(firstSeconds, 0.9)
        let firstConnection = try XCTUnwrap(server.requests.first?.connectionID)
        XCTAssertEqual(server.traffic(for: "/bytes/\(size)").slowedConnectionID, firstConnection)
    }

    func testMaxConnsRefusesTheResponseOverTheCapWith429AndRetryAfter() throws {
        // Given two slow responses in flight on a path capped at two
        let target = "/bytes/\(Self.mebibyte)?rate=\(Self.mebibyte)&max_conns=2"
        let running = DispatchGroup()
        let port = server.port
        for _ in 0..<2 {
            running.enter()
            Thread.detachNewThread {
                _ = try? Self.timedFetch(target, port: port)
                running.leave()
            }
        }
        XCTAssertTrue(waitUntil { self.server.traffic(for: "/bytes/\(Self.mebibyte)").inFlight == 2 })

        // When a third asks
        let refused = try fetch("GET", target)

        // Then it gets a 429 with Retry-After and no body, and the server counts it
        XCTAssertEqual(refused.status, 429)
        XCTAssertEqual(refused.header("Retry-After"), "1")
        XCTAssertEqual(refused.header("Content-Length"), "0")
        XCTAssertTrue(refused.body.isEmpty)
        XCTAssertEqual(running.wait(timeout: .now() + 30), .success)
        let traffic = settledTraffic("/bytes/\(Self.mebibyte)")
        XCTAssertEqual(traffic.tooManyRequests, 1)
        XCTAssertEqual(traffic.refusals.first?.inFlight, 2)
        XCTAssertEqual(traffic.peakInFlight, 2, "0 over the cap")
        XCTAssertEqual(traffic.bodyBytesServed, Int64(2 * Self.mebibyte))

        // And once they are done, the path admits again
        XCTAssertEqual(try fetch("GET", "/bytes/16?max_conns=2").status, 200)
    }

    func testPeakCountsResponsesInFlightAtOnceAndClearRequestsStartsAfresh() throws {
        // Given three responses of one file paced to overlap
        server.addFile("big", data: TestServer.deterministicBytes(count: 256 * 1024, seed: 1))
        let results = concurrentFetches(3, "/files/big?rate=\(512 * 1024)")
        XCTAssertEqual(results.count, 3)
        for result in results { XCTAssertEqual(try result.get().response.status, 200) }

        // When the traffic is read, then cleared
        let traffic = settledTraffic("/files/big")
        server.clearRequests()

        // Then the peak saw them overlap, and the cleared count starts from nothing
        XCTAssertGreaterThanOrEqual(traffic.peakInFlight, 2)
        XCTAssertEqual(traffic.bodyBytesServed, Int64(3 * 256 * 1024))
        XCTAssertEqual(server.traffic(for: "/files/big"), PathTraffic())
    }

    func testAClientThatHangsUpMidBodyIsNoLongerInFlightBeforeTheNextPacedWrite() throws {
        // Given a response paced so slowly that its first write is due in 1,024 s
        let client = try connect()
        try client.sendRequest("GET", "/bytes/4096?rate=1")
        XCTAssertTrue(waitUntil { self.server.traffic(for: "/bytes/4096").inFlight == 1 })

        // When its client hangs up
        client.close()

        // Then the server notices while it waits, not at a write, and the path admits again
        XCTAssertTrue(waitUntil(timeout: 10) { self.server.traffic(for: "/bytes/4096").inFlight == 0 })
        XCTAssertEqual(try fetch("GET", "/bytes/16?max_conns=1").status, 200)
    }

    func testPacingOptionsThatContradictEachOtherAre400() throws {
        // Given options that cannot all hold
        let targets = [
            "/bytes/10?slow_at=5", "/bytes/10?slow_factor=3", "/bytes/10?rate=100&chunk_delay_ms=5", "/bytes/10?rate=0",
            "/bytes/10?max_conns=0",
        ]
        for target in targets {
            // When each is asked for, then the server says why it refuses
            XCTAssertEqual(try fetch("GET", target).status, 400, target)
        }
    }
}
