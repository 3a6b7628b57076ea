import CourierTestServer
import XCTest

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Downloads read by the same serializers as data tasks, off the caller's queue.
final class DecodedDownloadTests: CourierTestCase {
    struct Record: Codable, Equatable, Sendable {
        let id: Int
        let name: String
    }

    private let records = (1...2000).map { Record(id: $0, name: "record \($0)") }

    private func jsonServer(_ body: Data) throws -> ScriptedServer {
        try ScriptedServer { _, _ in
            .response(status: 200, headers: [("Content-Type", "application/json"), ("Content-Length", String(body.count))], body: body)
        }
    }

    /// Downloads `url` to `destination`, read as `[Record]`.
    private func downloadRecords(_ url: URL, to destination: URL) -> SerializedDownloadResponse<[Record]>? {
        wait { finish in
            manager.downloadTask(
                with: URLRequest(url: url), to: .file(destination), serializer: .decodable([Record].self), completion: finish
            ).resume()
        }
    }

    func testADownloadedJSONFileIsDecodedAndStaysPublished() throws {
        // Given a server with a JSON export
        let body = try JSONEncoder().encode(records)
        let server = try jsonServer(body)
        defer { server.stop() }
        let destination = directory.appendingPathComponent("export.json")
        // When it is downloaded with a decodable serializer
        let response = downloadRecords(server.url("/export.json"), to: destination)
        // Then the value is the decoded file, and the file is where it was asked to be
        XCTAssertNil(response?.error)
        XCTAssertEqual(response?.value, records)
        XCTAssertEqual(response?.fileURL, destination)
        XCTAssertEqual(try Data(contentsOf: destination), body)
        XCTAssertEqual(response?.response?.statusCode, 200)
    }

    func testAFileThatDoesNotDecodeFailsDecodingButIsStillPublished() throws {
        let server = try jsonServer(Data(#"{"not":"a list"}"#.utf8))
        defer { server.stop() }
        let destination = directory.appendingPathComponent("export.json")
        let response = downloadRecords(server.url("/export.json"), to: destination)
        XCTAssertEqual(response?.error?.code, .decodingFailed)
        XCTAssertEqual(response?.fileURL, destination, "the download itself succeeded")
        XCTAssertTrue(FileManager.default.fileExists(atPath: destination.path))
    }

    func testAFailedDownloadReportsTheDownloadsError() throws {
        let destination = directory.appendingPathComponent("missing.json")
        let response = downloadRecords(server.url("/status/404"), to: destination)
        XCTAssertEqual(response?.error?.code, .unacceptableStatusCode)
        XCTAssertNil(response?.fileURL)
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path))
    }

    func testTheStringAndJSONSerializersReadTheFileToo() throws {
        let server = try jsonServer(Data(#"{"greeting":"héllo"}"#.utf8))
        defer { server.stop() }
        let text = wait { finish in
            manager.downloadTask(
                with: URLRequest(url: server.url("/a")), to: .file(directory.appendingPathComponent("a.json")), serializer: .string,
                completion: finish
            ).resume()
        }
        XCTAssertEqual(text?.value, #"{"greeting":"héllo"}"#)
    }

    func testTheAsyncFormReturnsTheValueTheFileAndTheResponse() async throws {
        let body = try JSONEncoder().encode(records)
        let server = try jsonServer(body)
        defer { server.stop() }
        let destination = directory.appendingPathComponent("export.json")
        let (value, file, http) = try await manager.download(
            for: URLRequest(url: server.url("/export.json")), to: .file(destination), serializer: .decodable([Record].self))
        XCTAssertEqual(value, records)
        XCTAssertEqual(file, destination)
        XCTAssertEqual(http.statusCode, 200)
    }
}
