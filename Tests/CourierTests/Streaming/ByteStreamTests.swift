import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `bytes(for:)` over real sockets: the Darwin shape, its views, validation, cancellation.
final class ByteStreamTests: CourierTestCase {
    func testBytesReturnsAtTheHeadAndTheChunksAreTheExactBody() async throws {
        // Given a 3 MB body with validators
        let expected = TestServer.deterministicBytes(count: 3_000_000, seed: 7)
        // When it is streamed chunk by chunk
        let (stream, response) = try await manager.bytes(for: request("/bytes/3000000?seed=7"))
        XCTAssertEqual(response.statusCode, 200)
        var received = Data()
        var chunks = 0
        for try await chunk in stream.chunks {
            received.append(chunk)
            chunks += 1
        }
        // Then every byte arrives once, in order, in more than one piece
        XCTAssertEqual(received, expected)
        XCTAssertGreaterThan(chunks, 1)
        XCTAssertEqual(stream.statistics.bytesDelivered, 3_000_000)
        XCTAssertEqual(stream.statistics.bufferedBytes, 0)
        XCTAssertEqual(stream.task.state, .completed)
    }

    func testIteratingByteByByteGivesTheSameBytes() async throws {
        let expected = TestServer.deterministicBytes(count: 200_000, seed: 3)
        let (stream, _) = try await manager.bytes(from: server.url("/stream-bytes/200000?seed=3&chunk_size=777"))
        var received = [UInt8]()
        received.reserveCapacity(200_000)
        for try await byte in stream { received.append(byte) }
        XCTAssertEqual(Data(received), expected)
    }

    func testAnErrorStatusThrowsWithItsBodyInsteadOfLookingLikeAStream() async throws {
        do {
            _ = try await manager.bytes(for: request("/status/404?body=no%20such%20feed"))
            XCTFail("a 404 must not return a stream")
        } catch {
            XCTAssertEqual(error.code, .unacceptableStatusCode)
            XCTAssertEqual(error.response?.statusCode, 404)
            XCTAssertEqual(error.body.map { String(decoding: $0, as: UTF8.self) }, "no such feed")
        }
    }

    func testAcceptableContentTypesAreCheckedAtTheHead() async throws {
        do {
            _ = try await manager.bytes(for: request("/ndjson"), validation: Validation(contentTypes: ["text/event-stream"]))
            XCTFail("the wrong type must throw")
        } catch {
            XCTAssertEqual(error.code, .unacceptableContentType)
        }
    }

    func testLinesKeepEmptyLinesAndEndWithAnUnterminatedLastLine() async throws {
        // Given a body whose lines end in LF, CRLF and CR, with an empty line and no final terminator
        let body = Data("one\ntwo\r\n\rthree\rfour".utf8)
        let server = try ScriptedServer { _, _ in
            .response(status: 200, headers: [("Content-Length", "\(body.count)")], body: body)
        }
        defer { server.stop() }
        let (stream, _) = try await manager.bytes(from: server.url("/"))
        var lines: [String] = []
        for try await line in stream.lines { lines.append(line) }
        XCTAssertEqual(lines, ["one", "two", "", "three", "four"])
    }

    func testALineLongerThanThePolicyAllowsFailsTheSequence() async throws {
        let (stream, _) = try await manager.bytes(
            for: request("/ndjson?count=3&pad=5000"), policy: StreamPolicy(maximumLineLength: 1000))
        do {
            for try await _ in stream.lines {}
            XCTFail("an over-long line must fail")
        } catch {
            XCTAssertEqual(error.code, .responseTooLarge)
        }
    }

    struct Item: Decodable, Equatable {
        let index: Int
        let text: String
    }

    func testJSONLinesDecodeEachLine() async throws {
        var items: [Item] = []
        for try await item in manager.jsonLines(Item.self, for: request("/ndjson?count=250&interval_ms=0")) {
            items.append(item)
        }
        XCTAssertEqual(items, (1...250).map { Item(index: $0, text: "item \($0)") })
    }

    func testABadJSONLineFailsWithItsLineNumberAfterTheGoodOnes() async throws {
        let (stream, _) = try await manager.bytes(for: request("/ndjson?count=10&bad_line=4"))
        var decoded = 0
        do {
            for try await _ in stream.jsonLines(Item.self) { decoded += 1 }
            XCTFail("line 4 must fail")
        } catch {
            XCTAssertEqual(error.code, .decodingFailed)
            XCTAssertTrue(error.message.contains("line 4"), error.message)
        }
        XCTAssertEqual(decoded, 3)
    }

    func testCancellingTheConsumingTaskCancelsTheTransferPromptly() async throws {
        // Given a body that trickles for 20 s
        let manager = manager!
        let url = server.url("/drip?numbytes=2000&duration_ms=20000")
        let started = expectation(description: "first chunk")
        let consumer = Task { () -> CourierError? in
            do throws(CourierError) {
                let (stream, _) = try await manager.bytes(from: url)
                var first = true
                for try await _ in stream.chunks where first {
                    first = false
                    started.fulfill()
                }
                return nil
            } catch {
                return error
            }
        }
        await fulfillment(of: [started], timeout: 10)
        // When the consuming task is cancelled
        let clock = ContinuousClock()
        let stoppedAt = clock.now
        consumer.cancel()
        let error = await consumer.value
        // Then it ends at once with `cancelled`, and the transfer is gone
        XCTAssertEqual(error?.code, .cancelled)
        XCTAssertLessThan(clock.now - stoppedAt, .seconds(2))
        waitUntil("the transfer stopped", timeout: 5) { manager.runningTaskCount == 0 }
    }

