import CourierTestSupport
import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `ResumeData.record(beside:)`: the one reader of the resume record kept beside a partial file,
/// used by the session, the queue and the command line alike; and `ResumeData` as a `Codable` value.
final class ResumeRecordTests: CourierTestCase {
    private let content = TestServer.deterministicBytes(count: 300_000, seed: 41)
    private var destination: URL { directory.appendingPathComponent("r.bin") }
    private var partial: URL { DownloadPolicy.defaultPartialFile(for: destination) }
    private var recordFile: URL { DownloadPolicy.recordFile(for: partial) }
    /// Slow enough to interrupt: 8 KiB every 5 ms.
    private let path = "/files/r.bin?chunk=8192&chunk_delay_ms=5"

    /// A download cancelled with resume data after some bytes: its partial file and record stay.
    private func interruptedDownload() -> ResumeData? {
        server.addFile("r.bin", data: content, etag: "\"v1\"")
        let handed = Box<ResumeData?>()
        let response: DownloadResponse? = wait(timeout: 30) { finish in
            let task = manager.downloadTask(
                with: request(path), to: .file(destination), completion: finish)
            task.resume()
            waitUntil("bytes arrive") { task.downloadProgress.completedUnitCount >= 60_000 }
            task.cancel(producingResumeData: { handed.append($0) })
        }
        XCTAssertEqual(response?.error?.code, .cancelled)
        waitUntil("the resume data is handed out") { handed.count == 1 }
        return handed.first ?? nil
    }

    private func readError(beside partial: URL) -> CourierError? {
        do {
            _ = try ResumeData.record(beside: partial)
            return nil
        } catch { return error }
    }

    // MARK: - Reading the record

    func testTheRecordOfAnInterruptedDownloadIsWhatTheTaskHandedOut() throws {
        // Given a download over a real socket, cancelled with resume data mid-body
        let handed = try XCTUnwrap(interruptedDownload())

        // When the record beside its partial file is read
        let record = try XCTUnwrap(try ResumeData.record(beside: partial))

        // Then it is the resume data the task handed out
        XCTAssertEqual(record, handed)
        XCTAssertGreaterThan(record.bytesOnDisk, 0)
        XCTAssertEqual(record.validator, "\"v1\"")
    }

    func testNoRecordReadsAsNilAndChangesNothing() throws {
        // Given a partial file with no record beside it
        try Data(count: 10).write(to: partial)

        // When it is read, then there is none, and the partial file stays
        XCTAssertNil(try ResumeData.record(beside: partial))
        XCTAssertTrue(FileManager.default.fileExists(atPath: partial.path))
    }

    func testADamagedRecordIsATypedErrorAndIsLeftForTheDownloadToRemove() throws {
        // Given a record cut short
        let handed = try XCTUnwrap(interruptedDownload())
        try handed.encoded().prefix(40).write(to: recordFile)

        // When it is read
        let error = readError(beside: partial)

        // Then it is invalidResumeData naming the record, and reading removed nothing
        XCTAssertEqual(error?.code, .invalidResumeData)
        XCTAssertTrue(error?.message.contains(recordFile.path) ?? false, error?.message ?? "")
        XCTAssertTrue(FileManager.default.fileExists(atPath: recordFile.path))
    }

    func testASymlinkAtTheRecordIsNeverFollowed() throws {
        // Given a good record elsewhere, linked to from the record's name
        let handed = try XCTUnwrap(interruptedDownload())
        let elsewhere = directory.appendingPathComponent("elsewhere.courier-resume")
        try FileManager.default.moveItem(at: recordFile, to: elsewhere)
        try FileManager.default.createSymbolicLink(at: recordFile, withDestinationURL: elsewhere)
        XCTAssertEqual(try ResumeData(data: Data(contentsOf: elsewhere)), handed)

        // When it is read, then the link is refused
        XCTAssertEqual(readError(beside: partial)?.code, .invalidResumeData)
    }

