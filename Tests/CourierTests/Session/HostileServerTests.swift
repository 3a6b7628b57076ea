import CourierTestSupport
import XCTest
@testable import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CourierSupport

/// Downloads against a server whose every byte is scripted: a download ends exact and complete
/// (checked against the length the server itself announced) or fails with a typed error, leaving
/// only resumable state.
final class HostileServerTests: CourierTestCase {
    private let f = Fixture()
    private var total: Int { f.total }
    private var content: Data { f.content }
    private var v1: String { f.v1 }

    /// Retries without delay, so scripted sequences run fast.
    private var policy: DownloadPolicy {
        var policy = DownloadPolicy()
        policy.retry.initialDelay = .milliseconds(1)
        policy.retry.maximumDelay = .milliseconds(1)
        return policy
    }

    private func download(_ url: URL, to destination: URL, policy: DownloadPolicy? = nil) -> DownloadResponse? {
        wait(timeout: 30) { finish in
            manager.downloadTask(
                with: URLRequest(url: url), to: .file(destination), policy: policy ?? self.policy, completion: finish
            ).resume()
        }
    }

    private func ranges(_ server: ScriptedServer) -> [String] {
        server.requests.map { $0.header("Range") ?? "-" }
    }

    // MARK: - Completeness is proven, never assumed

    func testShortPartialAnswersAreKeptAndContinuedUntilTheAnnouncedTotal() throws {
        let server = try ScriptedServer { [f] request, index in
            switch index {
            case 0: f.brokenFull(cut: 10_000)
            case 1: f.partial(10_000, 15_000)  // legal: a subset of the range asked for
            default: f.partial(15_000, f.total)
            }
        }
        defer { server.stop() }
        let destination = directory.appendingPathComponent("short.bin")
        let response = try XCTUnwrap(download(server.url("/short.bin"), to: destination))
        XCTAssertNil(response.error)
        XCTAssertEqual(try Data(contentsOf: destination), content, "exact, although the second answer was short")
        XCTAssertEqual(ranges(server), ["-", "bytes=10000-", "bytes=15000-"])
        XCTAssertEqual(server.requests.last?.header("If-Range"), v1)
        XCTAssertEqual(response.report.continuations, 1)
        XCTAssertEqual(response.report.retries, 1)
        XCTAssertTrue(response.report.isVerified)
    }

