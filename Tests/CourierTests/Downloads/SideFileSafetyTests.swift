import CourierTestSupport
import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Links planted at the names of Courier's side files (partial file, resume record, the record's
/// temporary, multipart bodies) point at a "victim" file outside the download directory. Whatever
/// happens to the download, the victim keeps its content, size and inode, and what is published
/// is exactly the server's file.
final class SideFileSafetyTests: CourierTestCase {
    private let content = TestServer.deterministicBytes(count: 300_000, seed: 23)
    private let victimBytes = Data(repeating: 0xA5, count: 400_000)
    /// Where downloads go; the victim lives outside it.
    private var downloads: URL!
    private var victim: URL!
    private var victimInode: ino_t = 0

    /// Slow enough to interrupt: 8 KiB every 5 ms.
    private let path = "/files/f.bin?chunk=8192&chunk_delay_ms=5"
    private var destination: URL { downloads.appendingPathComponent("f.bin") }
    private var partial: URL { DownloadPolicy.defaultPartialFile(for: destination) }
    private var record: URL { DownloadPolicy.recordFile(for: partial) }

    override func setUpWithError() throws {
        try super.setUpWithError()
        downloads = directory.appendingPathComponent("downloads")
        try FileManager.default.createDirectory(at: downloads, withIntermediateDirectories: true)
        victim = directory.appendingPathComponent("victim.bin")
        try victimBytes.write(to: victim)
        victimInode = try inode(of: victim)
        server.addFile("f.bin", data: content, etag: "\"v1\"")
    }

    // MARK: - Helpers

    private func inode(of url: URL) throws -> ino_t {
        var info = stat()
        guard lstat(url.path, &info) == 0 else { throw POSIXError(.ENOENT) }
        return info.st_ino
    }

    private func plantHardLink(at url: URL, to target: URL? = nil) {
        unlink(url.path)
        XCTAssertEqual(link((target ?? victim).path, url.path), 0, "planting a hard link at \(url.lastPathComponent)")
    }

    private func plantSymlink(at url: URL, to target: URL? = nil) {
        unlink(url.path)
        XCTAssertEqual(symlink((target ?? victim).path, url.path), 0, "planting a symlink at \(url.lastPathComponent)")
    }

    private func assertVictimUntouched(file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(try Data(contentsOf: victim), victimBytes, "the victim's content", file: file, line: line)
        XCTAssertEqual(try inode(of: victim), victimInode, "the victim's inode", file: file, line: line)
    }

    private func assertPublishedExactly(file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(try Data(contentsOf: destination), content, "the published file", file: file, line: line)
        XCTAssertNotEqual(try inode(of: destination), victimInode, "a file of its own", file: file, line: line)
    }

    private func download() -> DownloadResponse? {
        wait(timeout: 30) { finish in
            manager.downloadTask(with: request(path), to: .file(destination), completion: finish).resume()
        }
    }

    /// A download cancelled with resume data after some bytes: its partial file and record stay.
    private func interruptedDownload(
        to destination: DownloadDestination? = nil, file: StaticString = #filePath, line: UInt = #line
    ) -> ResumeData? {
        let resumeData = Box<ResumeData?>()
        let response: DownloadResponse? = wait(timeout: 30) { finish in
            let task = manager.downloadTask(with: request(path), to: destination ?? .file(self.destination), completion: finish)
            task.resume()
            waitUntil("bytes arrive") { task.downloadProgress.completedUnitCount >= 60_000 }
            task.cancel(producingResumeData: { resumeData.append($0) })
        }
        XCTAssertEqual(response?.error?.code, .cancelled, file: file, line: line)
        waitUntil("the resume data is handed out") { resumeData.count == 1 }
        return resumeData.first ?? nil
    }

    private var sentRange: String? { server.requests.last?.header("Range") }

    // MARK: - The partial file

