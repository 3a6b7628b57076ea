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
        } catch let error as CourierError {
            XCTAssertEqual(error.code, .unacceptableStatusCode)
            XCTAssertEqual(error.statusCode, 503)
        } catch {
            XCTFail("unexpected \(error)")
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
