import CourierTestSupport
import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

final class AsyncTests: CourierTestCase {
    func testDataReturnsBodyAndResponse() async throws {
        let (body, response) = try await manager.data(for: request("/bytes/4096?seed=2"))
        XCTAssertEqual(body, TestServer.deterministicBytes(count: 4096, seed: 2))
        XCTAssertEqual(response.statusCode, 200)
    }

    func testDataFromURL() async throws {
        let (body, _) = try await manager.data(from: server.url("/bytes/10"))
        XCTAssertEqual(body.count, 10)
    }

    private struct Headers: Decodable, Sendable { let headers: [String: String] }

    func testDecodableDecodes() async throws {
        var request = request("/headers")
        request.setValue("courier-test", forHTTPHeaderField: "X-Probe")
        let decoded = try await manager.decodable(Headers.self, for: request)
        XCTAssertEqual(decoded.headers.first { $0.key.lowercased() == "x-probe" }?.value, "courier-test")
    }

    func testHTTPErrorThrowsCourierError() async {
        do {
            _ = try await manager.data(for: request("/status/503"))
            XCTFail("expected an error")
        } catch {
            XCTAssertEqual(error.code, .unacceptableStatusCode)
            XCTAssertEqual(error.statusCode, 503)
        }
    }

    /// `throws(CourierError)`: a plain `catch` binds a `CourierError`, with no cast, for every
    /// async call of the manager and of `HTTPClient`.
    func testEveryAsyncCallThrowsCourierErrorSoATypedCatchNeedsNoCast() async {
        let missing = request("/status/404")
        let missingPost = request("/status/404", method: "POST")
        let destination = directory.appendingPathComponent("never.bin")
        let client = HTTPClient(baseURL: server.url("/status/"), manager: manager)
        let calls: [(String, @Sendable () async throws(CourierError) -> Void)] = [
            ("data(for:)", { [manager] () async throws(CourierError) in _ = try await manager!.data(for: missing) }),
            ("data(from:)", { [manager] () async throws(CourierError) in _ = try await manager!.data(from: missing.url!) }),
            ("decodable", { [manager] () async throws(CourierError) in _ = try await manager!.decodable(Empty.self, for: missing) }),
            ("response", { [manager] () async throws(CourierError) in _ = try await manager!.response(for: missing, serializer: .string) }),
            (
                "upload",
                { [manager] () async throws(CourierError) in _ = try await manager!.upload(for: missingPost, from: .data(Data("x".utf8))) }
            ),
            (
                "download",
                { [manager] () async throws(CourierError) in _ = try await manager!.download(for: missing, to: .file(destination)) }
            ),
            ("client.get", { () async throws(CourierError) in _ = try await client.get("404", as: Empty.self) }),
            ("client.head", { () async throws(CourierError) in _ = try await client.head("404") }),
            ("client.post", { () async throws(CourierError) in _ = try await client.post("404", as: Empty.self) }),
            ("client.send", { () async throws(CourierError) in _ = try await client.send(.put, "404", serializer: .data) }),
        ]
        for (name, call) in calls {
            do {
                try await call()
                XCTFail("\(name): expected a 404")
            } catch {
                let typed: CourierError = error
                XCTAssertEqual(typed.code, .unacceptableStatusCode, name)
                XCTAssertEqual(typed.statusCode, 404, name)
            }
        }
    }

    func testCancellingTheSwiftTaskCancelsTheTransfer() async throws {
        let manager = manager!
        let request = request("/never-answer")
        let work = Task { try await manager.data(for: request) }
        while server.requests.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
        let started = Date()
        work.cancel()
        do {
            _ = try await work.value
            XCTFail("expected cancellation")
        } catch let error as CourierError {
            XCTAssertEqual(error.code, .cancelled)
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 2)
    }

    func testACallThatDoesNotCancelWithItsTaskRunsToItsRealOutcome() async throws {
        // Given a POST that must not be cut in the middle, answered after 600 ms
        let manager = manager!
        var request = request("/delay/600")
        request.httpMethod = "POST"
        request.httpBody = Data("pay".utf8)
        let work = Task { try await manager.data(for: request, cancelsWithTask: false) }
        while server.requests.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
        // When its Swift task is cancelled while the server works
        work.cancel()
        // Then the call still returns the server's answer, and the request went out once
        let (_, response) = try await work.value
        XCTAssertEqual(response.statusCode, 200)
        XCTAssertEqual(server.requests.count, 1)
        // And a cancelled caller can still use the default, which cancels
        let never = self.request("/never-answer")
        let cancelling = Task { try await manager.data(for: never) }
        cancelling.cancel()
        do {
            _ = try await cancelling.value
            XCTFail("expected cancellation")
        } catch let error as CourierError {
            XCTAssertEqual(error.code, .cancelled)
        }
    }

    func testAlreadyCancelledSwiftTaskSendsNothingOrCancelsAtOnce() async {
        let manager = manager!
        let request = request("/never-answer")
        let work = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await manager.data(for: request)
        }
        do {
            _ = try await work.value
            XCTFail("expected cancellation")
        } catch {
            XCTAssertEqual((error as? CourierError)?.code, .cancelled)
        }
    }

    func testDownloadPublishesTheFile() async throws {
        let destination = directory.appendingPathComponent("async.bin")
        let (url, response) = try await manager.download(for: request("/bytes/65536?seed=1"), to: .file(destination))
        XCTAssertEqual(url, destination)
        XCTAssertEqual(response.statusCode, 200)
        XCTAssertEqual(try Data(contentsOf: destination), TestServer.deterministicBytes(count: 65536, seed: 1))
    }

    func testUploadSendsTheBody() async throws {
        let (body, _) = try await manager.upload(
            for: request("/sink", method: "POST"), from: .data(Data(repeating: 1, count: 100_000)))
        let json = try JSONSerialization.jsonObject(with: body) as? [String: Any]
        XCTAssertEqual(json?["bodyLength"] as? Int, 100_000)
    }

    private struct Sunk: Decodable, Sendable { let bodyLength: Int }

    func testUploadDecodesTheReply() async throws {
        let (sunk, _) = try await manager.upload(
            for: request("/sink", method: "PUT"), from: .data(Data(count: 512)), serializer: .decodable(Sunk.self))
        XCTAssertEqual(sunk.bodyLength, 512)
    }

    func testResponseWithSerializerAndProgress() async throws {
        let updates = Counter()
        let (text, response) = try await manager.response(
            for: request("/html"), serializer: .string, downloadProgress: { _ in updates.increment() })
        XCTAssertTrue(text.contains("<html"))
        XCTAssertEqual(response.mimeType, "text/html")
        XCTAssertGreaterThan(updates.count, 0)
    }
}