    func testHardLinkAtThePartialFileIsUnlinkedAndTheDownloadStartsFresh() {
        // Given a hard link to the victim where the partial file goes, and no record
        plantHardLink(at: partial)
        // When the file is downloaded
        let response = download()
        // Then the victim is untouched and the published file is the server's, from byte 0
        XCTAssertNil(response?.error)
        assertVictimUntouched()
        assertPublishedExactly()
        XCTAssertNil(sentRange)
    }

    func testSymlinkAtThePartialFileIsUnlinkedAndTheDownloadStartsFresh() {
        plantSymlink(at: partial)
        let response = download()
        XCTAssertNil(response?.error)
        assertVictimUntouched()
        assertPublishedExactly()
        XCTAssertNil(sentRange)
    }

    func testHardLinkAtThePartialFileBesideAValidRecordStartsFresh() throws {
        // Given an interrupted download whose partial file is then swapped for a hard link to
        // the victim (longer than the record claims)
        let resumeData = try XCTUnwrap(interruptedDownload())
        XCTAssertTrue(FileManager.default.fileExists(atPath: record.path))
        XCTAssertLessThan(resumeData.bytesOnDisk, Int64(victimBytes.count))
        plantHardLink(at: partial)
        server.clearRequests()
        // When it runs again
        let response = download()
        // Then the record is not trusted: a fresh download, the victim untouched
        XCTAssertNil(response?.error)
        XCTAssertNil(sentRange, "started over")
        assertVictimUntouched()
        assertPublishedExactly()
        XCTAssertEqual(stagingFiles(in: downloads), [])
    }

    func testSymlinkAtThePartialFileBesideAValidRecordStartsFresh() throws {
        _ = try XCTUnwrap(interruptedDownload())
        plantSymlink(at: partial)
        server.clearRequests()
        let response = download()
        XCTAssertNil(response?.error)
        XCTAssertNil(sentRange, "started over")
        assertVictimUntouched()
        assertPublishedExactly()
    }

    func testPartialFileOwnedByAnotherUserIsNotContinued() throws {
        try XCTSkipUnless(geteuid() == 0, "only root can give a file away")
        // Given an interrupted download whose partial file now belongs to someone else
        _ = try XCTUnwrap(interruptedDownload())
        XCTAssertEqual(chown(partial.path, 4321, 4321), 0)
        let foreign = open(partial.path, O_RDONLY)
        defer { close(foreign) }
        var before = stat()
        XCTAssertEqual(fstat(foreign, &before), 0)
        server.clearRequests()
        // When it runs again
        let response = download()
        // Then that file is left as it was and the download starts over in a file of its own
        XCTAssertNil(response?.error)
        XCTAssertNil(sentRange, "started over")
        var after = stat()
        XCTAssertEqual(fstat(foreign, &after), 0)
        XCTAssertEqual(after.st_size, before.st_size)
        XCTAssertEqual(after.st_uid, 4321)
        XCTAssertNotEqual(try inode(of: destination), before.st_ino)
        XCTAssertEqual(try Data(contentsOf: destination), content)
    }

    func testTheWriterRefusesToKeepBytesOfALinkedPartialFile() {
        // The writer checks again what the plan checked (the name may change in between).
        let linked = downloads.appendingPathComponent(".linked.courier-partial")
        for plant in [plantHardLink(at:to:), plantSymlink(at:to:)] {
            plant(linked, nil)
            XCTAssertThrowsError(try StagingFile(at: linked, keeping: 1000)) {
                XCTAssertEqual(($0 as? CourierError)?.code, .invalidResumeData)
            }
            assertVictimUntouched()
        }
    }

    func testTheWriterStartingOverUnlinksALinkInsteadOfTruncatingIt() throws {
        let linked = downloads.appendingPathComponent(".linked.courier-partial")
        for plant in [plantHardLink(at:to:), plantSymlink(at:to:)] {
            plant(linked, nil)
            let file = try StagingFile(at: linked, keeping: 0)
            try file.append(Data("fresh".utf8))
            try file.close()
            assertVictimUntouched()
            XCTAssertEqual(try Data(contentsOf: linked), Data("fresh".utf8))
            XCTAssertNotEqual(try inode(of: linked), victimInode)
        }
    }

