import CourierTestSupport
import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CourierSupport

/// Nothing fetched is thrown away by a polite stop: cancelling the awaiting Swift `Task`, or a
/// destination that is already taken.
final class PoliteStopTests: CourierTestCase {
    private let content = TestServer.deterministicBytes(count: 400_000, seed: 31)

    /// Starts an async download of a slow file and cancels its Swift task once bytes are on disk.
    private func cancelledDownload(
        to destination: URL, cancellation: DownloadCancellation
    ) async throws -> CourierError {
        server.addFile("slow.bin", data: content, etag: "\"v1\"")
        // The record names this URL: a rerun with the same URL continues from it.
        let url = request("/files/slow.bin?chunk=16384&chunk_delay_ms=50")
        let manager = manager!
        let received = Locked<Int64>(0)
        let task = Task {
            try await manager.download(
                for: url, to: .file(destination), cancellation: cancellation,
                progress: { progress in received.withLock { $0 = progress.completedUnitCount } })
        }
        // About a second of body is left when the cancel comes.
        let deadline = Date().addingTimeInterval(10)
        while received.withLock({ $0 }) < 65_536, Date() < deadline { try await Task.sleep(for: .milliseconds(5)) }
        task.cancel()
        do {
            _ = try await task.value
            XCTFail("the download finished before it was cancelled")
            throw CourierError(code: .cancelled, message: "not cancelled")
        } catch let error as CourierError {
            return error
        }
    }

