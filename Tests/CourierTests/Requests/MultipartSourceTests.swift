import CourierTestSupport
import XCTest
@testable import Courier
#if canImport(Glibc)
import Glibc
#endif

final class MultipartSourceTests: MultipartTestCase {
    private let allThree: [CourierError.Code?] = [.uploadSourceFailed, .uploadSourceFailed, .uploadSourceFailed]

    private func form(withFileAt url: URL) -> MultipartFormData {
        var form = MultipartFormData()
        form.append(field: "before", name: "f")
        form.append(fileAt: url, name: "file")
        return form
    }

    private func form(withStream makeStream: @escaping @Sendable () throws -> InputStream, length: Int64) -> MultipartFormData {
        var form = MultipartFormData()
        form.append(field: "before", name: "f")
        form.append(stream: makeStream, length: length, name: "s")
        return form
    }

    // MARK: - Files

    func testMissingFileIsUploadSourceFailedNamingThePath() {
        let missing = directory.appendingPathComponent("missing.bin")
        let errors = encodingErrors(form(withFileAt: missing))
        XCTAssertEqual(errors.map { $0?.code }, allThree)
        for error in errors {
            XCTAssertTrue(error?.message.contains("\(missing.path) does not exist") ?? false, error?.message ?? "")
        }
    }

    func testDirectoryIsUploadSourceFailed() {
        let errors = encodingErrors(form(withFileAt: directory))
        XCTAssertEqual(errors.map { $0?.code }, allThree)
        XCTAssertTrue(errors[0]?.message.contains("\(directory.path) is a directory") ?? false, errors[0]?.message ?? "")
    }

    func testFIFOIsRejectedWithoutWaitingForAWriter() {
        // Opening a FIFO for reading blocks until a writer comes; nobody will.
        let fifo = directory.appendingPathComponent("pipe")
        XCTAssertEqual(mkfifo(fifo.path, 0o600), 0)
        let started = Date()
        let errors = encodingErrors(form(withFileAt: fifo))
        XCTAssertEqual(errors.map { $0?.code }, allThree)
        XCTAssertTrue(errors[0]?.message.contains("is not a regular file") ?? false, errors[0]?.message ?? "")
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
    }

    func testUnreadableFileIsUploadSourceFailed() throws {
        try XCTSkipIf(getuid() == 0, "root reads files whatever their mode")
        let url = try file("secret.bin", Data("x".utf8))
        XCTAssertEqual(chmod(url.path, 0), 0)
        let errors = encodingErrors(form(withFileAt: url))
        XCTAssertEqual(errors.map { $0?.code }, allThree)
        XCTAssertTrue(errors[0]?.message.contains("is not readable") ?? false, errors[0]?.message ?? "")
    }

    func testURLThatIsNotAFileURLIsUploadSourceFailed() {
        let errors = encodingErrors(form(withFileAt: URL(string: "https://example.com/file.bin")!))
        XCTAssertEqual(errors.map { $0?.code }, allThree)
    }

    // MARK: - Streams

    func testStreamShorterThanItsLengthIsUploadSourceFailed() {
        let errors = encodingErrors(form(withStream: { InputStream(data: Data("abc".utf8)) }, length: 10), measuring: false)
        XCTAssertEqual(errors.map { $0?.code }, [.uploadSourceFailed, .uploadSourceFailed])
        XCTAssertTrue(errors[0]?.message.contains("ended after 3 of its declared 10 bytes") ?? false, errors[0]?.message ?? "")
    }

    func testStreamLongerThanItsLengthIsUploadSourceFailed() {
        let errors = encodingErrors(form(withStream: { InputStream(data: Data("abcdef".utf8)) }, length: 5), measuring: false)
        XCTAssertEqual(errors.map { $0?.code }, [.uploadSourceFailed, .uploadSourceFailed])
        XCTAssertTrue(errors[0]?.message.contains("yields more than its declared 5 bytes") ?? false, errors[0]?.message ?? "")
    }