    func testALinkAtARandomStagingNameIsNeverOpened() {
        let name = StagingFile.randomURL(in: downloads)
        for plant in [plantHardLink(at:to:), plantSymlink(at:to:)] {
            plant(name, nil)
            XCTAssertThrowsError(try StagingFile(creating: name))
            assertVictimUntouched()
        }
    }

    // MARK: - The resume record

    func testHardLinkAtTheRecordIsNotTrusted() throws {
        try assertALinkedRecordIsNotTrusted(plant: { plantHardLink(at: $0, to: $1) }, "a linked record is not trusted")
    }

    func testSymlinkAtTheRecordIsNotFollowed() throws {
        try assertALinkedRecordIsNotTrusted(plant: { plantSymlink(at: $0, to: $1) }, "a record behind a symlink is not trusted")
    }

    /// Given an interrupted download whose record is replaced by a link (planted by `plant`) to a
    /// valid record kept elsewhere, when it runs again, then the download starts over and the
    /// other file is left as it was.
    private func assertALinkedRecordIsNotTrusted(
        plant: (URL, URL) -> Void, _ message: String, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        _ = try XCTUnwrap(interruptedDownload(), file: file, line: line)
        let elsewhere = directory.appendingPathComponent("record-elsewhere")
        try FileManager.default.copyItem(at: record, to: elsewhere)
        let saved = try Data(contentsOf: elsewhere)
        plant(record, elsewhere)
        server.clearRequests()
        let response = download()
        XCTAssertNil(response?.error, file: file, line: line)
        XCTAssertNil(sentRange, message, file: file, line: line)
        XCTAssertEqual(try Data(contentsOf: elsewhere), saved, file: file, line: line)
        assertPublishedExactly()
        XCTAssertEqual(stagingFiles(in: downloads), [], file: file, line: line)
    }

    func testFIFOsAtThePartialFileAndRecordDoNotBlock() throws {
        // Opening a FIFO blocks until the other end is opened. Made on another thread, so that
        // this test fails rather than hangs if Courier waits for one.
        XCTAssertEqual(mkfifo(partial.path, 0o600), 0)
        XCTAssertEqual(mkfifo(record.path, 0o600), 0)
        let finished = expectation(description: "the download finishes")
        let response = Box<DownloadResponse>()
        let manager = self.manager!
        let request = request(path)
        let destination = self.destination
        DispatchQueue.global().async {
            manager.downloadTask(with: request, to: .file(destination)) {
                response.append($0)
                finished.fulfill()
            }.resume()
        }
        wait(for: [finished], timeout: 15)
        // Release whoever is stuck on a FIFO, if anyone (these opens succeed only then).
        for (name, flags) in [(record, O_WRONLY), (partial, O_RDONLY)] {
            let other = open(name.path, flags | O_NONBLOCK)
            if other >= 0 { close(other) }
        }
        XCTAssertNil(response.first?.error)
        assertPublishedExactly()
        XCTAssertNil(sentRange)
    }

    // MARK: - The record's temporary

    func testHardLinkAtTheRecordTemporaryIsNeverWritten() throws {
        // Given a hard link to the victim at the name the record is written under first
        plantHardLink(at: AtomicFile.temporaryFile(for: record))
        // When a download writes records and is interrupted
        let resumeData = try XCTUnwrap(interruptedDownload())
        // Then the victim is untouched, and the record is a file of its own that says the truth
        assertVictimUntouched()
        let written = try ResumeData(data: Data(contentsOf: record))
        XCTAssertEqual(written.bytesOnDisk, resumeData.bytesOnDisk)
        XCTAssertNotEqual(try inode(of: record), victimInode)
        // And the next run continues from it
        server.clearRequests()
        XCTAssertNil(download()?.error)
        XCTAssertEqual(sentRange, "bytes=\(resumeData.bytesOnDisk)-")
        assertPublishedExactly()
        assertVictimUntouched()
    }