    func testPartialAnswersThatStopMakingProgressFailKeepingTheBytes() throws {
        // A 206 framed by the connection closing, which closes before sending anything.
        let server = try ScriptedServer { [f] request, index in
            index == 0
                ? f.brokenFull(cut: 10_000)
                : .response(status: 206, headers: [("Content-Range", "bytes 10000-\(f.total - 1)/\(f.total)"), ("ETag", f.v1)])
        }
        defer { server.stop() }
        let destination = directory.appendingPathComponent("stall.bin")
        let response = try XCTUnwrap(download(server.url("/stall.bin"), to: destination))
        let error = try XCTUnwrap(response.error)
        XCTAssertEqual(error.code, .invalidResponse, "\(error)")
        XCTAssertTrue(error.message.contains("10000 of the 40000"), error.message)
        XCTAssertEqual(error.resumeData?.bytesOnDisk, 10_000, "the proven bytes stay resumable")
        XCTAssertEqual(server.requests.count, 2 + FileBody.stallLimit, "bounded: no loop")
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path))
    }

    func testA416ThatContradictsTheAnnouncedTotalStartsOverInsteadOfPublishing() throws {
        let server = try ScriptedServer { [f] request, index in
            switch index {
            case 0: return f.brokenFull(cut: 10_000)
            case 1:
                // "The file is as long as what you hold": a lie, the 200 said 40,000.
                return .response(
                    status: 416, reason: "Range Not Satisfiable",
                    headers: [("Content-Range", "bytes */10000"), ("Content-Length", "0")])
            default: return f.full(f.content, etag: f.v1)
            }
        }
        defer { server.stop() }
        let destination = directory.appendingPathComponent("lying416.bin")
        let response = try XCTUnwrap(download(server.url("/lying416.bin"), to: destination))
        XCTAssertNil(response.error)
        XCTAssertEqual(try Data(contentsOf: destination), content)
        XCTAssertEqual(ranges(server), ["-", "bytes=10000-", "-"], "started over without Range")
    }

    func testA206LongerThanItsRangeFailsWithoutAppendingTheExcess() throws {
        let server = try ScriptedServer { [f] request, index in
            index == 0
                ? f.brokenFull(cut: 10_000)
                // The range says 30,000 bytes; Content-Length and body say 30,500.
                : .response(
                    status: 206,
                    headers: [
                        ("Content-Range", "bytes 10000-\(f.total - 1)/\(f.total)"),
                        ("Content-Length", "\(f.total - 10_000 + 500)"), ("ETag", f.v1),
                    ],
                    body: f.content.subdata(in: 10_000..<f.total) + Data(repeating: 0x41, count: 500))
        }
        defer { server.stop() }
        let destination = directory.appendingPathComponent("long.bin")
        var noRetries = policy
        noRetries.retry.retryLimit = 1
        let response = try XCTUnwrap(download(server.url("/long.bin"), to: destination, policy: noRetries))
        let error = try XCTUnwrap(response.error)
        XCTAssertEqual(error.code, .invalidResponse, "\(error)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path))
        let resume = try XCTUnwrap(error.resumeData)
        XCTAssertEqual(resume.bytesOnDisk, 10_000, "nothing of the overlong answer was appended")
        XCTAssertEqual(try Data(contentsOf: resume.partialFile), content.prefix(10_000))
    }

    func testA206WithoutContentLengthThatRunsPastItsRangeStopsAtTheRangesEnd() throws {
        let server = try ScriptedServer { [f] request, index in
            index == 0
                ? f.brokenFull(cut: 10_000)
                : .response(
                    status: 206, headers: [("Content-Range", "bytes 10000-\(f.total - 1)/\(f.total)"), ("ETag", f.v1)],
                    body: f.content.subdata(in: 10_000..<f.total) + Data(repeating: 0x41, count: 70_000))
        }
        defer { server.stop() }
        let destination = directory.appendingPathComponent("overrun.bin")
        let response = try XCTUnwrap(download(server.url("/overrun.bin"), to: destination))
        let error = try XCTUnwrap(response.error)
        XCTAssertEqual(error.code, .invalidResponse, "\(error)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path), "never larger than announced")
        let resume = try XCTUnwrap(error.resumeData)
        XCTAssertEqual(try Data(contentsOf: resume.partialFile), content, "exactly the range, nothing past it")
    }

    func testA206ForAnotherVersionIsNeverSplicedOnto() throws {
        let v2 = TestServer.deterministicBytes(count: total, seed: 12)
        let server = try ScriptedServer { [f] request, index in
            switch index {
            case 0: f.brokenFull(cut: 10_000)
            // A cache that ignores If-Range: right offset, right total, the new version's bytes.
            case 1: f.partial(10_000, f.total, etag: "\"v2\"", body: v2.subdata(in: 10_000..<f.total))
            default: f.full(v2, etag: "\"v2\"")
            }
        }
        defer { server.stop() }
        let destination = directory.appendingPathComponent("spliced.bin")
        let response = try XCTUnwrap(download(server.url("/spliced.bin"), to: destination))
        XCTAssertNil(response.error)
        XCTAssertEqual(try Data(contentsOf: destination), v2, "the new version, whole: no v1 prefix")
        XCTAssertEqual(ranges(server), ["-", "bytes=10000-", "-"])
    }

    func testARangeEndingAtInt64MaxIsRefusedWithoutTrapping() throws {
        let server = try ScriptedServer { [f] request, index in
            index == 0
                ? f.brokenFull(cut: 10_000)
                : .response(
                    status: 206, headers: [("Content-Range", "bytes 10000-9223372036854775807/*"), ("ETag", f.v1)],
                    body: Data(repeating: 1, count: 100))
        }
        defer { server.stop() }
        let response = try XCTUnwrap(download(server.url("/max.bin"), to: directory.appendingPathComponent("max.bin")))
        XCTAssertEqual(response.error?.code, .invalidResponse, "\(String(describing: response.error))")
        XCTAssertEqual(response.error?.resumeData?.bytesOnDisk, 10_000)
    }

    func testShortAnswersThatKeepStartingOverAreBoundedToo() throws {
        // Chunked (so it ends cleanly) but announcing 40,000 bytes, and only ever sending 10.
        let server = try ScriptedServer { [f] _, _ in
            .bytes(
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: \(f.total)\r\nETag: \(f.v1)\r\n"
                    + "Connection: close\r\n\r\na\r\n0123456789\r\n0\r\n\r\n")
        }
        defer { server.stop() }
        let destination = directory.appendingPathComponent("again.bin")
        let response = try XCTUnwrap(download(server.url("/again.bin"), to: destination))
        XCTAssertEqual(response.error?.code, .invalidResponse, "\(String(describing: response.error))")
        XCTAssertLessThanOrEqual(server.requests.count, 1 + FileBody.stallLimit, "no endless loop")
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path))
    }

    func testAClosedDelimited200AnsweringARangeIsNotPublished() throws {
        let server = try ScriptedServer { [f] request, index in
            index == 0
                ? f.brokenFull(cut: 10_000)
                // Ignores the Range, announces no length, stops halfway and closes.
                : .response(status: 200, headers: [("ETag", f.v1)], body: f.content.prefix(20_000))
        }
        defer { server.stop() }
        let destination = directory.appendingPathComponent("closed.bin")
        let response = try XCTUnwrap(download(server.url("/closed.bin"), to: destination))
        XCTAssertEqual(response.error?.code, .integrityFailed, "\(String(describing: response.error))")
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path))
        XCTAssertEqual(response.error?.resumeData?.bytesOnDisk, 10_000, "the proven bytes stay")
    }

    func testA206OfUnknownTotalAfterABodyOfUnknownLengthIsNotPublished() throws {
        let server = try ScriptedServer { [f] request, index in
            if index == 0 {
                // Chunked, with a validator, cut inside the body (no last chunk): a transient failure.
                let chunk = f.content.prefix(10_000)
                var reply = ScriptedServer.Reply.bytes(
                    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nETag: \(f.v1)\r\nConnection: close\r\n\r\n2710\r\n")
                reply.steps.append(.send(chunk + Data("\r\n".utf8)))
                return reply
            }
            return .response(
                status: 206, headers: [("Content-Range", "bytes 10000-14999/*"), ("ETag", f.v1)],
                body: f.content.subdata(in: 10_000..<15_000))
        }
        defer { server.stop() }
        let destination = directory.appendingPathComponent("unknown.bin")
        let response = try XCTUnwrap(download(server.url("/unknown.bin"), to: destination))
        XCTAssertEqual(response.error?.code, .integrityFailed, "\(String(describing: response.error))")
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path), "15,000 of 40,000 bytes are not the file")
    }

    func testAPausedDataTaskWhoseContinuationEndsShortFails() throws {
        let server = try ScriptedServer { [f] request, index in
            if index == 0 {
                return .response(
                    status: 200, headers: [("Content-Length", "\(f.total)"), ("ETag", f.v1)],
                    body: f.content, sendingOnly: 10_000, ending: .hang)
            }
            return f.partial(10_000, 15_000)  // truthful, but the body stops there
        }
        defer { server.stop() }
        let received = Locked<Int64>(0)
        let done = Box<DataResponse<Data>>()
        let task = manager.dataTask(
            with: URLRequest(url: server.url("/paused")),
            downloadProgress: { progress in received.withLock { $0 = progress.completedUnitCount } },
            completion: { done.append($0) })
        task.resume()
        waitUntil("10,000 bytes arrived") { received.withLock { $0 } >= 10_000 }
        task.suspend()
        task.resume()
        waitUntil("the task completed") { done.count == 1 }
        XCTAssertEqual(done.first?.error?.code, .invalidResponse, "\(String(describing: done.first?.error))")
        XCTAssertEqual(server.requests.last?.header("Range"), "bytes=10000-")
    }

    func testA206ToARequestWithoutRangeIsRefused() throws {
        let server = try ScriptedServer { [f] _, _ in f.partial(10_000, f.total) }
        defer { server.stop() }
        let destination = directory.appendingPathComponent("unasked.bin")
        let response = try XCTUnwrap(download(server.url("/unasked.bin"), to: destination))
        XCTAssertEqual(response.error?.code, .invalidResponse)
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path))
    }

    // MARK: - Lengths are parsed by Courier

    func testMalformedContentLengthsFailWithATypedErrorAndPublishNothing() throws {
        for value in ["0x5", "+5", "5, 6", "-1", "5 5"] {
            let server = try ScriptedServer { _, _ in
                .response(status: 200, headers: [("Content-Length", value), ("ETag", "\"x\"")], body: Data("hello".utf8))
            }
            defer { server.stop() }
            let destination = directory.appendingPathComponent("length.bin")
            let response = try XCTUnwrap(download(server.url("/length.bin"), to: destination))
            XCTAssertEqual(response.error?.code, .invalidResponse, "Content-Length: \(value): \(String(describing: response.error))")
            XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path), value)
            let data = self.data(URLRequest(url: server.url("/length.bin")))
            XCTAssertEqual(data.error?.code, .invalidResponse, "a data task too, for \(value)")
        }
    }

    func testAMalformedContentRangeFailsTheAttemptWithATypedError() throws {
        let server = try ScriptedServer { [f] request, index in
            index == 0
                ? f.brokenFull(cut: 10_000)
                : .response(
                    status: 206, headers: [("Content-Range", "bytes 10000-0x9C3F/40000"), ("ETag", f.v1)],
                    body: f.content.subdata(in: 10_000..<f.total))
        }
        defer { server.stop() }
        let destination = directory.appendingPathComponent("range.bin")
        let response = try XCTUnwrap(download(server.url("/range.bin"), to: destination))
        XCTAssertEqual(response.error?.code, .invalidResponse)
        XCTAssertEqual(response.error?.resumeData?.bytesOnDisk, 10_000, "the bytes held are still good")
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path))
    }

    // MARK: - Bodies nothing can prove complete

    private func encodedCutShort() throws -> (ScriptedServer, Data) {
        let gzip = ScriptedServer.gzip(content)
        let half = gzip.prefix(gzip.count / 2)
        // Identity was asked; the server gzips anyway and stops inside the compressed stream,
        // with a Content-Length that matches what it sent.
        let server = try ScriptedServer { _, _ in
            .response(status: 200, headers: [("Content-Encoding", "gzip"), ("Content-Length", "\(half.count)")], body: half)
        }
        return (server, half)
    }

    func testAnEncodedBodyIsRefusedBeforeItIsFetchedUnlessTheCallerCanCheckIt() throws {
        let (server, _) = try encodedCutShort()
        defer { server.stop() }
        let destination = directory.appendingPathComponent("encoded.bin")
        let refused = try XCTUnwrap(download(server.url("/encoded.bin"), to: destination))
        XCTAssertEqual(refused.error?.code, .integrityFailed)
        XCTAssertTrue(refused.error?.message.contains("gzip-encoded") ?? false, "\(String(describing: refused.error))")
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path))
        XCTAssertEqual(server.requests.first?.header("Accept-Encoding"), "identity")

        // An expected SHA-256 can check it: the cut stream then fails that check.
        var checked = policy
        checked.expectedSHA256 = SHA256.hash(content)
        let mismatch = try XCTUnwrap(download(server.url("/encoded.bin"), to: destination, policy: checked))
        XCTAssertEqual(mismatch.error?.code, .integrityFailed)
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path))
    }

    func testAnEncodedBodyPublishedOnRequestIsReportedUnverified() throws {
        let (server, _) = try encodedCutShort()
        defer { server.stop() }
        let destination = directory.appendingPathComponent("unverified.bin")
        var lenient = policy
        lenient.publishesUnverifiedBodies = true
        let response = try XCTUnwrap(download(server.url("/unverified.bin"), to: destination, policy: lenient))
        XCTAssertNil(response.error)
        XCTAssertEqual(response.report.isVerified, false, "never reported as proven complete")
    }

    func testABodyOnlyTheConnectionClosingEndsIsRefusedButAChunkedOneIsNot() throws {
        let server = try ScriptedServer { request, _ in
            if request.path == "/chunked" {
                return .bytes("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
            }
            return .response(status: 200, headers: [], body: Data("hello".utf8))
        }
        defer { server.stop() }
        let closeDelimited = try XCTUnwrap(download(server.url("/close"), to: directory.appendingPathComponent("close.txt")))
        XCTAssertEqual(closeDelimited.error?.code, .integrityFailed)
        let chunked = try XCTUnwrap(download(server.url("/chunked"), to: directory.appendingPathComponent("chunked.txt")))
        XCTAssertNil(chunked.error)
        XCTAssertTrue(chunked.report.isVerified)
        XCTAssertEqual(try Data(contentsOf: directory.appendingPathComponent("chunked.txt")), Data("hello".utf8))
    }
}

