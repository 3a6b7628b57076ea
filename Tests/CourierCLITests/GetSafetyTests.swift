import XCTest
import Courier
import CourierTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `courier get` against servers that misbehave, and the polite stops that must keep bytes.
final class GetSafetyTests: CommandLineTestCase {
    private static let body = TestServer.deterministicBytes(count: 300_000, seed: 41)

    /// A 206 for the `Range` asked, or the whole body (200), with a strong ETag.
    private static func answer(_ request: RecordedRequest, headers extra: [(String, String)] = []) -> ScriptedServer.Reply {
        guard let range = request.header("Range"), let first = Int(range.dropFirst(6).dropLast()) else {
            return .response(status: 200, headers: [("Content-Length", "\(body.count)"), ("ETag", "\"g\"")] + extra, body: body)
        }
        return .response(
            status: 206,
            headers: [
                ("Content-Range", "bytes \(first)-\(body.count - 1)/\(body.count)"),
                ("Content-Length", "\(body.count - first)"), ("ETag", "\"g\""),
            ] + extra,
            body: body.subdata(in: first..<body.count))
    }

    // MARK: - Existing names: never fetch a body only to throw it away

    func testAnExistingFileNamedAfterTheURLStopsTheCommandBeforeAnyRequest() throws {
        server.addFile("taken.bin", data: Self.body)
        try Data("mine".utf8).write(to: directory.appendingPathComponent("taken.bin"))
        let result = try run(["get", server.url("/files/taken.bin").absoluteString])
        XCTAssertEqual(result.status, 6, result.err)
        XCTAssertTrue(result.err.contains("already exists (use --force to replace it, or -o"), result.err)
        XCTAssertEqual(server.requests.count, 0, "nothing was fetched")
        XCTAssertEqual(try Data(contentsOf: directory.appendingPathComponent("taken.bin")), Data("mine".utf8))
    }

    func testAURLWithoutANameIsLeftToTheHeaders() throws {
        let server = try ScriptedServer { _, _ in
            .response(
                status: 200,
                headers: [
                    ("Content-Length", "5"), ("ETag", "\"n\""),
                    ("Content-Disposition", "attachment; filename=\"report.txt\""),
                ],
                body: Data("hello".utf8))
        }
        defer { server.stop() }
        try Data("mine".utf8).write(to: directory.appendingPathComponent("download"))  // the fallback name
        let result = try run(["get", server.url("/").absoluteString])
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertEqual(try Data(contentsOf: directory.appendingPathComponent("report.txt")), Data("hello".utf8))
    }

    func testAnExistingContentDispositionNameStopsTheBodyAtTheHeadersAndForceContinuesTheBytesKept() throws {
        let disposition = ("Content-Disposition", "attachment; filename=\"named.bin\"")
        let server = try ScriptedServer { request, index in
            guard index == 0 else { return Self.answer(request, headers: [disposition]) }
            // 100 KB at once, then a long stall: the command must not wait for the rest.
            var reply = Self.answer(request, headers: [disposition])
            let all = reply.steps.first.map { step -> Data in if case .send(let data) = step { return data } else { return Data() } }!
            reply.steps = [.send(all.prefix(all.count - 200_000)), .pause(milliseconds: 20_000), .send(all.suffix(200_000))]
            return reply
        }
        defer { server.stop() }
        try Data("mine".utf8).write(to: directory.appendingPathComponent("named.bin"))
        let started = Date()
        let first = try run(["get", server.url("/download?id=7").absoluteString])
        XCTAssertEqual(first.status, 6, first.err)
        XCTAssertLessThan(Date().timeIntervalSince(started), 15, "stopped at the headers, not after the body")
        XCTAssertTrue(first.err.contains("named.bin already exists"), first.err)
        XCTAssertEqual(try Data(contentsOf: directory.appendingPathComponent("named.bin")), Data("mine".utf8))
        let kept = try listing().contains { $0.hasSuffix(".courier-partial") }

        let second = try run(["get", "--force", server.url("/download?id=7").absoluteString])
        XCTAssertEqual(second.status, 0, second.err)
        XCTAssertEqual(try Data(contentsOf: directory.appendingPathComponent("named.bin")), Self.body)
        if kept {
            XCTAssertNotNil(server.requests.last?.header("Range"), "the bytes kept were continued, not fetched again")
        }
        XCTAssertEqual(try listing(), ["named.bin"])
    }

    // MARK: - --max-time