    func testSymlinkAtTheRecordTemporaryDoesNotStopRecords() throws {
        plantSymlink(at: AtomicFile.temporaryFile(for: record))
        let resumeData = try XCTUnwrap(interruptedDownload())
        assertVictimUntouched()
        XCTAssertEqual(try ResumeData(data: Data(contentsOf: record)).bytesOnDisk, resumeData.bytesOnDisk, "a record was written")
        server.clearRequests()
        XCTAssertNil(download()?.error)
        XCTAssertEqual(sentRange, "bytes=\(resumeData.bytesOnDisk)-")
        assertPublishedExactly()
    }

    // MARK: - Multipart bodies

    func testAMultipartBodyIsNeverWrittenThroughALink() {
        // The upload's own name is random (not plantable); the open path is checked directly.
        var form = MultipartFormData()
        form.append(field: "value", name: "field")
        let name = downloads.appendingPathComponent(".courier-\(UUID().uuidString.lowercased()).multipart")
        for plant in [plantHardLink(at:to:), plantSymlink(at:to:)] {
            plant(name, nil)
            XCTAssertThrowsError(try form.write(to: name)) { XCTAssertEqual(($0 as? CourierError)?.code, .fileSystem) }
            XCTAssertThrowsError(try form.writeLocked(to: name)) { XCTAssertEqual(($0 as? CourierError)?.code, .fileSystem) }
            assertVictimUntouched()
        }
    }
}

/// The sweep of abandoned side files: what it removes, and what it must leave alone.
final class SideFileSweepTests: CourierTestCase {
    /// The base class makes its manager before the directory exists: this one's temporary
    /// directory is the test's own.
    private var configuration: SessionManager.Configuration {
        var configuration = makeConfiguration()
        configuration.temporaryDirectory = directory
        return configuration
    }

    override func setUpWithError() throws {
        try super.setUpWithError()
        manager.invalidate()
        manager = SessionManager(configuration: configuration)
    }

    private func uuidName(_ suffix: String) -> String {
        ".courier-\(UUID().uuidString.lowercased())\(suffix)"
    }

    /// A file as a process that died an hour ago left it.
    @discardableResult
    private func plantStale(_ name: String, in directory: URL? = nil) throws -> URL {
        let url = (directory ?? self.directory).appendingPathComponent(name)
        try Data("left over".utf8).write(to: url)
        backdate(url)
        return url
    }

    private func backdate(_ url: URL) {
        let past = time(nil) - 3600
        var times = [timeval(tv_sec: past, tv_usec: 0), timeval(tv_sec: past, tv_usec: 0)]
        XCTAssertEqual(lutimes(url.path, &times), 0)
    }

    private func exists(_ url: URL) -> Bool {
        var info = stat()
        return lstat(url.path, &info) == 0
    }

    /// Sweeps `directory` now, counting every file as old enough.
    @discardableResult
    private func sweepNow(_ directory: URL? = nil) -> [String] {
        SideFile.Sweeper.sweep((directory ?? self.directory).path, modifiedBefore: time(nil) + 3600)
    }

    func testAbandonedMultipartBodyAndStagingFileAreSweptWhenANewManagerUsesTheDirectory() throws {
        // Given files left by a process that died
        let body = try plantStale(uuidName(".multipart"))
        let staging = try plantStale(uuidName(StagingFile.randomSuffix))
        let recordTemporary = try plantStale("..x.bin.courier-resume.tmp")
        // When a new manager first uses the directory
        let manager = SessionManager(configuration: configuration)
        var form = MultipartFormData()
        form.append(field: "v", name: "f")
        _ = manager.uploadTask(with: request("/anything", method: "POST"), from: .multipart(form)) { _ in }
        SideFile.Sweeper.shared.waitUntilIdle()
        // Then they are gone
        XCTAssertFalse(exists(body))
        XCTAssertFalse(exists(staging))
        XCTAssertFalse(exists(recordTemporary))
        manager.invalidate()
    }