/// The scripted answers, as a value the server's closures can capture.
private struct Fixture: Sendable {
    let total = 40_000
    let content = TestServer.deterministicBytes(count: 40_000, seed: 11)
    let v1 = "\"v1\""

    /// The first answer: a 200 announcing the whole file with `etag`, cut after `cut` bytes
    /// (a transient failure Courier continues with Range).
    func brokenFull(cut: Int, etag: String? = nil) -> ScriptedServer.Reply {
        .response(
            status: 200, headers: [("Content-Length", "\(total)"), ("ETag", etag ?? v1)], body: content, sendingOnly: cut)
    }

    /// A 206 carrying `content[first..<end]` with a truthful Content-Range.
    func partial(_ first: Int, _ end: Int, etag: String? = nil, body: Data? = nil) -> ScriptedServer.Reply {
        let bytes = body ?? content.subdata(in: first..<end)
        return .response(
            status: 206, reason: "Partial Content",
            headers: [
                ("Content-Range", "bytes \(first)-\(end - 1)/\(total)"), ("Content-Length", "\(bytes.count)"),
                ("ETag", etag ?? v1),
            ],
            body: bytes)
    }

    func full(_ body: Data, etag: String) -> ScriptedServer.Reply {
        .response(status: 200, headers: [("Content-Length", "\(body.count)"), ("ETag", etag)], body: body)
    }

}