    func testCancellingTheAwaitingTaskKeepsTheBytesAndTheNextDownloadContinues() async throws {
        let destination = directory.appendingPathComponent("kept.bin")
        let error = try await cancelledDownload(to: destination, cancellation: .keepsBytes)
        XCTAssertEqual(error.code, .cancelled)
        let resume = try XCTUnwrap(error.resumeData, "the thrown error carries resume data")
        XCTAssertGreaterThan(resume.bytesOnDisk, 0)
        XCTAssertEqual(
            stagingFiles(in: directory), [".kept.bin.courier-partial", ".kept.bin.courier-resume"],
            "the partial file and its record stay, as after kill -9")
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path))

        server.clearRequests()
        let (file, _) = try await manager.download(
            for: request("/files/slow.bin?chunk=16384&chunk_delay_ms=50"), to: .file(destination))
        XCTAssertEqual(try Data(contentsOf: file), content)
        XCTAssertEqual(server.requests.first?.header("Range"), "bytes=\(resume.bytesOnDisk)-", "continued, not refetched")
        XCTAssertEqual(stagingFiles(in: directory), [])
    }

    func testDiscardingOnCancellationRemovesTheBytes() async throws {
        let destination = directory.appendingPathComponent("dropped.bin")
        let error = try await cancelledDownload(to: destination, cancellation: .discardsBytes)
        XCTAssertEqual(error.code, .cancelled)
        XCTAssertNil(error.resumeData)
        XCTAssertEqual(stagingFiles(in: directory), [])
    }

    func testAFixedDestinationThatExistsFailsBeforeAnythingIsSent() throws {
        let destination = directory.appendingPathComponent("taken.bin")
        try Data("mine".utf8).write(to: destination)
        let response: DownloadResponse? = wait { finish in
            manager.downloadTask(with: request("/bytes/1000"), to: .file(destination), completion: finish).resume()
        }
        XCTAssertEqual(response?.error?.code, .destinationFailed)
        XCTAssertTrue(response?.error?.message.contains("already exists") ?? false)
        XCTAssertEqual(server.requests.count, 0, "no byte fetched for nothing")
        XCTAssertEqual(try Data(contentsOf: destination), Data("mine".utf8))
    }

    func testADestinationDecidedAtTheResponseStopsTheBodyWhenTheNameIsTaken() throws {
        server.addFile("named.bin", data: content, etag: "\"v1\"")
        let taken = directory.appendingPathComponent("report.pdf")
        try Data("mine".utf8).write(to: taken)
        let calls = Counter()
        let destination = DownloadDestination(stagingDirectory: directory, timing: .atResponse) { [directory] _, response in
            calls.increment()
            XCTAssertEqual(response.statusCode, 200)
            return (directory!.appendingPathComponent("report.pdf"), [])
        }
        var policy = DownloadPolicy()
        policy.partialFile = directory.appendingPathComponent(".named.courier-partial")
        let response: DownloadResponse? = wait { finish in
            manager.downloadTask(
                with: request("/files/named.bin?chunk=4096&chunk_delay_ms=20"), to: destination, policy: policy,
                completion: finish
            ).resume()
        }
        let error = try XCTUnwrap(response?.error)
        XCTAssertEqual(error.code, .destinationFailed)
        XCTAssertTrue(error.message.contains("already exists"), error.message)
        XCTAssertEqual(calls.count, 1)
        XCTAssertEqual(try Data(contentsOf: taken), Data("mine".utf8), "the existing file is untouched")
        XCTAssertLessThan(response?.report.bytesReceived ?? .max, Int64(content.count / 2), "stopped early, not after the body")
    }

    func testAFixedDestinationThatExistsLeavesAnEarlierRunsBytesInPlace() throws {
        server.addFile("earlier.bin", data: content, etag: "\"v1\"")
        let destination = directory.appendingPathComponent("earlier.bin")
        var policy = DownloadPolicy()
        policy.retry.retryLimit = 0
        let broken: DownloadResponse? = wait { finish in
            manager.downloadTask(
                with: request("/files/earlier.bin?close_after=100000"), to: .file(destination),
                policy: policy, completion: finish
            ).resume()
        }
        XCTAssertNotNil(broken?.error?.resumeData)
        try Data("mine".utf8).write(to: destination)
        let refused: DownloadResponse? = wait { finish in
            manager.downloadTask(
                with: request("/files/earlier.bin?close_after=100000"), to: .file(destination),
                completion: finish
            ).resume()
        }
        XCTAssertEqual(refused?.error?.code, .destinationFailed)
        XCTAssertEqual(refused?.error?.resumeData?.bytesOnDisk, 100_000, "the earlier run's bytes are still resumable")
        XCTAssertEqual(stagingFiles(in: directory), [".earlier.bin.courier-partial", ".earlier.bin.courier-resume"])
    }

    /// A partial file holding the whole body, with its record, as a run stopped just before
    /// publishing would leave it.
    private func completePartial(for url: URL, destination: URL) throws {
        let partial = DownloadPolicy.defaultPartialFile(for: destination)
        try content.write(to: partial)
        let record = ResumeData(
            url: url, partialFile: partial, bytesOnDisk: Int64(content.count), validator: "\"v1\"",
            totalLength: Int64(content.count))
        try record.encoded().write(to: DownloadPolicy.recordFile(for: partial))
    }

    func testABodyA416ProvedCompleteIsKeptWhenTheDownloadStillFails() throws {
        let server = try ScriptedServer { [content] _, _ in
            .response(
                status: 416, reason: "Range Not Satisfiable",
                headers: [("Content-Range", "bytes */\(content.count)"), ("Content-Length", "0")])
        }
        defer { server.stop() }
        let url = server.url("/whole.bin")
        let destination = directory.appendingPathComponent("whole.bin")
        try completePartial(for: url, destination: destination)
        var policy = DownloadPolicy()
        policy.partialFile = DownloadPolicy.defaultPartialFile(for: destination)
        try Data("mine".utf8).write(to: directory.appendingPathComponent("taken.bin"))
        let named = DownloadDestination(stagingDirectory: directory, timing: .atResponse) { [directory] _, _ in
            (directory!.appendingPathComponent("taken.bin"), [])
        }
        let response: DownloadResponse? = wait { finish in
            manager.downloadTask(with: URLRequest(url: url), to: named, policy: policy, completion: finish).resume()
        }
        XCTAssertEqual(response?.error?.code, .destinationFailed)
        XCTAssertEqual(response?.error?.resumeData?.bytesOnDisk, Int64(content.count), "all of it, still on disk")
        XCTAssertEqual(try Data(contentsOf: DownloadPolicy.defaultPartialFile(for: destination)), content)
    }

    func testA416CompletionStillChecksTheExpectedLength() throws {
        let server = try ScriptedServer { [content] _, _ in
            .response(
                status: 416, reason: "Range Not Satisfiable",
                headers: [("Content-Range", "bytes */\(content.count)"), ("Content-Length", "0")])
        }
        defer { server.stop() }
        let url = server.url("/short.bin")
        let destination = directory.appendingPathComponent("short.bin")
        try completePartial(for: url, destination: destination)
        var policy = DownloadPolicy()
        policy.expectedLength = 500
        let response: DownloadResponse? = wait { finish in
            manager.downloadTask(with: URLRequest(url: url), to: .file(destination), policy: policy, completion: finish).resume()
        }
        XCTAssertEqual(response?.error?.code, .integrityFailed)
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path))
    }

    func testADestinationDecidedAtTheResponseIsAskedOnceAndPublishedThere() throws {
        server.addFile("once.bin", data: content, etag: "\"v1\"")
        let calls = Counter()
        let destination = DownloadDestination(stagingDirectory: directory, timing: .atResponse) { [directory] _, _ in
            calls.increment()
            return (directory!.appendingPathComponent("chosen.bin"), [])
        }
        let response: DownloadResponse? = wait { finish in
            manager.downloadTask(with: request("/files/once.bin"), to: destination, completion: finish).resume()
        }
        XCTAssertNil(response?.error)
        XCTAssertEqual(response?.fileURL?.lastPathComponent, "chosen.bin")
        XCTAssertEqual(try Data(contentsOf: directory.appendingPathComponent("chosen.bin")), content)
        XCTAssertEqual(calls.count, 1, "not asked again at publishing")
    }
}
