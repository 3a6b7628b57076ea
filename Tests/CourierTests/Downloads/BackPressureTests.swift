import CourierTestSupport
import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A disk slower than the network: the download pauses itself and continues with `Range`, so
/// what waits in memory stays bounded. The disk is slowed with the writer's test seam; the
/// network is real (URLSession against the in-process server).
final class BackPressureTests: CourierTestCase {
    private let size = 4 * 1024 * 1024
    private let limit = 256 * 1024
    /// URLSession hands over at most 16 KiB per callback (libcurl's write size, Docs/Platform.md §2.1);
    /// the chunk that takes the backlog over the limit is accepted before the attempt stops.
    private let chunkAllowance = 16 * 1024
    private lazy var content = TestServer.deterministicBytes(count: size, seed: 57)

    private func policy(bytesPerSecond: Int?, failsAfter: Int64? = nil) -> DownloadPolicy {
        var policy = DownloadPolicy()
        policy.maximumBufferedBytes = limit
        policy.simulatedDisk = DiskWriter.Simulation(bytesPerSecond: bytesPerSecond, failsAfterBytes: failsAfter)
        policy.retry.retryLimit = 0  // pausing for the disk is not a retry
        return policy
    }

    private func throttled(_ task: DownloadTask) -> Bool {
        task.transfer.state.withLock { $0.phase.isThrottled(.disk) }
    }

    private func statistics(_ task: DownloadTask) throws -> DiskWriter.Statistics {
        try XCTUnwrap(task.transfer.writer).statistics
    }

    /// Starts a download of `file` (served with a strong ETag) to a slow disk and returns once it
    /// has paused for the disk.
    private func startThrottled(
        _ file: String, bytesPerSecond: Int, to destination: URL,
        completion: @escaping @Sendable (DownloadResponse) -> Void
    ) -> DownloadTask {
        let task = manager.downloadTask(
            with: request("/files/\(file)"), to: .file(destination),
            policy: policy(bytesPerSecond: bytesPerSecond), completion: completion)
        task.resume()
        waitUntil("the download pauses for the disk", timeout: 30) { throttled(task) }
        return task
    }

    func testSlowDiskPausesAndContinuesWithRangeWithinTheLimit() throws {
        server.addFile("slow.bin", data: content, etag: "\"v1\"")
        let destination = directory.appendingPathComponent("slow.bin")
        var policy = policy(bytesPerSecond: 8 * 1024 * 1024)
        policy.expectedSHA256 = SHA256.hash(content)
        let progress = Box<Int64>()
        let states = Box<TaskLifecycle.State>()
        var task: DownloadTask?
        let response: DownloadResponse? = wait(timeout: 60) { finish in
            let started = manager.downloadTask(
                with: request("/files/slow.bin"), to: .file(destination), policy: policy,
                progress: { progress.append($0.completedUnitCount) }, completion: finish)
            task = started
            started.resume()
            // One read a turn: reading twice, the task could complete between the check and the append.
            while case let state = started.state, state != .completed {
                states.append(state)
                Thread.sleep(forTimeInterval: 0.002)
            }
        }
        XCTAssertNil(response?.error)
        let file = try Data(contentsOf: destination)
        XCTAssertEqual(file.count, size)
        XCTAssertEqual(SHA256.hash(file), SHA256.hash(content), "exactly the server's bytes")
        XCTAssertEqual(stagingFiles(in: directory), [], "no partial file or record left")

        let requests = server.requests
        XCTAssertGreaterThan(requests.count, 1, "the download paused for the disk")
        XCTAssertNil(requests.first?.header("Range"))
        var offsets: [Int] = []
        for continued in requests.dropFirst() {
            let range = try XCTUnwrap(continued.header("Range"))
            XCTAssertEqual(continued.header("If-Range"), "\"v1\"")
            let offset = try XCTUnwrap(Int(range.dropFirst("bytes=".count).dropLast()))
            XCTAssertEqual(range, "bytes=\(offset)-")
            offsets.append(offset)
        }
        XCTAssertEqual(offsets, offsets.sorted(), "each attempt continues after the bytes accepted")
        XCTAssertLessThan(offsets.last ?? .max, size)
        // The report and the timeline count the same continuations: one per Range request
        let timeline = try XCTUnwrap(response?.metrics)
        XCTAssertEqual(timeline.attempts.filter { $0.kind == .continuation }.count, requests.count - 1)
        XCTAssertEqual(response?.report.continuations, requests.count - 1)

        let started = try XCTUnwrap(task)
        let stats = try statistics(started)
        XCTAssertLessThanOrEqual(stats.largestChunk, chunkAllowance)
        XCTAssertLessThanOrEqual(stats.peakBacklog, Int64(limit + stats.largestChunk), "memory stayed bounded")
        XCTAssertGreaterThan(stats.peakBacklog, Int64(limit / 2), "the disk really was the bottleneck")
        XCTAssertEqual(stats.backlog, 0)

        XCTAssertEqual(Set(states.all), [.running], "a pause for the disk is not a suspension")
        XCTAssertEqual(response?.report.retries, 0)
        XCTAssertEqual(response?.report.attempts, requests.count)
        XCTAssertEqual(response?.report.diskPauses, requests.count - 1)
        let seen = progress.all
        XCTAssertEqual(seen, seen.sorted(), "progress never goes backwards")
        XCTAssertEqual(seen.last, Int64(size))
    }