    func testARecordOfAnotherPartialFileIsRefused() throws {
        // Given a valid record naming another partial file
        let other = ResumeData(
            url: server.url("/files/r.bin"), partialFile: directory.appendingPathComponent(".other.courier-partial"),
            bytesOnDisk: 10, validator: "\"v1\"", totalLength: 300_000)
        try other.encoded().write(to: recordFile)

        // When it is read beside this partial file, then it is refused
        let error = readError(beside: partial)
        XCTAssertEqual(error?.code, .invalidResumeData)
        XCTAssertTrue(error?.message.contains("another partial file") ?? false, error?.message ?? "")
    }

    func testTheNextDownloadContinuesFromTheRecordTheReaderReturns() throws {
        // Given an interrupted download and its record, as read by the one reader
        _ = try XCTUnwrap(interruptedDownload())
        let record = try XCTUnwrap(try ResumeData.record(beside: partial))

        // When the same download runs again
        let response: DownloadResponse? = wait(timeout: 30) { finish in
            manager.downloadTask(with: request(path), to: .file(destination), completion: finish).resume()
        }

        // Then it asked for the rest from the record's offset and published the whole file
        XCTAssertNil(response?.error)
        XCTAssertEqual(server.requests.last?.header("Range"), "bytes=\(record.bytesOnDisk)-")
        XCTAssertEqual(try Data(contentsOf: destination), content)
    }

    // MARK: - Codable

    func testResumeDataRoundTripsThroughJSONAsItsPayload() throws {
        // Given resume data with every field set
        var data = ResumeData(
            url: URL(string: "https://example.test/a.bin")!, headers: ["X-Trace": "1"],
            partialFile: URL(fileURLWithPath: "/tmp/.a.bin.courier-partial"), bytesOnDisk: 12, validator: "\"v\"",
            totalLength: 99)
        data.omittedHeaders = ["Authorization"]

        // When it is encoded and decoded with JSONEncoder and JSONDecoder
        let json = try JSONEncoder().encode(data)
        let decoded = try JSONDecoder().decode(ResumeData.self, from: json)

        // Then it is the same, stored as the record's payload (a URL as a string, a path)
        XCTAssertEqual(decoded, data)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        XCTAssertEqual(object["url"] as? String, "https://example.test/a.bin")
        XCTAssertEqual(object["partialFile"] as? String, "/tmp/.a.bin.courier-partial")
    }

    func testDecodingAppliesTheRecordsChecks() throws {
        // Given a payload claiming more bytes than the whole resource
        let json = Data(
            #"{"url":"https://example.test/a","method":"GET","headers":{},"partialFile":"/tmp/.a.courier-partial","bytesOnDisk":50,"totalLength":10}"#
                .utf8)

        // When it is decoded, then it fails with the typed error underneath
        XCTAssertThrowsError(try JSONDecoder().decode(ResumeData.self, from: json)) { error in
            guard case DecodingError.dataCorrupted(let context) = error else { return XCTFail("\(error)") }
            XCTAssertEqual((context.underlyingError as? CourierError)?.code, .invalidResumeData)
        }
    }

    func testAPartialFileNamedAfterTheURLIsTheSameOnEveryRunAndDiffersPerURL() throws {
        // Given a URL and a directory (moved here from `courier get`'s tests with the rule)
        let url = try XCTUnwrap(URL(string: "http://bench.invalid/files/a.bin"))
        let place = URL(fileURLWithPath: "/work/dir", isDirectory: true)
        let digest = SHA256.hexString(SHA256.hash(Data(url.absoluteString.utf8)))
        // Then the name is the URL's hash, and another URL gets another name
        XCTAssertEqual(DownloadPolicy.partialFile(for: url, in: place).path, "/work/dir/.courier-\(digest.prefix(16)).courier-partial")
        XCTAssertNotEqual(
            DownloadPolicy.partialFile(for: url, in: place),
            DownloadPolicy.partialFile(for: try XCTUnwrap(URL(string: "http://h/b")), in: place))
    }
}
