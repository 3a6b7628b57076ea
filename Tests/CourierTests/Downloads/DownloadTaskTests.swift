import CourierTestSupport
import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

final class DownloadTaskTests: CourierTestCase {
    private func download(
        _ path: String, to destination: DownloadDestination, validation: Validation = .default
    ) -> DownloadResponse? {
        wait { finish in
            manager.downloadTask(with: request(path), to: destination, validation: validation, completion: finish).resume()
        }
    }

    func testDownloadPublishesTheExactFile() throws {
        let destination = directory.appendingPathComponent("file.bin")
        let response = download("/bytes/1000000?seed=12", to: .file(destination))
        XCTAssertNil(response?.error)
        XCTAssertEqual(response?.fileURL, destination)
        XCTAssertEqual(try Data(contentsOf: destination), TestServer.deterministicBytes(count: 1_000_000, seed: 12))
        XCTAssertEqual(stagingFiles(in: directory), [])
    }

    func testPublishedFileGetsOrdinaryPermissionsWhileTheStagingFileWasPrivate() throws {
        let destination = directory.appendingPathComponent("perm.bin")
        XCTAssertNil(download("/bytes/100", to: .file(destination))?.error)
        var info = stat()
        XCTAssertEqual(stat(destination.path, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o666 & ~FilePublisher.processUmask())
        XCTAssertNotEqual(FilePublisher.processUmask() & 0o077, 0o077, "the check below means something only then")
        XCTAssertNotEqual(info.st_mode & 0o777, 0o600)
    }

    func testDestinationClosureGetsTheStagedFileAndResponse() throws {
        let seen = Box<String>()
        let target = directory.appendingPathComponent("named.bin")
        let destination = DownloadDestination(stagingDirectory: directory) { temporary, response in
            seen.append("\(temporary.lastPathComponent.hasPrefix(".courier-")) \(response.statusCode)")
            XCTAssertTrue(FileManager.default.fileExists(atPath: temporary.path), "the staged body is complete")
            return (target, [])
        }
        XCTAssertNil(download("/bytes/2048", to: destination)?.error)
        XCTAssertEqual(seen.all, ["true 200"])
        XCTAssertEqual(try Data(contentsOf: target).count, 2048)
    }

    func testBodyIsStagedInAPrivateFileNextToTheDestination() throws {
        let destination = directory.appendingPathComponent("slow.bin")
        let modes = Box<UInt32>()
        let response: DownloadResponse? = wait { finish in
            manager.downloadTask(
                with: request("/bytes/300000?chunk=8192&chunk_delay_ms=10"), to: .file(destination), completion: finish
            ).resume()
            waitUntil("a staging file appears") { !self.stagingFiles(in: self.directory).isEmpty }
            var info = stat()
            let path = directory.appendingPathComponent(stagingFiles(in: directory)[0]).path
            if stat(path, &info) == 0 { modes.append(UInt32(info.st_mode & 0o777)) }
            XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path), "not published while incomplete")
        }
        XCTAssertNil(response?.error)
        XCTAssertEqual(modes.all, [0o600])
    }

    func testErrorPageIsNeverPublished() {
        let destination = directory.appendingPathComponent("missing.bin")
        let response = download("/status/404?body=no+such+file", to: .file(destination))
        XCTAssertEqual(response?.error?.code, .unacceptableStatusCode)
        XCTAssertEqual(response?.error?.statusCode, 404)
        XCTAssertEqual(response?.error?.body, Data("no such file".utf8), "the error page travels in the error")
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path))
        XCTAssertEqual(stagingFiles(in: directory), [])
    }

    func testExistingDestinationIsAnErrorInTheCompletionAndIsKept() throws {
        let destination = directory.appendingPathComponent("exists.bin")
        try Data("keep me".utf8).write(to: destination)
        let response = download("/bytes/1000", to: .file(destination))
        XCTAssertEqual(response?.error?.code, .destinationFailed)
        XCTAssertEqual(try String(contentsOf: destination, encoding: .utf8), "keep me")
        XCTAssertEqual(stagingFiles(in: directory), [])
    }

    func testExistingDestinationIsReplacedWhenAsked() throws {
        let destination = directory.appendingPathComponent("exists.bin")
        try Data("old".utf8).write(to: destination)
        XCTAssertNil(download("/bytes/1000", to: .file(destination, options: .removePreviousFile))?.error)
        XCTAssertEqual(try Data(contentsOf: destination).count, 1000)
    }

    func testMissingDirectoryFailsBeforeTheBodyUnlessCreationIsAllowed() throws {
        let destination = directory.appendingPathComponent("deep/er/file.bin")
        let refused = download("/bytes/1000", to: .file(destination))?.error
        XCTAssertEqual(refused?.code, .destinationFailed)
        let missing = destination.deletingLastPathComponent().path
        XCTAssertTrue(
            refused?.message.contains("\(missing) does not exist (pass .createIntermediateDirectories") == true,
            "\(String(describing: refused))")
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.appendingPathComponent("deep").path), "nothing was created")
        XCTAssertNil(download("/bytes/1000", to: .file(destination, options: .createIntermediateDirectories))?.error)
        XCTAssertEqual(try Data(contentsOf: destination).count, 1000)
        XCTAssertEqual(stagingFiles(in: destination.deletingLastPathComponent()), [])
    }

    /// The directory is the writer's to make, just before it opens the file (TransferState+Downloads.swift).
    func testAFixedPartialFileInAMissingDirectoryIsCreatedThereOnlyWhenAllowed() throws {
        let destination = directory.appendingPathComponent("fixed.bin")
        let partial = directory.appendingPathComponent("parts/more/fixed.bin.part")
        var policy = DownloadPolicy()
        policy.partialFile = partial
        let refused: DownloadResponse? = wait { finish in
            manager.downloadTask(with: request("/bytes/1000"), to: .file(destination), policy: policy, completion: finish).resume()
        }
        XCTAssertEqual(refused?.error?.code, .destinationFailed)
        XCTAssertTrue(refused?.error?.message.contains("\(partial.deletingLastPathComponent().path) does not exist") == true)
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.appendingPathComponent("parts").path))
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path))
        let allowed: DownloadResponse? = wait { finish in
            manager.downloadTask(
                with: request("/bytes/1000?seed=3"), to: .file(destination, options: .createIntermediateDirectories), policy: policy,
                completion: finish
            ).resume()
        }
        XCTAssertNil(allowed?.error)
        XCTAssertEqual(try Data(contentsOf: destination), TestServer.deterministicBytes(count: 1000, seed: 3))
        XCTAssertFalse(FileManager.default.fileExists(atPath: partial.path), "published from the partial file")
    }

    func testThrowingDestinationClosureIsAnErrorAndRemovesTheStagedFile() {
        struct Refused: Error {}
        let response = download("/bytes/1000", to: DownloadDestination(stagingDirectory: directory) { _, _ in throw Refused() })
        XCTAssertEqual(response?.error?.code, .destinationFailed)
        XCTAssertEqual(stagingFiles(in: directory), [])
    }

    func testBrokenTransferThatCannotContinueLeavesNothingBehind() {
        let destination = directory.appendingPathComponent("broken.bin")
        var policy = DownloadPolicy()
        policy.retry.retryLimit = 0
        let response: DownloadResponse? = wait { finish in
            manager.downloadTask(
                with: request("/bytes/500000?close_after=100000&no_validators=1"), to: .file(destination), policy: policy,
                completion: finish
            ).resume()
        }
        XCTAssertEqual(response?.error?.code, .connectionLost)
        XCTAssertNil(response?.error?.resumeData, "no validator: nothing proves the bytes could be continued")
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path))
        XCTAssertEqual(stagingFiles(in: directory), [])
    }

    func testCancelledDownloadLeavesNothingBehind() {
        let destination = directory.appendingPathComponent("cancelled.bin")
        let response: DownloadResponse? = wait { finish in
            let task = manager.downloadTask(
                with: request("/bytes/400000?chunk=8192&chunk_delay_ms=10"), to: .file(destination), completion: finish)
            task.resume()
            waitUntil("bytes arrive") { task.downloadProgress.completedUnitCount > 0 }
            task.cancel()
        }
        XCTAssertEqual(response?.error?.code, .cancelled)
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path))
        XCTAssertEqual(stagingFiles(in: directory), [])
    }

    func testEmptyBodyDownloadPublishesAnEmptyFile() throws {
        let destination = directory.appendingPathComponent("empty.bin")
        XCTAssertNil(download("/status/204", to: .file(destination))?.error)
        XCTAssertEqual(try Data(contentsOf: destination), Data())
    }
}