    func testSlowDiskWithoutAValidatorFailsWithATypedErrorAndLeavesNoFile() {
        server.addFile("plain.bin", data: content)
        let destination = directory.appendingPathComponent("plain.bin")
        let response: DownloadResponse? = wait(timeout: 60) { finish in
            manager.downloadTask(
                with: request("/files/plain.bin?no_validators=1"), to: .file(destination),
                policy: policy(bytesPerSecond: 1024 * 1024), completion: finish
            ).resume()
        }
        XCTAssertEqual(response?.error?.code, .fileSystem)
        XCTAssertTrue(response?.error?.message.contains("disk could not keep up") ?? false, "\(String(describing: response?.error))")
        XCTAssertTrue(response?.error?.message.contains("maximumBufferedBytes") ?? false)
        XCTAssertNil(response?.error?.resumeData)
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path))
        XCTAssertEqual(stagingFiles(in: directory), [], "no partial file or record left")
        XCTAssertEqual(server.requests.count, 1, "it could not pause, so it never asked for a range")
    }

    func testCancelWhileThrottledCompletesOnceWithResumeDataThatContinues() throws {
        server.addFile("cancel.bin", data: content, etag: "\"v1\"")
        let destination = directory.appendingPathComponent("cancel.bin")
        let handed = Box<ResumeData?>()
        let response: DownloadResponse? = wait(timeout: 60) { finish in
            let task = startThrottled("cancel.bin", bytesPerSecond: 2 * 1024 * 1024, to: destination, completion: finish)
            XCTAssertEqual(task.state, .running)
            task.cancel(producingResumeData: { handed.append($0) })
        }
        XCTAssertEqual(response?.error?.code, .cancelled)
        waitUntil("the resume data is handed over") { handed.count == 1 }
        let resumeData = try XCTUnwrap(response?.error?.resumeData)
        XCTAssertEqual(handed.first ?? nil, resumeData)
        XCTAssertGreaterThan(resumeData.bytesOnDisk, 0)
        XCTAssertLessThan(resumeData.bytesOnDisk, Int64(size))
        let partial = try Data(contentsOf: resumeData.partialFile)
        XCTAssertEqual(Int64(partial.count), resumeData.bytesOnDisk, "every accepted byte was written before the completion")
        XCTAssertEqual(partial, content.prefix(partial.count))
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path))

        server.clearRequests()
        let resumed: DownloadResponse? = wait(timeout: 60) { finish in
            manager.downloadTask(resumingFrom: resumeData, to: .file(destination), completion: finish).resume()
        }
        XCTAssertNil(resumed?.error)
        XCTAssertEqual(try Data(contentsOf: destination), content)
        XCTAssertEqual(server.requests.first?.header("Range"), "bytes=\(resumeData.bytesOnDisk)-")
        XCTAssertEqual(stagingFiles(in: directory), [])
    }

    func testPlainCancelWhileThrottledCompletesOnceAndRemovesEverything() {
        server.addFile("gone.bin", data: content, etag: "\"v1\"")
        let destination = directory.appendingPathComponent("gone.bin")
        let response: DownloadResponse? = wait(timeout: 60) { finish in
            let task = startThrottled("gone.bin", bytesPerSecond: 2 * 1024 * 1024, to: destination, completion: finish)
            task.cancel()
        }
        XCTAssertEqual(response?.error?.code, .cancelled)
        XCTAssertNil(response?.error?.resumeData)
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path))
        XCTAssertEqual(stagingFiles(in: directory), [])
    }

    func testSuspendWhileThrottledThenResumeCompletesExactly() throws {
        server.addFile("pause.bin", data: content, etag: "\"v1\"")
        let destination = directory.appendingPathComponent("pause.bin")
        let response: DownloadResponse? = wait(timeout: 60) { finish in
            let task = startThrottled("pause.bin", bytesPerSecond: 8 * 1024 * 1024, to: destination, completion: finish)
            task.suspend()
            XCTAssertEqual(task.state, .suspended)
            let requests = server.requests.count
            Thread.sleep(forTimeInterval: 0.2)  // the writer catches up meanwhile: nothing may restart
            XCTAssertEqual(task.state, .suspended)
            XCTAssertEqual(server.requests.count, requests, "a suspended task sends nothing")
            task.resume()
        }
        XCTAssertNil(response?.error)
        XCTAssertEqual(try Data(contentsOf: destination), content)
        XCTAssertEqual(response?.report.retries, 0)
    }

    func testWriteErrorFailsTheDownloadOnceWithAFileSystemError() {
        server.addFile("full.bin", data: content, etag: "\"v1\"")
        let destination = directory.appendingPathComponent("full.bin")
        let response: DownloadResponse? = wait(timeout: 60) { finish in
            manager.downloadTask(
                with: request("/files/full.bin"), to: .file(destination),
                policy: policy(bytesPerSecond: nil, failsAfter: 1024 * 1024), completion: finish
            ).resume()
        }
        XCTAssertEqual(response?.error?.code, .fileSystem)
        XCTAssertTrue(response?.error?.message.contains("cannot write the staging file") ?? false)
        XCTAssertEqual((response?.error?.underlyingError as? POSIXError)?.code, .ENOSPC)
        XCTAssertNil(response?.error?.resumeData, "bytes after a failed write are not vouched for")
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path))
        XCTAssertEqual(stagingFiles(in: directory), [])
    }

    func testFastDiskDownloadsWithOneRequest() throws {
        let size = Int(DownloadPolicy.default.bufferLimit) * 2  // more than the default limit can hold
        let destination = directory.appendingPathComponent("fast.bin")
        var task: DownloadTask?
        let response: DownloadResponse? = wait(timeout: 60) { finish in
            let started = manager.downloadTask(with: request("/bytes/\(size)?seed=58"), to: .file(destination), completion: finish)
            task = started
            started.resume()
        }
        XCTAssertNil(response?.error)
        XCTAssertTrue(try Data(contentsOf: destination) == TestServer.deterministicBytes(count: size, seed: 58))
        XCTAssertEqual(server.requests.count, 1)
        XCTAssertNil(server.requests.first?.header("Range"))
        XCTAssertEqual(response?.report.attempts, 1)
        XCTAssertEqual(response?.report.diskPauses, 0)
        let stats = try statistics(try XCTUnwrap(task))
        XCTAssertLessThanOrEqual(stats.peakBacklog, DownloadPolicy.default.bufferLimit)
    }
}
