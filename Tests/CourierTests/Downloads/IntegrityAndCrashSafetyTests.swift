import CourierTestSupport
import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

final class IntegrityAndCrashSafetyTests: CourierTestCase {
    private let content = TestServer.deterministicBytes(count: 600_000, seed: 91)

    private func download(
        _ path: String, _ destination: URL, _ policy: DownloadPolicy, using manager: SessionManager? = nil
    )
        -> DownloadResponse?
    {
        let manager = manager ?? self.manager!
        return wait(timeout: 30) { finish in
            manager.downloadTask(with: request(path), to: .file(destination), policy: policy, completion: finish).resume()
        }
    }

    func testMatchingSHA256Publishes() throws {
        server.addFile("ok.bin", data: content, etag: "\"v1\"")
        var policy = DownloadPolicy()
        policy.expectedSHA256 = SHA256.hash(content)
        policy.expectedLength = Int64(content.count)
        let destination = directory.appendingPathComponent("ok.bin")
        XCTAssertNil(download("/files/ok.bin", destination, policy)?.error)
        XCTAssertEqual(try Data(contentsOf: destination), content)
    }

    func testWrongSHA256PublishesNothingAndKeepsNothing() {
        server.addFile("bad.bin", data: content, etag: "\"v1\"")
        var policy = DownloadPolicy()
        policy.expectedSHA256 = SHA256.hash(Data("something else".utf8))
        let destination = directory.appendingPathComponent("bad.bin")
        let response = download("/files/bad.bin", destination, policy)
        XCTAssertEqual(response?.error?.code, .integrityFailed)
        XCTAssertTrue(response?.error?.message.contains("SHA-256") ?? false)
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path))
        XCTAssertEqual(stagingFiles(in: directory), [])
    }

    func testAnnouncedLengthThatDiffersFailsBeforeTheBody() {
        server.addFile("len.bin", data: content, etag: "\"v1\"")
        var policy = DownloadPolicy()
        policy.expectedLength = 5
        let response = download("/files/len.bin", directory.appendingPathComponent("len.bin"), policy)
        XCTAssertEqual(response?.error?.code, .integrityFailed)
        XCTAssertLessThan(response?.report.bytesReceived ?? .max, Int64(content.count))
    }

    func testChecksumCoversBytesFromAnEarlierAttempt() throws {
        server.addFile("sum.bin", data: content, etag: "\"v1\"")
        var policy = DownloadPolicy()
        policy.expectedSHA256 = SHA256.hash(content)
        policy.retry.retryLimit = 0
        let destination = directory.appendingPathComponent("sum.bin")
        let failed = download("/files/sum.bin?close_after=250000", destination, policy)
        var resumeData = try XCTUnwrap(failed?.error?.resumeData)
        resumeData.url = server.url("/files/sum.bin")  // the drop was injected with a query parameter
        let resumed: DownloadResponse? = wait { finish in
            manager.downloadTask(resumingFrom: resumeData, to: .file(destination), policy: policy, completion: finish).resume()
        }
        XCTAssertNil(resumed?.error)
        XCTAssertEqual(try Data(contentsOf: destination), content)
    }

    func testRecordIsKeptBesideThePartialFileAndNeverClaimsUnflushedBytes() throws {
        server.addFile("record.bin", data: content, etag: "\"v1\"")
        let destination = directory.appendingPathComponent("record.bin")
        let partial = DownloadPolicy.defaultPartialFile(for: destination)
        let recordFile = DownloadPolicy.recordFile(for: partial)
        var policy = DownloadPolicy()
        policy.recordInterval = .milliseconds(20)
        let checks = Counter()
        let response: DownloadResponse? = wait(timeout: 30) { finish in
            manager.downloadTask(
                with: request("/files/record.bin?chunk=4096&chunk_delay_ms=2"), to: .file(destination), policy: policy,
                completion: finish
            ).resume()
            waitUntil("a record appears") { FileManager.default.fileExists(atPath: recordFile.path) }
            for _ in 0..<20 {
                if let bytes = FileManager.default.contents(atPath: recordFile.path),
                    let record = try? ResumeData(data: bytes),
                    let size = (try? FileManager.default.attributesOfItem(atPath: partial.path)[.size]) as? NSNumber
                {
                    XCTAssertLessThanOrEqual(record.bytesOnDisk, size.int64Value, "the record never runs ahead of the file")
                    XCTAssertEqual(record.validator, "\"v1\"")
                    checks.increment()
                }
                Thread.sleep(forTimeInterval: 0.01)
            }
        }
        XCTAssertNil(response?.error)
        XCTAssertGreaterThan(checks.count, 0)
        XCTAssertEqual(stagingFiles(in: directory), [], "record and partial file are gone once published")
    }

    func testAReleasedManagerLeavesARecordTheNextDownloadContinues() throws {
        server.addFile("crash.bin", data: content, etag: "\"v1\"")
        let destination = directory.appendingPathComponent("crash.bin")
        var policy = DownloadPolicy()
        policy.recordInterval = .milliseconds(10)
        let first = wait { (finish: @escaping @Sendable (DownloadResponse) -> Void) in
            var doomed: SessionManager? = SessionManager(configuration: makeConfiguration())
            let task = doomed!.downloadTask(
                with: request("/files/crash.bin?chunk=8192&chunk_delay_ms=5"), to: .file(destination), policy: policy,
                completion: finish)
            task.resume()
            waitUntil("bytes arrive") { task.downloadProgress.completedUnitCount >= 100_000 }
            doomed = nil  // the process "dies": its session goes away mid-body
        }
        XCTAssertEqual(first?.error?.code, .sessionInvalidated)
        XCTAssertTrue(
            FileManager.default.fileExists(atPath: DownloadPolicy.recordFile(for: DownloadPolicy.defaultPartialFile(for: destination)).path)
        )
        server.clearRequests()
        let second = download("/files/crash.bin?chunk=8192&chunk_delay_ms=5", destination, .default)
        XCTAssertNil(second?.error)
        XCTAssertGreaterThan(second?.report.resumedBytes ?? 0, 0)
        XCTAssertNotNil(server.requests.first?.header("Range"), "continued, not started over")
        XCTAssertEqual(try Data(contentsOf: destination), content)
        XCTAssertEqual(stagingFiles(in: directory), [])
    }

    func testADamagedRecordMeansStartingOverSafely() throws {
        server.addFile("damaged.bin", data: content, etag: "\"v1\"")
        let destination = directory.appendingPathComponent("damaged.bin")
        let partial = DownloadPolicy.defaultPartialFile(for: destination)
        try Data(repeating: 0xEE, count: 1000).write(to: partial)
        try Data("courier-resume 1\nsha256 00\n{".utf8).write(to: DownloadPolicy.recordFile(for: partial))
        let response = download("/files/damaged.bin", destination, .default)
        XCTAssertNil(response?.error)
        XCTAssertNil(server.requests.last?.header("Range"))
        XCTAssertEqual(try Data(contentsOf: destination), content)
    }
}
