import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CourierSupport

/// A consumer slower than the network: bounded memory under each overflow policy.
final class StreamOverflowTests: CourierTestCase {
    /// Holds the stream's iterator untouched until the transfer has stopped by itself.
    private func waitForTheTransferToStop(_ stream: ByteStream) {
        waitUntil("the transfer stopped", timeout: 10) { stream.task.state == .completed || self.manager.runningTaskCount == 0 }
    }

    func testFailDeliversWhatIsHeldThenFailsWithBufferOverflow() async throws {
        // Given a 4 MB body and a consumer that takes nothing while 64 KiB may be held
        let limit = 64 * 1024
        let (stream, _) = try await manager.bytes(
            for: request("/bytes/4000000?seed=2"), policy: StreamPolicy(bufferLimit: limit, overflow: .fail))
        waitUntil("the stream failed", timeout: 10) { stream.task.state == .completed }
        // Then memory stayed bounded, and the consumer gets the first bytes, then the error
        XCTAssertLessThanOrEqual(stream.statistics.highWaterMark, limit)
        var received = Data()
        do {
            for try await chunk in stream.chunks { received.append(chunk) }
            XCTFail("the overflow must fail the stream")
        } catch {
            XCTAssertEqual(error.code, .bufferOverflow)
            XCTAssertTrue(error.message.contains("\(limit)"), error.message)
        }
        XCTAssertGreaterThan(received.count, 0)
        XCTAssertEqual(received, TestServer.deterministicBytes(count: 4_000_000, seed: 2).prefix(received.count))
    }

    func testPauseKeepsMemoryBoundedAndDeliversTheExactBodyByRange() async throws {
        // Given a 6 MB body with a strong validator, 256 KiB allowed, and a consumer that stalls
        let limit = 256 * 1024
        let expected = TestServer.deterministicBytes(count: 6_000_000, seed: 9)
        let (stream, _) = try await manager.bytes(
            for: request("/bytes/6000000?seed=9"), policy: StreamPolicy(bufferLimit: limit, overflow: .pause))
        var received = Data()
        var chunks = 0
        // Stalled before the first read, so the buffer must fill and the transfer pause, however
        // slow the network is here (under ThreadSanitizer a paced consumer sometimes kept up).
        let stalledUntil = ContinuousClock.now + .seconds(20)
        while stream.statistics.pauses == 0 && ContinuousClock.now < stalledUntil {
            try await Task.sleep(for: .milliseconds(5))
        }
        for try await chunk in stream.chunks {
            received.append(chunk)
            chunks += 1
            // Slow: the network fills the buffer between two reads.
            if chunks % 8 == 0 { try await Task.sleep(for: .milliseconds(5)) }
        }
        // Then the bytes are exact, held memory never passed the limit by more than a chunk, and
        // the transfer was paused and continued with Range/If-Range
        XCTAssertEqual(received, expected)
        let statistics = stream.statistics
        XCTAssertGreaterThan(statistics.pauses, 0)
        XCTAssertLessThanOrEqual(statistics.highWaterMark, limit + 256 * 1024)
        let continued = server.requests.dropFirst()
        XCTAssertEqual(continued.count, statistics.pauses)
        for request in continued {
            XCTAssertNotNil(request.header("Range"))
            XCTAssertEqual(request.header("If-Range"), "\"bytes-6000000-9\"")
            XCTAssertEqual(request.header("Accept-Encoding"), "identity")
        }
    }

    func testPauseWithoutAValidatorFailsWithBufferOverflowAndSaysWhy() async throws {
        let (stream, _) = try await manager.bytes(
            for: request("/bytes/4000000?no_validators=1"), policy: StreamPolicy(bufferLimit: 64 * 1024, overflow: .pause))
        waitUntil("the stream failed", timeout: 10) { stream.task.state == .completed }
        do {
            for try await _ in stream.chunks {}
            XCTFail("a stream that cannot pause must fail")
        } catch {
            XCTAssertEqual(error.code, .bufferOverflow)
            XCTAssertTrue(error.message.contains("validator"), error.message)
        }
        XCTAssertEqual(server.requests.count, 1)
    }

    func testAPausedStreamIsNotIdle() async throws {
        // A consumer that sleeps longer than the idle limit while the transfer is paused for it.
        let policy = StreamPolicy(bufferLimit: 128 * 1024, overflow: .pause, idleTimeout: .milliseconds(300))
        let (stream, _) = try await manager.bytes(for: request("/bytes/1000000?seed=4"), policy: policy)
        waitUntil("paused for the consumer", timeout: 10) { stream.statistics.pauses == 1 }
        try await Task.sleep(for: .milliseconds(700))
        var received = Data()
        for try await chunk in stream.chunks { received.append(chunk) }
        XCTAssertEqual(received, TestServer.deterministicBytes(count: 1_000_000, seed: 4))
    }

    func testTheHandleFormAppliesTheSamePolicyToBytesQueuedForItsCallback() {
        // Given a callback slower than the network on its own serial queue
        let limit = 128 * 1024
        let queue = DispatchQueue(label: "slow consumer")
        let received = Locked(Data())
        let response = wait { finish in
            manager.streamTask(
                with: request("/bytes/3000000?seed=6"), policy: StreamPolicy(bufferLimit: limit, overflow: .pause),
                queue: .on(queue),
                onChunk: { chunk in
                    received.withLock { $0.append(chunk) }
                    Thread.sleep(forTimeInterval: 0.0005)
                },
                completion: finish
            ).resume()
        }
        XCTAssertNil(response?.error)
        XCTAssertEqual(received.withLock { $0 }, TestServer.deterministicBytes(count: 3_000_000, seed: 6))
        XCTAssertLessThanOrEqual(response?.statistics.highWaterMark ?? .max, limit + 256 * 1024)
        XCTAssertEqual(response?.statistics.bytesDelivered, 3_000_000)
    }
}