    func testCancellingWhileWaitingForTheHeadCancelsTheRequest() async throws {
        let manager = manager!
        let url = server.url("/delay/10000")
        let consumer = Task { () -> CourierError? in
            do throws(CourierError) {
                _ = try await manager.bytes(from: url)
                return nil
            } catch {
                return error
            }
        }
        waitUntil("the request is running", timeout: 5) { manager.runningTaskCount == 1 }
        consumer.cancel()
        let error = await consumer.value
        XCTAssertEqual(error?.code, .cancelled)
        waitUntil("the transfer stopped", timeout: 5) { manager.runningTaskCount == 0 }
    }

    func testDroppingTheStreamCancelsTheTransfer() async throws {
        do {
            let (stream, _) = try await manager.bytes(from: server.url("/drip?numbytes=2000&duration_ms=20000"))
            var iterator = stream.chunks.makeAsyncIterator()
            _ = try await iterator.next()
            XCTAssertEqual(manager.runningTaskCount, 1)
        }
        // Nothing holds the stream or an iterator any more.
        waitUntil("the dropped stream's transfer stopped", timeout: 5) { self.manager.runningTaskCount == 0 }
    }

    func testAStreamContinuesAfterADropWithRangeWhenTheRetryPolicyRetries() async throws {
        // Given a manager that retries, and a body the server cuts after 200,000 of 300,000 bytes
        var configuration = makeConfiguration()
        configuration.retryPolicy = RetryPolicy()
        let manager = SessionManager(configuration: configuration)
        defer { manager.invalidate(cancelingTasks: true) }
        let (stream, _) = try await manager.bytes(for: request("/bytes/300000?seed=5&close_after=200000"))
        var received = Data()
        for try await chunk in stream.chunks { received.append(chunk) }
        // Then the consumer sees one exact body; the second request asked for the rest only
        XCTAssertEqual(received, TestServer.deterministicBytes(count: 300_000, seed: 5))
        let ranges = server.requests.compactMap { $0.header("Range") }
        XCTAssertEqual(ranges, ["bytes=200000-"])
        XCTAssertEqual(server.requests.last?.header("If-Range"), "\"bytes-300000-5\"")
    }

    func testAStreamWithoutAValidatorIsNeverRestartedAfterBytesWereDelivered() async throws {
        var configuration = makeConfiguration()
        configuration.retryPolicy = RetryPolicy()
        let manager = SessionManager(configuration: configuration)
        defer { manager.invalidate(cancelingTasks: true) }
        let (stream, _) = try await manager.bytes(for: request("/bytes/300000?seed=5&close_after=200000&no_validators=1"))
        var received = Data()
        do {
            for try await chunk in stream.chunks { received.append(chunk) }
            XCTFail("the cut body must fail")
        } catch {
            XCTAssertTrue(error.isTransport || error.code == .invalidResponse, "\(error)")
        }
        // The bytes delivered are the body's first ones, never repeated
        XCTAssertEqual(received, TestServer.deterministicBytes(count: 300_000, seed: 5).prefix(received.count))
        XCTAssertLessThanOrEqual(received.count, 200_000)
        XCTAssertEqual(server.requests.count, 1)
    }

    func testIdleGapsFailTheStreamWithTimedOut() async throws {
        // Given a body whose bytes come 3 s apart, and an idle limit of 300 ms
        let policy = StreamPolicy(idleTimeout: .milliseconds(300))
        let clock = ContinuousClock()
        let start = clock.now
        let (stream, _) = try await manager.bytes(for: request("/drip?numbytes=3&duration_ms=6000"), policy: policy)
        do {
            for try await _ in stream.chunks {}
            XCTFail("the gap must fail the stream")
        } catch {
            XCTAssertEqual(error.code, .timedOut)
            XCTAssertTrue(error.message.contains("idle"), error.message)
        }
        XCTAssertLessThan(clock.now - start, .seconds(2.5))
    }

    func testAnIdleTimeoutAlsoBoundsTheWaitForTheHead() async throws {
        let policy = StreamPolicy(idleTimeout: .milliseconds(300))
        do {
            _ = try await manager.bytes(for: request("/delay/5000"), policy: policy)
            XCTFail("no head within the idle limit must fail")
        } catch {
            XCTAssertEqual(error.code, .timedOut)
        }
    }

    func testAStreamThatKeepsSendingIsNotIdle() async throws {
        // Bytes every ~100 ms for 1.5 s, an idle limit of 500 ms: no timeout.
        let policy = StreamPolicy(idleTimeout: .milliseconds(500))
        let (stream, _) = try await manager.bytes(for: request("/drip?numbytes=15&duration_ms=1500"), policy: policy)
        var count = 0
        for try await chunk in stream.chunks { count += chunk.count }
        XCTAssertEqual(count, 15)
    }

    func testACancelledConsumerNeverSeesACleanEndOfBytesItDropped() async throws {
        // Given a body held whole in the buffer (the transfer has ended)
        let (stream, _) = try await manager.bytes(for: request("/stream-bytes/100000?chunk_size=1000"))
        waitUntil("the body is in", timeout: 5) { stream.task.state == .completed }
        // When the consumer reads one chunk, then its task is cancelled
        let outcome = await Task { () -> (Int, CourierError?) in
            var iterator = stream.chunks.makeAsyncIterator()
            var count = 0
            do throws(CourierError) {
                while let chunk = try await iterator.next() {
                    count += chunk.count
                    withUnsafeCurrentTask { $0?.cancel() }
                }
                return (count, nil)
            } catch {
                return (count, error)
            }
        }.value
        // Then the next read throws `cancelled` rather than ending as if the body were complete
        XCTAssertEqual(outcome.1?.code, .cancelled)
        XCTAssertLessThan(outcome.0, 100_000)
    }
}
