import CourierTestSupport
import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The resume matrix: every way a server can answer a request for the rest of a file.
final class ResumableDownloadTests: CourierTestCase {
    private let size = 400_000
    private var content: Data { TestServer.deterministicBytes(count: size, seed: 77) }
    private var noRetries: DownloadPolicy {
        var policy = DownloadPolicy()
        policy.retry.retryLimit = 0
        return policy
    }

    private func download(
        _ path: String, to destination: URL, policy: DownloadPolicy = .default
    ) -> DownloadResponse? {
        wait(timeout: 30) { finish in
            manager.downloadTask(with: request(path), to: .file(destination), policy: policy, completion: finish).resume()
        }
    }

    private func resume(
        _ resumeData: ResumeData, to destination: URL, policy: DownloadPolicy = .default
    ) -> DownloadResponse? {
        wait(timeout: 30) { finish in
            manager.downloadTask(resumingFrom: resumeData, to: .file(destination), policy: policy, completion: finish)
                .resume()
        }
    }

    /// A first attempt that breaks after `cut` bytes, leaving resume data. The fault is a query
    /// parameter, so the resume data is pointed at the plain resource (`then`), the way a real
    /// connection drop leaves the URL as it was.
    private func brokenDownload(
        _ name: String, cut: Int, destination: URL, then continuation: String? = nil
    ) throws -> ResumeData {
        server.addFile(name, data: content, etag: "\"v1\"")
        let failed = download("/files/\(name)?close_after=\(cut)", to: destination, policy: noRetries)
        XCTAssertEqual(failed?.error?.code, .connectionLost)
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path), "nothing published")
        var resumeData = try XCTUnwrap(failed?.error?.resumeData)
        XCTAssertTrue(resumeData.url.query?.contains("close_after") ?? false, "resume data names the URL as requested")
        resumeData.url = server.url(continuation ?? "/files/\(name)")
        return resumeData
    }

    func testRightPartialAnswerIsAppendedExactly() throws {
        let destination = directory.appendingPathComponent("right.bin")
        let resumeData = try brokenDownload("right.bin", cut: 150_000, destination: destination)
        XCTAssertEqual(resumeData.bytesOnDisk, 150_000)
        XCTAssertEqual(resumeData.validator, "\"v1\"")
        XCTAssertEqual(resumeData.totalLength, Int64(size))
        server.clearRequests()
        let response = resume(resumeData, to: destination)
        XCTAssertNil(response?.error)
        XCTAssertEqual(try Data(contentsOf: destination), content)
        let sent = try XCTUnwrap(server.requests.first)
        XCTAssertEqual(sent.header("Range"), "bytes=150000-")
        XCTAssertEqual(sent.header("If-Range"), "\"v1\"")
        XCTAssertEqual(sent.header("Accept-Encoding"), "identity")
        XCTAssertEqual(response?.response?.statusCode, 206)
        XCTAssertEqual(response?.report.resumedBytes, 150_000)
        XCTAssertEqual(stagingFiles(in: directory), [], "no side files once published")
    }

    func testPartialAnswerAtTheWrongOffsetIsNeverAppended() throws {
        let destination = directory.appendingPathComponent("shifted.bin")
        let resumeData = try brokenDownload(
            "shifted.bin", cut: 150_000, destination: destination, then: "/files/shifted.bin?range_shift=1000")
        server.clearRequests()
        let response = resume(resumeData, to: destination)
        XCTAssertNil(response?.error)
        XCTAssertEqual(try Data(contentsOf: destination), content, "the misplaced 206 was dropped; the file was fetched again")
        XCTAssertEqual(server.requests.count, 2)
        XCTAssertNil(server.requests.last?.header("Range"))
    }

    func testFullAnswerToARangeRequestStartsOverFromZero() throws {
        let destination = directory.appendingPathComponent("ignored.bin")
        let resumeData = try brokenDownload(
            "ignored.bin", cut: 150_000, destination: destination, then: "/files/ignored.bin?ignore_range=1")
        let response = resume(resumeData, to: destination)
        XCTAssertNil(response?.error)
        XCTAssertEqual(response?.response?.statusCode, 200)
        XCTAssertEqual(try Data(contentsOf: destination), content, "200 truncates and starts over, never appends")
    }

    func testChangedResourceBetweenAttemptsYieldsTheNewVersionWhole() throws {
        let destination = directory.appendingPathComponent("changed.bin")
        let resumeData = try brokenDownload("changed.bin", cut: 150_000, destination: destination)
        let newVersion = TestServer.deterministicBytes(count: 300_000, seed: 78)
        server.addFile("changed.bin", data: newVersion, etag: "\"v2\"")
        let response = resume(resumeData, to: destination)
        XCTAssertNil(response?.error)
        XCTAssertEqual(server.requests.last?.header("If-Range"), "\"v1\"")
        XCTAssertEqual(response?.response?.statusCode, 200)
        XCTAssertEqual(try Data(contentsOf: destination), newVersion, "never a splice of v1 and v2")
    }

    func testRangeNotSatisfiableWithTheFullLengthOnDiskMeansDone() throws {
        server.addFile("complete.bin", data: content, etag: "\"v1\"")
        let destination = directory.appendingPathComponent("complete.bin")
        let partial = DownloadPolicy.defaultPartialFile(for: destination)
        try content.write(to: partial)
        let resumeData = ResumeData(
            url: server.url("/files/complete.bin"), partialFile: partial, bytesOnDisk: Int64(size),
            validator: "\"v1\"", totalLength: Int64(size))
        let response = resume(resumeData, to: destination)
        XCTAssertNil(response?.error)
        XCTAssertEqual(response?.response?.statusCode, 416)
        XCTAssertEqual(try Data(contentsOf: destination), content)
        XCTAssertEqual(response?.report.bytesReceived, 0, "nothing was fetched again")
    }

    func testRangeNotSatisfiableStillChecksTheSHA256OfTheFileOnDisk() throws {
        server.addFile("checked.bin", data: content, etag: "\"v1\"")
        let destination = directory.appendingPathComponent("checked.bin")
        let partial = DownloadPolicy.defaultPartialFile(for: destination)
        var damaged = content
        damaged[10] ^= 0xFF
        try damaged.write(to: partial)
        let resumeData = ResumeData(
            url: server.url("/files/checked.bin"), partialFile: partial, bytesOnDisk: Int64(size),
            validator: "\"v1\"", totalLength: Int64(size))
        var policy = DownloadPolicy()
        policy.expectedSHA256 = SHA256.hash(content)
        let response = resume(resumeData, to: destination, policy: policy)
        XCTAssertEqual(response?.response?.statusCode, 416)
        XCTAssertEqual(response?.error?.code, .integrityFailed, "the damaged file on disk is not published")
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path))
        XCTAssertEqual(stagingFiles(in: directory), [])
    }

    func testWithoutAValidatorThereIsNoResumeDataUnlessOptedIn() throws {
        let destination = directory.appendingPathComponent("novalidator.bin")
        server.addFile("novalidator.bin", data: content, etag: "\"v1\"")
        let refused = download("/files/novalidator.bin?close_after=100000&no_validators=1", to: destination, policy: noRetries)
        XCTAssertEqual(refused?.error?.code, .connectionLost)
        XCTAssertNil(refused?.error?.resumeData)

        var optIn = noRetries
        optIn.resumesWithoutValidator = true
        let kept = download("/files/novalidator.bin?close_after=100000&no_validators=1", to: destination, policy: optIn)
        var resumeData = try XCTUnwrap(kept?.error?.resumeData)
        XCTAssertNil(resumeData.validator)
        resumeData.url = server.url("/files/novalidator.bin?no_validators=1")
        server.clearRequests()
        XCTAssertNil(resume(resumeData, to: destination, policy: optIn)?.error)
        XCTAssertEqual(server.requests.first?.header("Range"), "bytes=100000-")
        XCTAssertNil(server.requests.first?.header("If-Range"))
        XCTAssertEqual(try Data(contentsOf: destination), content)
    }

    func testWeakETagIsNotAValidator() throws {
        server.addFile("weak.bin", data: content, etag: "W/\"v1\"")
        let destination = directory.appendingPathComponent("weak.bin")
        let response = download("/files/weak.bin?close_after=100000", to: destination, policy: noRetries)
        XCTAssertEqual(response?.error?.code, .connectionLost)
        XCTAssertNil(response?.error?.resumeData, "a weak ETag cannot back If-Range")
        XCTAssertEqual(stagingFiles(in: directory), [])
    }

    func testEncodedResponseIsNeverContinuedByOffset() {
        XCTAssertNil(BodyFacts.strongValidator(of: makeResponse(200, headers: ["ETag": "\"x\"", "Content-Encoding": "gzip"])))
        let destination = directory.appendingPathComponent("gzip.json")
        var policy = DownloadPolicy()
        policy.publishesUnverifiedBodies = true  // a gzip body has no length to check
        let response = download("/gzip", to: destination, policy: policy)
        XCTAssertNil(response?.error)
        XCTAssertEqual(response?.report.isVerified, false)
        XCTAssertEqual(server.requests.last?.header("Accept-Encoding"), "identity", "downloads ask for the bytes as stored")
    }

    func testRepeatedDropsMidBodyAreSurvivedAutomatically() throws {
        server.addFile("drops.bin", data: content, etag: "\"v1\"")
        let destination = directory.appendingPathComponent("drops.bin")
        var policy = DownloadPolicy()
        policy.retry.retryLimit = 10
        policy.retry.initialDelay = .milliseconds(1)
        let fractions = Box<Int64>()
        let response: DownloadResponse? = wait(timeout: 30) { finish in
            manager.downloadTask(
                with: request("/files/drops.bin?close_after=60000"), to: .file(destination), policy: policy,
                progress: { fractions.append($0.completedUnitCount) }, completion: finish
            ).resume()
        }
        XCTAssertNil(response?.error)
        XCTAssertEqual(try Data(contentsOf: destination), content)
        XCTAssertEqual(response?.report.retries, 6, "400,000 bytes in slices of 60,000")
        XCTAssertEqual(response?.report.attempts, 7)
        XCTAssertEqual(response?.report.bytesReceived, Int64(size), "no byte was fetched twice")
        let samples = fractions.all
        XCTAssertEqual(samples, samples.sorted(), "progress never goes back across retries")
        XCTAssertEqual(stagingFiles(in: directory), [])
    }

    func testServerErrorAfterPartialDataLeavesThePartialFileIntact() throws {
        let destination = directory.appendingPathComponent("gone.bin")
        let resumeData = try brokenDownload("gone.bin", cut: 150_000, destination: destination)
        server.removeFile("gone.bin")
        let missing = resume(resumeData, to: destination, policy: noRetries)
        XCTAssertEqual(missing?.error?.statusCode, 404)
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path), "an error page is never saved as the file")
        server.addFile("gone.bin", data: content, etag: "\"v1\"")
        XCTAssertNil(resume(resumeData, to: destination)?.error)
        XCTAssertEqual(try Data(contentsOf: destination), content)
    }

    func testRetryableStatusIsRetriedHonouringRetryAfter() {
        var policy = noRetries
        policy.retry.retryLimit = 1
        let started = Date()
        let response = download("/status/503?retry_after=1", to: directory.appendingPathComponent("busy.bin"), policy: policy)
        XCTAssertEqual(response?.error?.statusCode, 503)
        XCTAssertEqual(response?.report.retries, 1)
        XCTAssertEqual(server.requests.count, 2)
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 0.9, "waited for Retry-After")
    }

    func testCancelProducingResumeDataKeepsTheBytesAndResumes() throws {
        server.addFile("cancelled.bin", data: content, etag: "\"v1\"")
        let destination = directory.appendingPathComponent("cancelled.bin")
        let produced = Box<ResumeData?>()
        let response: DownloadResponse? = wait { finish in
            let task = manager.downloadTask(
                with: request("/files/cancelled.bin?chunk=8192&chunk_delay_ms=5"), to: .file(destination),
                completion: finish)
            task.resume()
            waitUntil("bytes arrive") { task.downloadProgress.completedUnitCount >= 50_000 }
            task.cancel(producingResumeData: { produced.append($0) })
        }
        XCTAssertEqual(response?.error?.code, .cancelled)
        let resumeData = try XCTUnwrap(produced.first ?? nil)
        XCTAssertEqual(response?.error?.resumeData, resumeData)
        XCTAssertGreaterThanOrEqual(resumeData.bytesOnDisk, 50_000)
        XCTAssertNil(resume(resumeData, to: destination)?.error)
        XCTAssertEqual(try Data(contentsOf: destination), content)
    }

    func testABareETagBacksResumingAndGoesBackAsTheServerSentIt() throws {
        // Given a server that sends its ETag without quotes (as httpbin does)
        server.addFile("bare.bin", data: content, etag: "v1-abc")
        let destination = directory.appendingPathComponent("bare.bin")
        let produced = Box<ResumeData?>()
        _ = wait { finish in
            let task = manager.downloadTask(
                with: request("/files/bare.bin?chunk=8192&chunk_delay_ms=5"), to: .file(destination), completion: finish)
            task.resume()
            waitUntil("bytes arrive") { task.downloadProgress.completedUnitCount >= 50_000 }
            task.cancel(producingResumeData: { produced.append($0) })
        }
        // When the download is cancelled, then resumed
        let resumeData = try XCTUnwrap(produced.first ?? nil, "no resume data for a bare ETag")
        XCTAssertEqual(resumeData.validator, "v1-abc")
        XCTAssertNil(resume(resumeData, to: destination)?.error)
        // Then it continued with Range, sending the tag back exactly, into the exact file
        let last = try XCTUnwrap(server.requests.last)
        XCTAssertEqual(last.header("If-Range"), "v1-abc")
        XCTAssertNotNil(last.header("Range"))
        XCTAssertEqual(try Data(contentsOf: destination), content)
    }

    func testABareETagThatChangedStartsTheFileOverInsteadOfMixingVersions() throws {
        // Given resume data for a file whose bare ETag was v1
        server.addFile("changing.bin", data: content, etag: "v1")
        let destination = directory.appendingPathComponent("changing.bin")
        let produced = Box<ResumeData?>()
        _ = wait { finish in
            let task = manager.downloadTask(
                with: request("/files/changing.bin?chunk=8192&chunk_delay_ms=5"), to: .file(destination), completion: finish)
            task.resume()
            waitUntil("bytes arrive") { task.downloadProgress.completedUnitCount >= 50_000 }
            task.cancel(producingResumeData: { produced.append($0) })
        }
        let resumeData = try XCTUnwrap(produced.first ?? nil)
        // When the file is replaced by a same-size version v2 before resuming
        let replacement = Data(content.reversed())
        server.addFile("changing.bin", data: replacement, etag: "v2")
        XCTAssertNil(resume(resumeData, to: destination)?.error)
        // Then the result is the new version whole, never the old bytes with the new ones after them
        XCTAssertEqual(try Data(contentsOf: destination), replacement)
    }

    func testPlainCancelLeavesNoPartialFile() {
        server.addFile("plain.bin", data: content, etag: "\"v1\"")
        let destination = directory.appendingPathComponent("plain.bin")
        let response: DownloadResponse? = wait { finish in
            let task = manager.downloadTask(
                with: request("/files/plain.bin?chunk=8192&chunk_delay_ms=5"), to: .file(destination), completion: finish)
            task.resume()
            waitUntil("bytes arrive") { task.downloadProgress.completedUnitCount > 0 }
            task.cancel()
        }
        XCTAssertNil(response?.error?.resumeData)
        XCTAssertEqual(stagingFiles(in: directory), [])
    }

    func testAsyncDownloadResumesFromResumeData() async throws {
        let destination = directory.appendingPathComponent("async.bin")
        let resumeData = try brokenDownload("async.bin", cut: 200_000, destination: destination)
        let (url, response) = try await manager.download(resumingFrom: resumeData, to: .file(destination))
        XCTAssertEqual(url, destination)
        XCTAssertEqual(response.statusCode, 206)
        XCTAssertEqual(try Data(contentsOf: destination), content)
    }
}
