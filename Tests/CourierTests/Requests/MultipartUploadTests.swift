import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Multipart bodies through the manager: in memory below the threshold, from a private temporary
/// file above it, and that file never outliving the task.
final class MultipartUploadTests: CourierTestCase {
    override func makeConfiguration() -> SessionManager.Configuration {
        var configuration = super.makeConfiguration()
        configuration.temporaryDirectory = directory
        return configuration
    }

    private func temporaryBodies() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0.hasSuffix(".multipart") }
    }

    private func form(fileBytes: Int) throws -> (MultipartFormData, Data) {
        let file = directory.appendingPathComponent("report.pdf")
        let contents = TestServer.deterministicBytes(count: fileBytes, seed: 4)
        try contents.write(to: file)
        var form = MultipartFormData()
        form.append(field: "quarterly", name: "title")
        form.append(fileAt: file, name: "document")
        return (form, contents)
    }

    private func upload(_ body: UploadBody) -> DataResponse<Data>? {
        wait(timeout: 30) { finish in
            manager.uploadTask(with: request("/anything", method: "POST"), from: body, completion: finish).resume()
        }
    }

    func testSmallFormIsSentFromMemoryWithItsBoundaryAndLength() throws {
        let (form, contents) = try form(fileBytes: 5000)
        XCTAssertNil(upload(.multipart(form))?.error)
        let sent = try XCTUnwrap(server.requests.last)
        XCTAssertEqual(sent.header("Content-Type"), form.contentType)
        XCTAssertEqual(sent.header("Content-Length"), "\(try form.contentLength())")
        XCTAssertEqual(sent.body, try form.encoded())
        XCTAssertNotNil(sent.body.range(of: contents))
        XCTAssertTrue(String(decoding: sent.body, as: UTF8.self).contains("filename=\"report.pdf\"\r\nContent-Type: application/pdf"))
    }

    func testLargeFormIsStreamedFromATemporaryFileThatIsRemovedAfterwards() throws {
        let (form, _) = try form(fileBytes: 300_000)
        XCTAssertNil(upload(.multipart(form, memoryThreshold: 10_000))?.error)
        let sent = try XCTUnwrap(server.requests.last)
        XCTAssertEqual(sent.header("Content-Length"), "\(try form.contentLength())", "a file body has a length")
        XCTAssertEqual(sent.body, try form.encoded())
        XCTAssertEqual(temporaryBodies(), [])
    }

    func testTemporaryFileIsRemovedWhenTheUploadFailsOrIsCancelled() throws {
        let (form, _) = try form(fileBytes: 300_000)
        let refused = wait(timeout: 30) { finish in
            manager.uploadTask(
                with: request("/status/500", method: "POST"), from: .multipart(form, memoryThreshold: 10), completion: finish
            )
            .resume()
        }
        XCTAssertEqual(refused?.error?.statusCode, 500)
        let cancelled: DataResponse<Data>? = wait { finish in
            let task = manager.uploadTask(
                with: request("/never-answer", method: "POST"), from: .multipart(form, memoryThreshold: 10), completion: finish)
            task.resume()
            waitUntil("the upload is sent") { server.requests.contains { $0.path == "/never-answer" } }
            task.cancel()
        }
        XCTAssertEqual(cancelled?.error?.code, .cancelled)
        XCTAssertEqual(temporaryBodies(), [])
    }

    func testMissingFilePartIsATypedErrorAndNothingIsSent() {
        var form = MultipartFormData()
        form.append(fileAt: directory.appendingPathComponent("gone.bin"), name: "f")
        let response = upload(.multipart(form))
        XCTAssertEqual(response?.error?.code, .uploadSourceFailed)
        XCTAssertTrue(server.requests.isEmpty)
    }

    func testMultipartBodyIsResentWhenRetried() throws {
        let (form, _) = try form(fileBytes: 50_000)
        var policy = RetryPolicy()
        policy.retryableMethods.insert("POST")
        policy.initialDelay = .milliseconds(1)
        policy.retryLimit = 1
        _ = wait { finish in
            manager.uploadTask(
                with: request("/status/503", method: "POST"), from: .multipart(form, memoryThreshold: 1000), completion: finish
            )
            .intercept(with: Interceptor(retriers: [policy])).resume()
        }
        XCTAssertEqual(server.requests.count, 2)
        XCTAssertEqual(server.requests.map(\.body), [try form.encoded(), try form.encoded()])
        XCTAssertEqual(temporaryBodies(), [])
    }

    // MARK: - 1 GiB with bounded memory

    private static let childFlag = "COURIER_MULTIPART_RSS_CHILD"

    /// The process's peak RSS would already be raised by earlier tests, so the test runs itself
    /// again in a child process and reads the child's peak (`VmHWM`).
    func testOneGiBMultipartUploadKeepsMemoryBounded() throws {
        if ProcessInfo.processInfo.environment[Self.childFlag] != nil { return try uploadOneGiBAndReportPeak() }
        let child = Process()
        child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        child.arguments = ["CourierTests.MultipartUploadTests/testOneGiBMultipartUploadKeepsMemoryBounded"]
        child.environment = ProcessInfo.processInfo.environment.merging([Self.childFlag: "1"]) { $1 }
        let output = Pipe()
        child.standardOutput = output
        child.standardError = output
        try child.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        child.waitUntilExit()
        XCTAssertEqual(child.terminationStatus, 0, text)
        let line = try XCTUnwrap(text.split(separator: "\n").first { $0.hasPrefix("PEAK_RSS_KIB=") }, text)
        let peakKiB = try XCTUnwrap(Int(line.dropFirst("PEAK_RSS_KIB=".count)))
        print("1 GiB multipart upload: peak RSS \(peakKiB / 1024) MiB")
        XCTAssertLessThan(peakKiB, 192 * 1024, "a 1 GiB part must never be held in memory")
    }

    private func uploadOneGiBAndReportPeak() throws {
        let source = directory.appendingPathComponent("huge.bin")
        XCTAssertTrue(FileManager.default.createFile(atPath: source.path, contents: nil))
        let handle = try FileHandle(forWritingTo: source)
        try handle.truncate(atOffset: 1 << 30)  // sparse: 1 GiB of zeros without using the disk
        try handle.close()
        var form = MultipartFormData()
        form.append(field: "nightly", name: "build")
        form.append(fileAt: source, name: "artifact")
        let response = wait(timeout: 300) { finish in
            manager.uploadTask(with: request("/sink", method: "POST"), from: .multipart(form), serializer: .json, completion: finish)
                .resume()
        }
        XCTAssertNil(response?.error)
        XCTAssertEqual(response?.value?["bodyLength"]?.int.map(Int64.init), try form.contentLength())
        XCTAssertEqual(temporaryBodies(), [])
        // `VmHWM`, not `ru_maxrss`: Linux carries the forking parent's peak across `exec` into
        // the child's `ru_maxrss`, so a big test process would be counted as the child's.
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let peak = try XCTUnwrap(status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") })
        print("PEAK_RSS_KIB=\(peak.split(separator: " ").dropFirst().first ?? "")")
    }
}
