import XCTest
@testable import Courier

/// Base class for the multipart tests: a private temporary directory, removed afterwards, and
/// helpers to run an encoding and get its typed error.
class MultipartTestCase: XCTestCase {
    var directory: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-multipart-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        if let directory { try? FileManager.default.removeItem(at: directory) }
        directory = nil
        try super.tearDownWithError()
    }

    /// Writes `data` to a file in `directory` and returns its URL.
    func file(_ name: String, _ data: Data) throws -> URL {
        let url = directory.appendingPathComponent(name)
        try data.write(to: url)
        return url
    }

    /// The entries of `directory`, sorted.
    var directoryContents: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
    }

    /// The error `body` throws, or a failure when it throws none.
    func error<T>(
        file: StaticString = #filePath, line: UInt = #line, _ body: () throws(CourierError) -> T
    ) -> CourierError? {
        do {
            _ = try body()
            XCTFail("expected a CourierError", file: file, line: line)
            return nil
        } catch {
            return error
        }
    }

    /// The errors of the ways to encode `form` (`contentLength()` unless `measuring` is false,
    /// `encoded()` and `write(to:)`), after checking that `write(to:)` left no file behind.
    func encodingErrors(
        _ form: MultipartFormData, measuring: Bool = true, file: StaticString = #filePath, line: UInt = #line
    ) -> [CourierError?] {
        let target = directory.appendingPathComponent("body-\(UUID().uuidString).multipart")
        var errors: [CourierError?] = []
        if measuring {
            errors.append(error(file: file, line: line) { () throws(CourierError) in try form.contentLength() })
        }
        errors.append(error(file: file, line: line) { () throws(CourierError) in try form.encoded() })
        errors.append(error(file: file, line: line) { () throws(CourierError) in try form.write(to: target) })
        XCTAssertFalse(FileManager.default.fileExists(atPath: target.path), "write(to:) left a file", file: file, line: line)
        return errors
    }
}
