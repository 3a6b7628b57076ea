import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// ``StreamSink`` over real sockets: a body streamed to a descriptor is complete or a typed
/// error, a new sink continues after the bytes an earlier one recorded, and a changed version
/// starts a file over (or fails a pipe). Its pure parts (the facts, the record) at the end.
final class StreamSinkTests: CourierTestCase {
    private let body = TestServer.deterministicBytes(count: 300_000, seed: 3)

    /// A file the sink writes to, opened for writing (created empty when `fresh`).
    private func openOutput(_ name: String, fresh: Bool = true) throws -> (URL, Int32) {
        let file = directory.appendingPathComponent(name)
        let descriptor = open(file.path, O_WRONLY | O_CREAT | (fresh ? O_TRUNC : 0) | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw POSIXError(.EIO) }
        return (file, descriptor)
    }

    /// Streams `request` through `sink` to its end.
    private func stream(_ request: URLRequest, into sink: StreamSink) async throws {
        let (bytes, response) = try await manager.bytes(for: request)
        try sink.begin(response)
        for try await chunk in bytes.chunks { try sink.write(chunk) }
        try sink.finish()
    }

    private func problem(of error: any Error) -> StreamSink.Problem? {
        (error as? CourierError)?.underlyingError as? StreamSink.Problem
    }

    func testACompleteBodyIsWrittenVerifiedAndRecorded() async throws {
        // Given a sink with a record file and the body's SHA-256
        let (file, descriptor) = try openOutput("out.bin")
        defer { close(descriptor) }
        let record = directory.appendingPathComponent("out.record")
        let sink = try StreamSink(
            descriptor: descriptor, recordFile: record, expectedSHA256: SHA256.hash(body))
        // When the body is streamed through it
        try await stream(request("/bytes/300000?seed=3&chunk=7000"), into: sink)
        // Then the file holds the body, and the record says every byte is out, with the validator
        XCTAssertEqual(try Data(contentsOf: file), body)
        XCTAssertTrue(sink.isVerified)
        XCTAssertEqual(
            StreamSink.Record.read(from: record),
            StreamSink.Record(written: 300_000, writing: 0, validator: "\"bytes-300000-3\"", length: 300_000))
    }

    func testADigestThatDiffersIsATypedError() async throws {
        // Given a sink expecting another body's SHA-256
        let (_, descriptor) = try openOutput("out.bin")
        defer { close(descriptor) }
        let sink = try StreamSink(descriptor: descriptor, recordFile: nil, expectedSHA256: [UInt8](repeating: 0, count: 32))
        // When the body is streamed, then it ends with integrityFailed naming the digest
        do {
            try await stream(request("/bytes/300000?seed=3"), into: sink)
            XCTFail("a wrong digest must fail")
        } catch {
            XCTAssertEqual((error as? CourierError)?.code, .integrityFailed)
            guard case .digestMismatch(let actual, _)? = problem(of: error) else { return XCTFail("\(error)") }
            XCTAssertEqual(actual, SHA256.hash(body))
        }
    }

    func testABodyShorterThanTheBytesAlreadyWrittenIsATypedError() async throws {
        // Given a record of 600 bytes written of a chunked body with ETag "x"
        let record = directory.appendingPathComponent("out.record")
        try Data(StreamSink.Record(written: 600, validator: "\"x\"", length: nil).text.utf8).write(to: record)
        chmod(record.path, 0o600)
        // and a server whose answer has the same validator but only 300 bytes (chunked, so complete)
        let short = Data(repeating: 0x61, count: 300)
        let scripted = try ScriptedServer { _, _ in
            .response(
                status: 200, headers: [("Transfer-Encoding", "chunked"), ("ETag", "\"x\"")],
                body: Data("12c\r\n".utf8) + short + Data("\r\n0\r\n\r\n".utf8))
        }
        defer { scripted.stop() }
        let (pipeRead, pipeWrite) = try makePipe()
        defer { close(pipeRead); close(pipeWrite) }
        let sink = try StreamSink(descriptor: pipeWrite, recordFile: record)
        XCTAssertEqual(sink.written, 600, "a pipe continues after the recorded bytes")
        // When the body is streamed, then it fails: the bytes already out never came again
        do {
            try await stream(URLRequest(url: scripted.url("/x")), into: sink)
            XCTFail("a short body must fail")
        } catch {
            XCTAssertEqual((error as? CourierError)?.code, .integrityFailed)
            XCTAssertEqual(problem(of: error), .endedBeforeWrittenBytes(received: 300, written: 600))
        }
    }

    func testANewSinkContinuesAfterTheBytesAnEarlierProcessWrote() async throws {
        // Given a process that wrote the first 100,000 bytes and recorded them, then died
        let (file, first) = try openOutput("out.bin")
        _ = body.prefix(100_000).withUnsafeBytes { write(first, $0.baseAddress, $0.count) }
        close(first)
        let record = directory.appendingPathComponent("out.record")
        try Data(StreamSink.Record(written: 100_000, validator: "\"bytes-300000-3\"", length: 300_000).text.utf8).write(to: record)
        chmod(record.path, 0o600)
        // When a new sink on the same file streams the body again
        let (_, descriptor) = try openOutput("out.bin", fresh: false)
        defer { close(descriptor) }
        let sink = try StreamSink(
            descriptor: descriptor, recordFile: record, expectedSHA256: SHA256.hash(body), truncates: true)
        XCTAssertEqual(sink.resumed, 100_000)
        try await stream(request("/bytes/300000?seed=3"), into: sink)
        // Then the file holds the body once (the first bytes only read again, through the digest)
        XCTAssertEqual(try Data(contentsOf: file), body)
        XCTAssertEqual(sink.written, 300_000)
    }