    func testADownloadSweepsTheDirectoryOfItsPartialFile() throws {
        let downloads = directory.appendingPathComponent("downloads")
        try FileManager.default.createDirectory(at: downloads, withIntermediateDirectories: true)
        let recordTemporary = try plantStale("..f.bin.courier-resume.tmp", in: downloads)
        _ = manager.downloadTask(with: request("/bytes/10"), to: .file(downloads.appendingPathComponent("f.bin"))) { _ in }
        SideFile.Sweeper.shared.waitUntilIdle()
        XCTAssertFalse(exists(recordTemporary))
    }

    func testAFileLockedByAnotherDescriptorIsKept() throws {
        // Given stale-looking files that a live process holds locked
        let body = try plantStale(uuidName(".multipart"))
        let staging = try plantStale(uuidName(StagingFile.randomSuffix))
        let holders = [open(body.path, O_RDONLY), open(staging.path, O_RDONLY)]
        defer { holders.forEach { close($0) } }
        for holder in holders { XCTAssertEqual(flock(holder, LOCK_EX | LOCK_NB), 0) }
        // When the directory is swept (the lock belongs to the open file description: the
        // sweep's own open of the same file, in this same process, cannot take it)
        XCTAssertEqual(sweepNow(), [])
        // Then they stay
        XCTAssertTrue(exists(body))
        XCTAssertTrue(exists(staging))
    }

    func testRecentFilesAreLeftForALaterRun() throws {
        // Created a moment ago: possibly by a process that has not locked it yet.
        let body = directory.appendingPathComponent(uuidName(".multipart"))
        try Data("new".utf8).write(to: body)
        SideFile.Sweeper.sweep(directory.path, modifiedBefore: time(nil) - SideFile.Sweeper.minimumAge)
        XCTAssertTrue(exists(body))
    }

    func testPartialFilesAndRecordsAreNeverSwept() throws {
        // Given resumable state, however old: a fixed partial file and record, the command line's
        // partial file and record, and a staging file kept for resuming
        let names = [
            ".f.bin.courier-partial", ".f.bin.courier-resume",
            ".courier-0123456789abcdef.courier-partial", ".courier-0123456789abcdef.courier-resume",
            uuidName(".courier-partial"),
        ]
        let planted = try names.map { try plantStale($0) }
        // A staging name the caller chose as `policy.partialFile`, with a record beside it
        let chosen = try plantStale(uuidName(StagingFile.randomSuffix))
        try plantStale(DownloadPolicy.recordFile(for: chosen).lastPathComponent)
        // When the directory is swept
        XCTAssertEqual(sweepNow(), [])
        // Then all of it stays
        for url in planted + [chosen] { XCTAssertTrue(exists(url), url.lastPathComponent) }
    }

    func testLinksWithSweepableNamesAreNotFollowedOrSwept() throws {
        // Given a victim that looks abandoned, and links to it under sweepable names
        let victim = try plantStale("victim.bin")
        let symlinked = directory.appendingPathComponent(uuidName(".multipart"))
        XCTAssertEqual(symlink(victim.path, symlinked.path), 0)
        let hardLinked = directory.appendingPathComponent(uuidName(StagingFile.randomSuffix))
        XCTAssertEqual(link(victim.path, hardLinked.path), 0)
        backdate(symlinked)
        // When the directory is swept
        XCTAssertEqual(sweepNow(), [])
        // Then the victim is as it was, and the links are not Courier's to remove
        XCTAssertEqual(try Data(contentsOf: victim), Data("left over".utf8))
        XCTAssertTrue(exists(symlinked))
        XCTAssertTrue(exists(hardLinked))
    }

