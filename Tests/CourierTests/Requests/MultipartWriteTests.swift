import XCTest
@testable import Courier
import CourierTestServer
#if canImport(Glibc)
import Glibc
#endif

final class MultipartWriteTests: MultipartTestCase {
    private func smallForm() -> MultipartFormData {
        var form = MultipartFormData()
        form.append(field: "value", name: "field")
        return form
    }

    func testWrittenFileIsPrivate() throws {
        let target = directory.appendingPathComponent("body.multipart")
        try smallForm().write(to: target)
        var info = stat()
        XCTAssertEqual(lstat(target.path, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o600)
        XCTAssertEqual(info.st_mode & S_IFMT, S_IFREG)
    }

    func testExistingFileIsNeverReplaced() throws {
        let target = try file("body.multipart", Data("keep me".utf8))
        let problem = error { () throws(CourierError) in try smallForm().write(to: target) }
        XCTAssertEqual(problem?.code, .fileSystem)
        XCTAssertEqual((problem?.underlyingError as? POSIXError)?.code, .EEXIST)
        XCTAssertEqual(try Data(contentsOf: target), Data("keep me".utf8))
    }

    func testSymlinkAtTheDestinationIsNotFollowed() throws {
        // A planted link to a file elsewhere must neither be written through nor removed.
        let victim = try file("victim", Data("victim".utf8))
        let target = directory.appendingPathComponent("body.multipart")
        try FileManager.default.createSymbolicLink(at: target, withDestinationURL: victim)
        let dangling = directory.appendingPathComponent("dangling.multipart")
        try FileManager.default.createSymbolicLink(at: dangling, withDestinationURL: directory.appendingPathComponent("nowhere"))

        XCTAssertEqual(error { () throws(CourierError) in try smallForm().write(to: target) }?.code, .fileSystem)
        XCTAssertEqual(error { () throws(CourierError) in try smallForm().write(to: dangling) }?.code, .fileSystem)

        XCTAssertEqual(try Data(contentsOf: victim), Data("victim".utf8))
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: target.path), victim.path)
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.appendingPathComponent("nowhere").path))
    }

    func testMissingDirectoryIsAFileSystemError() {
        let target = directory.appendingPathComponent("no/such/dir/body.multipart")
        let problem = error { () throws(CourierError) in try smallForm().write(to: target) }
        XCTAssertEqual(problem?.code, .fileSystem)
        XCTAssertEqual(problem?.url, target)
    }

    func testPartFailingMidwayLeavesNothingBehind() throws {
        // Given 3 MiB of parts that reach the disk before a stream fails 2 MiB into its 4 MiB
        let input = try file("input.bin", TestServer.deterministicBytes(count: 2 << 20, seed: 3))
        var form = MultipartFormData()
        form.append(Data(count: 1 << 20), name: "data")
        form.append(fileAt: input, name: "file")
        form.append(
            stream: { ScriptedInputStream(Data(count: 4 << 20), chunk: 64 * 1024, failAfter: 2 << 20) },
            length: 4 << 20, name: "stream")
        let target = directory.appendingPathComponent("body.multipart")

        // When it is written
        let problem = error { () throws(CourierError) in try form.write(to: target) }

        // Then the error is the stream's, and only the input is left in the directory
        XCTAssertEqual(problem?.code, .uploadSourceFailed)
        XCTAssertEqual(directoryContents, ["input.bin"])
    }

    func testHalfGigabyteFileIsWrittenWithBoundedMemory() throws {
        // Given a 512 MiB file part (sparse: it costs no disk until read) between two small parts
        let size: Int64 = 512 << 20
        let input = directory.appendingPathComponent("sparse.bin")
        let descriptor = open(input.path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        XCTAssertGreaterThanOrEqual(descriptor, 0)
        XCTAssertEqual(ftruncate(descriptor, off_t(size)), 0)
        close(descriptor)
        var form = MultipartFormData()
        form.append(field: "first", name: "a")
        form.append(fileAt: input, name: "big")
        form.append(field: "last", name: "z")
        let target = directory.appendingPathComponent("body.multipart")

        // When it is written while another thread samples the resident set
        let sampler = ResidentSetSampler()
        let before = sampler.currentBytes()
        sampler.start()
        try form.write(to: target)
        let peak = sampler.stop()
        let after = sampler.currentBytes()

        // Then the resident set grew by far less than the part, and the file is complete
        let mebibyte = Double(1 << 20)
        print(
            String(
                format: "multipart write of a 512 MiB file part: RSS before %.1f MiB, peak %.1f MiB (+%.1f MiB, "
                    + "%d samples), after %.1f MiB",
                Double(before) / mebibyte, Double(peak) / mebibyte, Double(peak - before) / mebibyte, sampler.sampleCount,
                Double(after) / mebibyte))
        XCTAssertGreaterThan(sampler.sampleCount, 1, "the sampler ran during the write")
        XCTAssertLessThan(peak - before, 64 << 20)
        let written = try FileManager.default.attributesOfItem(atPath: target.path)[.size] as? NSNumber
        XCTAssertEqual(written?.int64Value, try form.contentLength())
        XCTAssertGreaterThan(written?.int64Value ?? 0, size)
        let handle = try FileHandle(forReadingFrom: target)
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(written?.int64Value ?? 0) - 200)
        let tail = try handle.readToEnd() ?? Data()
        let framing = Data(
            "\r\n--\(form.boundary)\r\nContent-Disposition: form-data; name=\"z\"\r\n\r\nlast\r\n--\(form.boundary)--\r\n".utf8)
        XCTAssertEqual(tail, Data(count: 200 - framing.count) + framing, "the file's zeros, then the last part")
    }
}
