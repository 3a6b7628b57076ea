import CourierTestServer
import Foundation
import XCTest

/// `/files/<name>` from `addFile` and from a root directory.
final class FilesTests: ServerTestCase {
    private var rootDirectory: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        rootDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-files-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: rootDirectory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: rootDirectory)
        super.tearDown()
    }

    func testAddedFileIsServedWithGivenValidatorsAndRanges() throws {
        let modified = Date(timeIntervalSince1970: 1_000_000_000)
        server.addFile("report.txt", data: Data("0123456789".utf8), etag: "\"v1\"", lastModified: modified, contentType: "text/plain")
        let full = try fetch("GET", "/files/report.txt")
        XCTAssertEqual(full.status, 200)
        XCTAssertEqual(full.text, "0123456789")
        XCTAssertEqual(full.header("ETag"), "\"v1\"")
        XCTAssertEqual(full.header("Last-Modified"), "Sun, 09 Sep 2001 01:46:40 GMT")
        XCTAssertEqual(full.header("Content-Type"), "text/plain")
        let partial = try fetch("GET", "/files/report.txt", headers: [("Range", "bytes=4-"), ("If-Range", "\"v1\"")])
        XCTAssertEqual(partial.status, 206)
        XCTAssertEqual(partial.text, "456789")
        let changed = try fetch("GET", "/files/report.txt", headers: [("Range", "bytes=4-"), ("If-Range", "\"v0\"")])
        XCTAssertEqual(changed.status, 200)
    }

    func testAddedFileWithoutETagGetsAContentDerivedStrongETag() throws {
        server.addFile("a.bin", data: Data([1, 2, 3]))
        let first = try XCTUnwrap(try fetch("GET", "/files/a.bin").header("ETag"))
        XCTAssertTrue(first.hasPrefix("\"") && first.hasSuffix("\""), first)
        XCTAssertNil(try fetch("GET", "/files/a.bin").header("Last-Modified"))
        server.addFile("a.bin", data: Data([1, 2, 4]))
        let replaced = try fetch("GET", "/files/a.bin")
        XCTAssertEqual(replaced.body, Data([1, 2, 4]))
        XCTAssertNotEqual(replaced.header("ETag"), first)
        server.addFile("weak.bin", data: Data([9]), etag: "W/\"w\"")
        XCTAssertEqual(try fetch("GET", "/files/weak.bin", headers: [("Range", "bytes=0-0"), ("If-Range", "W/\"w\"")]).status, 200)
    }

    func testRemovedFileIs404() throws {
        server.addFile("gone.txt", data: Data("x".utf8))
        XCTAssertEqual(try fetch("GET", "/files/gone.txt").status, 200)
        server.removeFile("gone.txt")
        XCTAssertEqual(try fetch("GET", "/files/gone.txt").status, 404)
    }

    func testRootDirectoryFilesAreServedWithMTimeValidators() throws {
        try Data("from disk".utf8).write(to: rootDirectory.appendingPathComponent("disk file.txt"))
        let rooted = try TestServer(root: rootDirectory)
        defer { rooted.stop() }
        let client = try RawClient(port: rooted.port)
        let response = try client.request("GET", "/files/disk%20file.txt")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.text, "from disk")
        XCTAssertEqual(response.header("Content-Type"), "text/plain; charset=utf-8")
        let lastModified = try XCTUnwrap(response.header("Last-Modified"))
        XCTAssertNotNil(response.header("ETag"))
        let ranged = try client.request("GET", "/files/disk%20file.txt", headers: [("Range", "bytes=5-"), ("If-Range", lastModified)])
        XCTAssertEqual(ranged.status, 206)
        XCTAssertEqual(ranged.text, "disk")
    }

    func testPathTraversalAndHiddenNamesAreRejected() throws {
        let secret = rootDirectory.deletingLastPathComponent().appendingPathComponent("courier-secret-\(UUID().uuidString).txt")
        try Data("secret".utf8).write(to: secret)
        defer { try? FileManager.default.removeItem(at: secret) }
        try Data("hidden".utf8).write(to: rootDirectory.appendingPathComponent(".hidden"))
        try FileManager.default.createSymbolicLink(at: rootDirectory.appendingPathComponent("link.txt"), withDestinationURL: secret)
        let rooted = try TestServer(root: rootDirectory)
        defer { rooted.stop() }
        let name = secret.lastPathComponent
        for target in [
            "/files/../\(name)", "/files/..%2F\(name)", "/files/%2E%2E%2F\(name)", "/files/..%5C\(name)",
            "/files/.hidden", "/files/link.txt", "/files/", "/files/sub/file",
        ] {
            let client = try RawClient(port: rooted.port)
            XCTAssertEqual(try client.request("GET", target).status, 404, target)
        }
    }
}