    func testAStagingFileIsLockedWhileItsDownloadRuns() throws {
        let seen = Counter()
        let target = directory.appendingPathComponent("out.bin")
        let response: DownloadResponse? = wait(timeout: 30) { finish in
            let destination = DownloadDestination(stagingDirectory: directory) { _, _ in (target, []) }
            manager.downloadTask(
                with: request("/bytes/600000?chunk=8192&chunk_delay_ms=5"), to: destination, completion: finish
            ).resume()
            // Bytes in it: the writer locked it before writing (with the age check off, the sweep
            // below would otherwise race with the moment between creating and locking).
            waitUntil("a staging file has bytes") {
                self.stagingFiles(in: self.directory).contains { name in
                    let size =
                        (try? FileManager.default.attributesOfItem(
                            atPath: self.directory.appendingPathComponent(name).path)[.size]) as? NSNumber
                    return name.hasSuffix(StagingFile.randomSuffix) && (size?.intValue ?? 0) > 0
                }
            }
            XCTAssertEqual(sweepNow(), [], "a running download's staging file is not swept")
            seen.increment()
        }
        XCTAssertNil(response?.error)
        XCTAssertEqual(seen.count, 1)
        XCTAssertEqual(try Data(contentsOf: target).count, 600_000)
    }

    func testAMultipartBodyIsLockedWhileItsUploadRuns() throws {
        let file = directory.appendingPathComponent("part.bin")
        try Data(count: 50_000).write(to: file)
        var form = MultipartFormData()
        form.append(fileAt: file, name: "f")
        let response: DataResponse<Data>? = wait { finish in
            let task = manager.uploadTask(
                with: request("/never-answer", method: "POST"), from: .multipart(form, memoryThreshold: 10), completion: finish)
            task.resume()
            waitUntil("the upload is sent") { server.requests.contains { $0.path == "/never-answer" } }
            XCTAssertEqual(stagingFiles(in: directory).filter { $0.hasSuffix(".multipart") }.count, 1)
            XCTAssertEqual(sweepNow(), [], "an upload's body is not swept")
            task.cancel()
        }
        XCTAssertEqual(response?.error?.code, .cancelled)
        XCTAssertEqual(stagingFiles(in: directory), [])
    }

    func testAStagingFileKeptForResumingGetsAPartialFileNameAndSurvivesTheSweep() throws {
        // Given a download to a destination closure, cancelled with resume data
        let content = TestServer.deterministicBytes(count: 300_000, seed: 5)
        server.addFile("k.bin", data: content, etag: "\"k\"")
        let target = directory.appendingPathComponent("k.bin")
        let destination = DownloadDestination(stagingDirectory: directory) { _, _ in (target, []) }
        let resumeData = Box<ResumeData?>()
        _ = wait(timeout: 30) { (finish: @escaping @Sendable (DownloadResponse) -> Void) in
            let task = manager.downloadTask(
                with: request("/files/k.bin?chunk=8192&chunk_delay_ms=5"), to: destination, completion: finish)
            task.resume()
            waitUntil("bytes arrive") { task.downloadProgress.completedUnitCount >= 60_000 }
            task.cancel(producingResumeData: { resumeData.append($0) })
        }
        waitUntil("the resume data is handed out") { resumeData.count == 1 }
        let kept = try XCTUnwrap(resumeData.first ?? nil)
        // Then its file has a partial file's name, which the sweep leaves alone
        XCTAssertTrue(kept.partialFile.lastPathComponent.hasSuffix(".courier-partial"), kept.partialFile.lastPathComponent)
        XCTAssertEqual(stagingFiles(in: directory), [kept.partialFile.lastPathComponent])
        backdate(kept.partialFile)
        XCTAssertEqual(sweepNow(), [])
        // And the download continues from it
        server.clearRequests()
        let resumed: DownloadResponse? = wait(timeout: 30) { finish in
            manager.downloadTask(resumingFrom: kept, to: destination, completion: finish).resume()
        }
        XCTAssertNil(resumed?.error)
        XCTAssertEqual(server.requests.first?.header("Range"), "bytes=\(kept.bytesOnDisk)-")
        XCTAssertEqual(try Data(contentsOf: target), content)
    }
}
