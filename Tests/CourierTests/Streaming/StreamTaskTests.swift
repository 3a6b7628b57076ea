import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CourierSupport

/// The callback form: head, chunks, then one completion, in order on the chosen queue.
final class StreamTaskTests: CourierTestCase {
    func testTheHeadComesFirstThenEveryChunkThenOneCompletion() {
        let events = Locked<[String]>([])
        let body = Locked(Data())
        let response = wait { finish in
            manager.streamTask(
                with: request("/stream-bytes/100000?seed=1&chunk_size=1000"),
                onResponse: { head in events.withLock { $0.append("head \(head.statusCode)") } },
                onChunk: { chunk in
                    body.withLock { $0.append(chunk) }
                    events.withLock { if $0.last != "chunk" { $0.append("chunk") } }
                },
                completion: { response in
                    events.withLock { $0.append("end") }
                    finish(response)
                }
            ).resume()
        }
        XCTAssertNil(response?.error)
        XCTAssertEqual(response?.response?.statusCode, 200)
        XCTAssertEqual(events.withLock { $0 }, ["head 200", "chunk", "end"])
        XCTAssertEqual(body.withLock { $0 }, TestServer.deterministicBytes(count: 100_000, seed: 1))
    }

    func testCancellingTheHandleCompletesOnceWithCancelled() {
        let response = wait { finish in
            let task = manager.streamTask(
                with: request("/drip?numbytes=1000&duration_ms=20000"), onChunk: { _ in }, completion: finish)
            task.resume()
            DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) { task.cancel() }
        }
        XCTAssertEqual(response?.error?.code, .cancelled)
    }

    func testARefusedHeadCompletesWithTheErrorAndNoChunk() {
        let chunks = Locked(0)
        let response = wait { finish in
            manager.streamTask(
                with: request("/status/503?body=busy"), onResponse: { _ in XCTFail("a 503 is not a stream") },
                onChunk: { _ in chunks.withLock { $0 += 1 } }, completion: finish
            ).resume()
        }
        XCTAssertEqual(response?.error?.code, .unacceptableStatusCode)
        XCTAssertEqual(response?.error?.body, Data("busy".utf8))
        XCTAssertEqual(chunks.withLock { $0 }, 0)
    }

    func testSuspendAndResumeContinueAStreamWithRange() {
        let body = Locked(Data())
        let suspended = expectation(description: "suspended")
        let response = wait { finish in
            let task = manager.streamTask(
                with: request("/bytes/2000000?seed=8&chunk=16384&chunk_delay_ms=2"),
                queue: .immediate,
                onChunk: { chunk in body.withLock { $0.append(chunk) } },
                completion: finish)
            task.resume()
            DispatchQueue.global().asyncAfter(deadline: .now() + 0.1) {
                task.suspend()
                suspended.fulfill()
                DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) { task.resume() }
            }
        }
        wait(for: [suspended], timeout: 1)
        XCTAssertNil(response?.error)
        XCTAssertEqual(body.withLock { $0 }, TestServer.deterministicBytes(count: 2_000_000, seed: 8))
        XCTAssertNotNil(server.requests.last?.header("Range"))
    }

    func testAStreamWithoutAValidatorFailsOnResumeInsteadOfRepeatingBytes() {
        let body = Locked(Data())
        let response = wait { finish in
            let task = manager.streamTask(
                with: request("/bytes/2000000?no_validators=1&chunk=16384&chunk_delay_ms=2"), queue: .immediate,
                onChunk: { chunk in body.withLock { $0.append(chunk) } }, completion: finish)
            task.resume()
            DispatchQueue.global().asyncAfter(deadline: .now() + 0.1) {
                task.suspend()
                task.resume()
            }
        }
        XCTAssertEqual(response?.error?.code, .invalidRequest)
        let received = body.withLock { $0 }
        XCTAssertEqual(received, TestServer.deterministicBytes(count: 2_000_000, seed: 0).prefix(received.count))
        XCTAssertEqual(server.requests.count, 1)
    }
}
