import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CourierSupport

/// Many streams at once (also run under ThreadSanitizer in CI): bytes, events, the callback form
/// and consumers that give up, all on one manager.
final class StreamConcurrencyTests: CourierTestCase {
    func testAHundredConcurrentStreamsEachDeliverTheirOwnExactBody() async throws {
        let manager = manager!
        let server = server!
        let results = try await withThrowingTaskGroup(of: (Int, Bool).self) { group in
            for index in 0..<100 {
                group.addTask {
                    let url = server.url("/bytes/40000?seed=\(index)")
                    let policy = StreamPolicy(bufferLimit: 16 * 1024, overflow: .pause)
                    let (stream, _) = try await manager.bytes(from: url, policy: policy)
                    var received = Data()
                    for try await chunk in stream.chunks {
                        received.append(chunk)
                        if index % 10 == 0 { await Task.yield() }
                    }
                    return (index, received == TestServer.deterministicBytes(count: 40_000, seed: UInt64(index)))
                }
            }
            var results: [Int: Bool] = [:]
            for try await (index, exact) in group { results[index] = exact }
            return results
        }
        XCTAssertEqual(results.count, 100)
        XCTAssertTrue(results.values.allSatisfy { $0 })
    }

    func testEventStreamsCallbackStreamsAndCancelledConsumersRunSideBySide() async throws {
        let manager = manager!
        let server = server!
        let quick = ReconnectPolicy(delay: .milliseconds(10), minimumDelay: .milliseconds(10), maximumDelay: .milliseconds(50))
        let callbackBytes = Locked(0)
        let completions = Locked(0)
        let done = expectation(description: "callback streams")
        done.expectedFulfillmentCount = 20
        for index in 0..<20 {
            manager.streamTask(
                with: URLRequest(url: server.url("/bytes/30000?seed=\(index)")),
                onChunk: { chunk in callbackBytes.withLock { $0 += chunk.count } },
                completion: { response in
                    XCTAssertNil(response.error)
                    completions.withLock { $0 += 1 }
                    done.fulfill()
                }
            ).resume()
        }
        let counts = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<40 {
                group.addTask {
                    let stream = manager.events(
                        for: URLRequest(url: server.url("/sse?count=30&drop_after=\(5 + index % 7)")), reconnection: quick)
                    var count = 0
                    for try await _ in stream { count += 1 }
                    return count
                }
            }
            for _ in 0..<40 {
                group.addTask {
                    // Consumers that give up after the first chunk.
                    let (stream, _) = try await manager.bytes(from: server.url("/drip?numbytes=500&duration_ms=5000"))
                    for try await _ in stream.chunks { break }
                    return 0
                }
            }
            var counts: [Int] = []
            for try await count in group where count > 0 { counts.append(count) }
            return counts
        }
        await fulfillment(of: [done], timeout: 30)
        XCTAssertEqual(counts, Array(repeating: 30, count: 40))
        XCTAssertEqual(callbackBytes.withLock { $0 }, 20 * 30_000)
        XCTAssertEqual(completions.withLock { $0 }, 20)
        waitUntil("every transfer stopped", timeout: 10) { manager.runningTaskCount == 0 && manager.queuedTaskCount == 0 }
    }
}