    func testAChangedValidatorStartsAFileOverAndFailsAPipe() async throws {
        // Given a record of 100,000 bytes of another version of the body
        let record = directory.appendingPathComponent("out.record")
        let old = StreamSink.Record(written: 100_000, validator: "\"old\"", length: 300_000)
        try Data(old.text.utf8).write(to: record)
        chmod(record.path, 0o600)
        let (file, descriptor) = try openOutput("out.bin")
        _ = Data(repeating: 0x7A, count: 100_000).withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        // When a sink that may truncate the file streams the new version
        let sink = try StreamSink(descriptor: descriptor, recordFile: record, truncates: true)
        try await stream(request("/bytes/300000?seed=3"), into: sink)
        close(descriptor)
        // Then the file starts over and holds only the new body
        XCTAssertEqual(try Data(contentsOf: file), body)
        XCTAssertEqual(sink.resumed, 0)

        // And on a pipe, where written bytes cannot be taken back, the same is a typed error
        try Data(old.text.utf8).write(to: record)
        let (pipeRead, pipeWrite) = try makePipe()
        defer { close(pipeRead); close(pipeWrite) }
        let onPipe = try StreamSink(descriptor: pipeWrite, recordFile: record)
        do {
            try await stream(request("/bytes/300000?seed=3"), into: onPipe)
            XCTFail("a changed version must not be spliced onto a pipe")
        } catch {
            XCTAssertEqual((error as? CourierError)?.code, .invalidResumeData)
            XCTAssertEqual(problem(of: error), .versionChanged(old))
        }
    }

    func testARecordOfAWriteUnderWayCannotContinueAPipe() throws {
        // Given a record of a process that died during a write
        let record = directory.appendingPathComponent("out.record")
        try Data(StreamSink.Record(written: 10, writing: 5, validator: "\"v\"", length: 100).text.utf8).write(to: record)
        chmod(record.path, 0o600)
        let (pipeRead, pipeWrite) = try makePipe()
        defer { close(pipeRead); close(pipeWrite) }
        // When a sink is made for a pipe, then it refuses before any request
        XCTAssertThrowsError(try StreamSink(descriptor: pipeWrite, recordFile: record)) { error in
            guard case .cannotContinue(let earlier)? = problem(of: error) else { return XCTFail("\(error)") }
            XCTAssertEqual(earlier.writing, 5)
        }
    }

    // MARK: - Pure parts

    func testFactsFollowTheDownloadRules() throws {
        let url = try XCTUnwrap(URL(string: "http://h/x"))
        func facts(_ headers: [String: String], status: Int = 200) -> StreamSink.Facts {
            StreamSink.Facts(HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)!)
        }
        let plain = facts(["Content-Length": "10", "ETag": "\"a\"", "Last-Modified": "Wed, 21 Oct 2015 07:28:00 GMT"])
        XCTAssertEqual(plain.length, 10)
        XCTAssertEqual(plain.validator, "\"a\"", "a strong ETag first")
        XCTAssertNil(plain.unverifiableReason)
        XCTAssertEqual(
            facts(["Content-Length": "10", "ETag": "W/\"a\"", "Last-Modified": "Wed, 21 Oct 2015 07:28:00 GMT"]).validator,
            "Wed, 21 Oct 2015 07:28:00 GMT", "a weak ETag proves nothing: Last-Modified instead")
        XCTAssertNil(facts(["Content-Length": "10"]).validator)
        let encoded = facts(["Content-Length": "10", "Content-Encoding": "gzip", "ETag": "\"a\""])
        XCTAssertNil(encoded.length, "a compressed length")
        XCTAssertNil(encoded.validator, "offsets would count decoded bytes")
        XCTAssertNotNil(encoded.unverifiableReason)
        XCTAssertNil(facts(["Transfer-Encoding": "chunked"]).unverifiableReason, "the last chunk proves the end")
        XCTAssertNotNil(facts([:]).unverifiableReason, "only the connection closing ends it")
        XCTAssertNil(facts(["Content-Encoding": "identity", "Content-Length": "3"]).unverifiableReason)
        XCTAssertNil(facts([:], status: 204).unverifiableReason, "no body to prove")
    }

    func testTheRecordRoundTripsAndHasAFixedWidthProgressLine() {
        let record = StreamSink.Record(written: 12, writing: 34, validator: "\"v 1\"", length: 300_000)
        XCTAssertEqual(StreamSink.Record(text: record.text), record)
        let bare = StreamSink.Record(validator: nil, length: nil)
        XCTAssertEqual(StreamSink.Record(text: bare.text), bare)
        XCTAssertNil(StreamSink.Record(text: "written 1\n"))
        XCTAssertNil(StreamSink.Record(text: ""))
        // Every progress line has the same length, so an update overwrites exactly the old one.
        XCTAssertEqual(
            StreamSink.Record.progressLine(written: 0, writing: 0).utf8.count,
            StreamSink.Record.progressLine(written: Int64.max, writing: 16384).utf8.count)
        XCTAssertTrue(StreamSink.Record(written: 100, validator: "\"v\"", length: nil).isContinuable)
        XCTAssertTrue(bare.isContinuable, "nothing written: start again")
        XCTAssertFalse(StreamSink.Record(written: 100, validator: nil, length: 200).isContinuable)
        XCTAssertFalse(record.isContinuable, "a write was under way")
    }

    private func makePipe() throws -> (Int32, Int32) {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw POSIXError(.EIO) }
        return (ends[0], ends[1])
    }
}
