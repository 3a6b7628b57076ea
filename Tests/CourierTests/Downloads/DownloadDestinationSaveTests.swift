import XCTest
import Courier

/// `DownloadDestination.save(_:to:options:)`: a body in memory published as a download is, never
/// over an existing file unless asked, and with no staging file left behind.
final class DownloadDestinationSaveTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-save-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
        try super.tearDownWithError()
    }

    private var entries: [String] { (try? FileManager.default.contentsOfDirectory(atPath: directory.path))?.sorted() ?? [] }

    func testABodyIsSavedAndNothingElseIsLeft() throws {
        let file = directory.appendingPathComponent("a.bin")
        try DownloadDestination.save(Data("hello".utf8), to: file)
        XCTAssertEqual(try Data(contentsOf: file), Data("hello".utf8))
        XCTAssertEqual(entries, ["a.bin"])
    }

    func testAnExistingFileIsLeftAsItIsUnlessReplacingWasAsked() throws {
        // Given a file already at the destination
        let file = directory.appendingPathComponent("a.bin")
        try Data("old".utf8).write(to: file)

        // When a body is saved there without, then with, replacing
        XCTAssertThrowsError(try DownloadDestination.save(Data("new".utf8), to: file)) { error in
            XCTAssertEqual((error as? CourierError)?.code, .destinationFailed)
        }
        XCTAssertEqual(try Data(contentsOf: file), Data("old".utf8), "untouched")
        try DownloadDestination.save(Data("new".utf8), to: file, options: [.removePreviousFile])

        // Then only the replacement replaced it, and no staging file is left either way
        XCTAssertEqual(try Data(contentsOf: file), Data("new".utf8))
        XCTAssertEqual(entries, ["a.bin"])
    }

    func testADirectoryThatDoesNotExistIsAnErrorNamingIt() {
        let file = directory.appendingPathComponent("missing/a.bin")
        XCTAssertThrowsError(try DownloadDestination.save(Data("x".utf8), to: file)) { error in
            XCTAssertNotNil(error as? CourierError, "\(error)")
        }
        XCTAssertEqual(entries, [])
    }
}
