import XCTest
@testable import Courier

final class FilePublisherTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-publish-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    private func staged(_ text: String) throws -> URL {
        let url = directory.appendingPathComponent(".staged-\(UUID().uuidString)")
        try Data(text.utf8).write(to: url)
        return url
    }

    private func publishError(_ staged: URL, _ destination: URL, _ options: DownloadDestination.Options) -> CourierError? {
        do {
            try FilePublisher.publish(staged, to: destination, options: options, requestURL: nil)
            return nil
        } catch { return error }
    }

    func testPublishMovesTheFileAndLeavesNoStagingFile() throws {
        let source = try staged("body")
        let destination = directory.appendingPathComponent("out.bin")
        XCTAssertNil(publishError(source, destination, []))
        XCTAssertEqual(try String(contentsOf: destination, encoding: .utf8), "body")
        XCTAssertFalse(FileManager.default.fileExists(atPath: source.path))
    }

    func testExistingFileIsKeptWithoutRemovePreviousFile() throws {
        let destination = directory.appendingPathComponent("out.bin")
        try Data("old".utf8).write(to: destination)
        let error = publishError(try staged("new"), destination, [])
        XCTAssertEqual(error?.code, .destinationFailed)
        XCTAssertTrue(error?.message.contains("already exists") ?? false)
        XCTAssertEqual(try String(contentsOf: destination, encoding: .utf8), "old")
    }

    func testExistingFileIsReplacedWithRemovePreviousFile() throws {
        let destination = directory.appendingPathComponent("out.bin")
        try Data("old".utf8).write(to: destination)
        XCTAssertNil(publishError(try staged("new"), destination, [.removePreviousFile]))
        XCTAssertEqual(try String(contentsOf: destination, encoding: .utf8), "new")
    }

    func testMissingDirectoryIsAnErrorUnlessAskedToCreateIt() throws {
        let destination = directory.appendingPathComponent("a/b/out.bin")
        XCTAssertEqual(publishError(try staged("x"), destination, [])?.code, .destinationFailed)
        XCTAssertNil(publishError(try staged("x"), destination, [.createIntermediateDirectories]))
        XCTAssertTrue(FileManager.default.fileExists(atPath: destination.path))
    }

    func testDestinationThatIsADirectoryIsAnError() throws {
        let destination = directory.appendingPathComponent("dir")
        try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: true)
        let error = publishError(try staged("x"), destination, [.removePreviousFile])
        XCTAssertEqual(error?.code, .destinationFailed)
        XCTAssertTrue(error?.message.contains("is a directory") ?? false)
    }

    func testParentThatIsAFileIsAnError() throws {
        let file = directory.appendingPathComponent("plain")
        try Data().write(to: file)
        XCTAssertEqual(
            publishError(try staged("x"), file.appendingPathComponent("out.bin"), [.createIntermediateDirectories])?.code,
            .destinationFailed)
    }
}

final class StagingFileTests: XCTestCase {
    func testStagingFileIsPrivateAndBuffersWrites() throws {
        let directory = FileManager.default.temporaryDirectory
        let file = try StagingFile(in: directory, bufferCapacity: 8)
        defer { file.discard() }
        var info = stat()
        XCTAssertEqual(stat(file.url.path, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o600)
        try file.append(Data("abc".utf8))
        XCTAssertEqual(try Data(contentsOf: file.url).count, 0, "small writes stay buffered")
        try file.append(Data("defghijkl".utf8))
        try file.append(Data("mn".utf8))
        try file.close()
        XCTAssertEqual(try String(contentsOf: file.url, encoding: .utf8), "abcdefghijklmn")
        XCTAssertEqual(file.length, 14)
    }

    func testTruncateStartsOverAndDiscardDeletes() throws {
        let file = try StagingFile(in: FileManager.default.temporaryDirectory)
        try file.append(Data("old body".utf8))
        try file.flush()
        try file.truncate()
        try file.append(Data("new".utf8))
        try file.close()
        XCTAssertEqual(try String(contentsOf: file.url, encoding: .utf8), "new")
        file.discard()
        XCTAssertFalse(FileManager.default.fileExists(atPath: file.url.path))
    }

    func testCreationInAMissingDirectoryIsATypedError() {
        XCTAssertThrowsError(try StagingFile(in: URL(fileURLWithPath: "/nonexistent-\(UUID().uuidString)"))) {
            XCTAssertEqual(($0 as! CourierError).code, .fileSystem)
        }
    }
}