    func testEmptyStreamOfLengthZeroIsAnEmptyPart() throws {
        let form = form(withStream: { InputStream(data: Data()) }, length: 0)
        let parts = try MultipartParser.parse(try form.encoded(), boundary: form.boundary)
        XCTAssertEqual(parts.last?.body, Data())
    }

    func testStreamFactoryThatThrowsIsUploadSourceFailedWithTheError() {
        struct NoStream: Error {}
        let errors = encodingErrors(form(withStream: { throw NoStream() }, length: 1), measuring: false)
        XCTAssertEqual(errors.map { $0?.code }, [.uploadSourceFailed, .uploadSourceFailed])
        XCTAssertTrue(errors[0]?.underlyingError is NoStream)
    }

    func testStreamThatFailsMidwayIsUploadSourceFailedWithItsError() {
        let content = Data(count: 100_000)
        let errors = encodingErrors(
            form(withStream: { ScriptedInputStream(content, chunk: 4096, failAfter: 50_000) }, length: 100_000),
            measuring: false)
        XCTAssertEqual(errors.map { $0?.code }, [.uploadSourceFailed, .uploadSourceFailed])
        XCTAssertEqual((errors[0]?.underlyingError as? POSIXError)?.code, .EIO)
    }

    func testStreamReadFailingWithoutAnErrorDoesNotTrap() {
        // Asking this stream for `streamError` would crash the test process.
        let errors = encodingErrors(
            form(withStream: { SilentlyFailingInputStream(data: Data("abc".utf8)) }, length: 3), measuring: false)
        XCTAssertEqual(errors.map { $0?.code }, [.uploadSourceFailed, .uploadSourceFailed])
        XCTAssertNil(errors[0]?.underlyingError)
    }

    func testFoundationStreamThatCannotOpenItsFileIsUploadSourceFailed() {
        let missing = directory.appendingPathComponent("missing").path
        let errors = encodingErrors(form(withStream: { InputStream(fileAtPath: missing)! }, length: 1), measuring: false)
        XCTAssertEqual(errors.map { $0?.code }, [.uploadSourceFailed, .uploadSourceFailed])
        XCTAssertEqual((errors[0]?.underlyingError as? NSError)?.code, Int(ENOENT))
    }

    func testFoundationStreamOnADirectoryIsUploadSourceFailed() {
        let path = directory.path
        let errors = encodingErrors(form(withStream: { InputStream(fileAtPath: path)! }, length: 1), measuring: false)
        XCTAssertEqual(errors.map { $0?.code }, [.uploadSourceFailed, .uploadSourceFailed])
        XCTAssertEqual((errors[0]?.underlyingError as? NSError)?.code, Int(EISDIR))
    }

    func testStreamIsOpenedOnceAndClosedOnEveryPath() throws {
        let cases: [(length: Int64, failAfter: Int?, succeeds: Bool)] = [
            (5, nil, true), (9, nil, false), (4, nil, false), (5, 2, false),
        ]
        for (length, failAfter, succeeds) in cases {
            let events = Box<String>()
            let form = form(
                withStream: { ScriptedInputStream(Data("12345".utf8), failAfter: failAfter, events: events) }, length: length)
            XCTAssertEqual((try? form.encoded()) != nil, succeeds, "length \(length), failAfter \(String(describing: failAfter))")
            XCTAssertEqual(events.all, ["open", "close"], "length \(length), failAfter \(String(describing: failAfter))")
        }
    }

    func testStreamFactoryIsCalledOncePerEncodingAndNotToMeasure() throws {
        let calls = Counter()
        let form = form(
            withStream: {
                calls.increment(); return InputStream(data: Data("abc".utf8))
            }, length: 3)
        _ = try form.contentLength()
        XCTAssertEqual(calls.count, 0)
        _ = try form.encoded()
        try form.write(to: directory.appendingPathComponent("out"))
        XCTAssertEqual(calls.count, 2)
    }

    func testNegativeStreamLengthIsAnInvalidRequest() {
        let errors = encodingErrors(form(withStream: { InputStream(data: Data()) }, length: -1))
        XCTAssertEqual(errors.map { $0?.code }, [.invalidRequest, .invalidRequest, .invalidRequest])
    }
}