    func testMaxTimeEndsATricklingServerWithExitThreeAndTheRerunContinues() throws {
        let server = try ScriptedServer { request, index in
            guard index == 0 else { return Self.answer(request) }
            var reply = ScriptedServer.Reply.response(
                status: 200, headers: [("Content-Length", "\(Self.body.count)"), ("ETag", "\"g\"")], body: Self.body,
                sendingOnly: 50_000)
            for offset in stride(from: 50_000, to: 60_000, by: 10) {
                reply.steps += [.pause(milliseconds: 100), .send(Self.body.subdata(in: offset..<(offset + 10)))]
            }
            return reply
        }
        defer { server.stop() }
        let started = Date()
        let first = try run(["get", "--max-time", "1.5", "-o", "slow.bin", server.url("/slow.bin").absoluteString])
        XCTAssertEqual(first.status, 3, first.err)
        XCTAssertLessThan(Date().timeIntervalSince(started), 12)
        XCTAssertTrue(first.err.contains("did not finish within --max-time"), first.err)
        XCTAssertTrue(first.err.contains("run the same command again"), first.err)
        XCTAssertEqual(try listing(), [".slow.bin.courier-partial", ".slow.bin.courier-resume"])

        let second = try run(["get", "--max-time", "20", "-o", "slow.bin", server.url("/slow.bin").absoluteString])
        XCTAssertEqual(second.status, 0, second.err)
        XCTAssertEqual(try Data(contentsOf: directory.appendingPathComponent("slow.bin")), Self.body)
        XCTAssertNotNil(server.requests.last?.header("Range"))
    }

    // MARK: - Secret headers

    func testHeadersStayOnTheirOriginUnlessTrustedAndAreNeverWrittenToDisk() throws {
        let target = server.url("/headers", host: "localhost").absoluteString
        let hop = server.url("/redirect-to?url=\(target.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)")
        let plain = try run(["get", "-H", "X-Token: s3cret", "-o", "plain.json", hop.absoluteString])
        XCTAssertEqual(plain.status, 0, plain.err)
        XCTAssertFalse(
            try String(contentsOf: directory.appendingPathComponent("plain.json"), encoding: .utf8).contains("s3cret"),
            "another origin never sees -H headers by default")
        XCTAssertEqual(server.requests.first?.header("X-Token"), "s3cret", "the origin asked for gets them")

        let trusted = try run(["get", "--location-trusted", "-H", "X-Token: s3cret", "-o", "trusted.json", hop.absoluteString])
        XCTAssertEqual(trusted.status, 0, trusted.err)
        XCTAssertTrue(try String(contentsOf: directory.appendingPathComponent("trusted.json"), encoding: .utf8).contains("s3cret"))
    }

    func testAResumeRecordHoldsHeaderNamesButNeverTheirValues() throws {
        let server = try ScriptedServer { _, _ in
            .response(
                status: 200, headers: [("Content-Length", "\(Self.body.count)"), ("ETag", "\"g\"")], body: Self.body,
                sendingOnly: 100_000, ending: .hang)
        }
        defer { server.stop() }
        let result = try run(["get", "--max-time", "1", "-H", "X-Token: s3cret", "-o", "r.bin", server.url("/r.bin").absoluteString])
        XCTAssertEqual(result.status, 3, result.err)
        let record = try String(contentsOf: directory.appendingPathComponent(".r.bin.courier-resume"), encoding: .utf8)
        XCTAssertFalse(record.contains("s3cret"), record)
        XCTAssertTrue(record.contains("X-Token"), "the name, so a rerun knows what to give again")
    }

    // MARK: - Bodies that prove nothing

    func testAMalformedContentLengthIsExitThreeAndSavesNothing() throws {
        let server = try ScriptedServer { _, _ in
            .response(status: 200, headers: [("Content-Length", "0x5"), ("ETag", "\"x\"")], body: Data("hello".utf8))
        }
        defer { server.stop() }
        let result = try run(["get", "-o", "five.txt", server.url("/five.txt").absoluteString])
        XCTAssertEqual(result.status, 3, result.err)
        XCTAssertTrue(result.err.contains("Content-Length"), result.err)
        XCTAssertEqual(try listing(), [])
    }

    func testAnEncodedBodyIsRefusedUnlessAcceptedAndThenWarned() throws {
        let gzip = ScriptedServer.gzip(Self.body)
        let server = try ScriptedServer { _, _ in
            .response(status: 200, headers: [("Content-Encoding", "gzip"), ("Content-Length", "\(gzip.count)")], body: gzip)
        }
        defer { server.stop() }
        let refused = try run(["get", "-o", "z.bin", server.url("/z.bin").absoluteString])
        XCTAssertEqual(refused.status, 5, refused.err)
        XCTAssertTrue(refused.err.contains("gzip-encoded"), refused.err)
        XCTAssertEqual(try listing(), [])

        let accepted = try run(["get", "--accept-unverified", "-q", "-o", "z.bin", server.url("/z.bin").absoluteString])
        XCTAssertEqual(accepted.status, 0, accepted.err)
        XCTAssertTrue(accepted.err.contains("warning:") && accepted.err.contains("unverified"), accepted.err)
        XCTAssertEqual(try Data(contentsOf: directory.appendingPathComponent("z.bin")), Self.body)
    }
}
