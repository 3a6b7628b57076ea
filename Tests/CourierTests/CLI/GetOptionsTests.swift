import XCTest
import Courier
@testable import courier
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `courier get`'s option parsing, exit-code mapping and messages, without running anything.
final class GetOptionsTests: XCTestCase {
    private func parse(_ arguments: [String]) throws -> GetCommand.Options {
        try XCTUnwrap(try GetCommand.Options.parse(arguments))
    }

    private func usageMessage(_ arguments: [String]) -> String? {
        do {
            _ = try GetCommand.Options.parse(arguments)
            return nil
        } catch {
            return error.message
        }
    }

    func testDefaults() throws {
        let options = try parse(["http://bench.invalid/a/b.bin"])
        XCTAssertEqual(options.url.absoluteString, "http://bench.invalid/a/b.bin")
        XCTAssertNil(options.output)
        XCTAssertEqual(options.retries, 3)
        XCTAssertNil(options.expectedSHA256)
        XCTAssertTrue(options.headers.isEmpty)
        XCTAssertFalse(options.quiet)
        XCTAssertFalse(options.force)
    }

    func testEveryOptionInAnyOrderAndBothSpellings() throws {
        let hex = String(repeating: "ab", count: 32)
        let options = try parse([
            "-o", "x.bin", "--retries=7", "https://example.invalid/f", "--sha256", hex.uppercased(), "-H", "A: 1",
            "--header", "B:2", "--header=C:  three  ", "-q", "--force",
        ])
        XCTAssertEqual(options.url.absoluteString, "https://example.invalid/f")
        XCTAssertEqual(options.output, "x.bin")
        XCTAssertEqual(options.retries, 7)
        XCTAssertEqual(options.expectedSHA256, [UInt8](repeating: 0xAB, count: 32))
        XCTAssertEqual(options.headers.map(\.name), ["A", "B", "C"])
        XCTAssertEqual(options.headers.map(\.value), ["1", "2", "three"])
        XCTAssertTrue(options.quiet)
        XCTAssertTrue(options.force)
        XCTAssertEqual(try parse(["--output=y", "--quiet", "http://h/"]).output, "y")
    }

    func testDoubleDashEndsOptions() throws {
        XCTAssertEqual(try parse(["-q", "--", "http://h/-o"]).url.absoluteString, "http://h/-o")
        XCTAssertNotNil(usageMessage(["--", "-q"]), "after --, -q is a (bad) URL")
    }

    func testHelp() throws {
        XCTAssertNil(try GetCommand.Options.parse(["--help"]))
        XCTAssertNil(try GetCommand.Options.parse(["http://h/", "-h"]))
    }

    func testUsageErrors() {
        let cases: [([String], String)] = [
            ([], "needs a URL"),
            (["http://h/a", "http://h/b"], "one URL"),
            (["ftp://h/a"], "not an http"),
            (["http:///nohost"], "not an http"),
            (["http://h/", "--retries", "-1"], "--retries"),
            (["http://h/", "--retries", "1.5"], "--retries"),
            (["http://h/", "--sha256", "abc"], "64 hexadecimal"),
            (["http://h/", "--sha256", String(repeating: "g", count: 64)], "64 hexadecimal"),
            (["http://h/", "-H", "NoColon"], "'Name: value'"),
            (["http://h/", "-H", ": value"], "not a valid header name"),
            (["http://h/", "-H", "Two Words: x"], "not a valid header name"),
            (["http://h/", "-H", "X: a\r\nY: b"], "control characters"),
            (["http://h/", "-H", "X: a\nb"], "control characters"),
            (["http://h/", "-H", "X: a\u{0}"], "control characters"),
            (["http://h/", "-H", "range: bytes=1-"], "not allowed"),
            (["http://h/", "-H", "If-Range: \"x\""], "not allowed"),
            (["http://h/", "--bogus"], "unknown option '--bogus'"),
            (["http://h/", "--bogus=1"], "unknown option '--bogus'"),
            (["http://h/", "--quiet=1"], "--quiet takes no value"),
            (["http://h/", "-o"], "-o needs a value"),
            (["http://h/", "-o", ""], "-o needs a file name"),
            (["http://h/", "-o", "dir/"], "not a directory"),
            (["http://h/", "-o", "a", "-o", "b"], "more than once"),
        ]
        for (arguments, expected) in cases {
            let message = usageMessage(arguments)
            XCTAssertTrue(message?.contains(expected) ?? false, "\(arguments): \(message ?? "accepted")")
        }
    }

    func testTabsAreAllowedInHeaderValues() throws {
        XCTAssertEqual(try GetCommand.Options.header("X-A:\tone\ttwo").value, "one\ttwo")
    }

    func testExitCodesPerErrorClass() {
        func code(_ code: CourierError.Code) -> Int32 { ExitCode.forError(CourierError(code: code, message: "m")) }
        for network in [CourierError.Code.network, .timedOut, .invalidRequest, .sessionInvalidated] {
            XCTAssertEqual(code(network), 3, "\(network)")
        }
        XCTAssertEqual(code(.unacceptableStatusCode), 4)
        XCTAssertEqual(code(.unacceptableContentType), 4)
        XCTAssertEqual(code(.integrityFailed), 5)
        for file in [CourierError.Code.fileSystem, .destinationFailed, .invalidResumeData] {
            XCTAssertEqual(code(file), 6, "\(file)")
        }
        XCTAssertEqual(code(.cancelled), 1)
        XCTAssertEqual(code(.responseTooLarge), 1)
        XCTAssertEqual(ExitCode.forSignal(SIGINT), 130)
        XCTAssertEqual(ExitCode.forSignal(SIGTERM), 143)
    }

    func testHTTPErrorLineNamesTheStatus() throws {
        let url = try XCTUnwrap(URL(string: "http://user:secret@127.0.0.1:9/files/x"))
        let response = HTTPURLResponse(url: url, statusCode: 404, httpVersion: "HTTP/1.1", headerFields: [:])
        let error = CourierError(code: .unacceptableStatusCode, message: "m", url: url, response: response)
        XCTAssertEqual(GetCommand.errorLine(error, requestURL: url), "HTTP 404 Not Found from http://127.0.0.1:9/files/x")
        let odd = CourierError(
            code: .unacceptableStatusCode, message: "m", url: url,
            response: HTTPURLResponse(url: url, statusCode: 599, httpVersion: "HTTP/1.1", headerFields: [:]))
        XCTAssertEqual(GetCommand.errorLine(odd, requestURL: url), "HTTP 599 from http://127.0.0.1:9/files/x")
    }

    func testOtherErrorLines() throws {
        let url = try XCTUnwrap(URL(string: "http://127.0.0.1:9/x"))
        XCTAssertEqual(
            GetCommand.errorLine(CourierError(code: .network, message: "Could not connect"), requestURL: url),
            "network error: Could not connect (http://127.0.0.1:9/x)")
        XCTAssertEqual(
            GetCommand.errorLine(CourierError(code: .timedOut, message: "too slow"), requestURL: url),
            "too slow (http://127.0.0.1:9/x)")
        XCTAssertEqual(GetCommand.oneLine("a\nb\r\nc"), "a b  c")
    }

    func testInterruptedLine() {
        let partial = URL(fileURLWithPath: "/tmp/.x.courier-partial")
        let resume = ResumeData(
            url: URL(string: "http://h/x")!, partialFile: partial, bytesOnDisk: 1234, validator: "\"v\"", totalLength: 5000)
        XCTAssertEqual(
            GetCommand.interruptedLine(keeping: resume),
            "courier: interrupted; run the same command again to resume (1234 bytes kept)")
        XCTAssertTrue(GetCommand.interruptedLine(keeping: nil).hasPrefix("courier: interrupted; nothing was kept"))
    }

    func testPartialFileIsNamedAfterTheURL() throws {
        let url = try XCTUnwrap(URL(string: "http://bench.invalid/files/a.bin"))
        let digest = SHA256.hexString(SHA256.hash(Data(url.absoluteString.utf8)))
        XCTAssertEqual(GetCommand.partialFileName(for: url), ".courier-\(digest.prefix(16)).courier-partial")
        XCTAssertNotEqual(
            GetCommand.partialFileName(for: url), GetCommand.partialFileName(for: try XCTUnwrap(URL(string: "http://h/b"))))
    }

    func testOutputPathsAreResolvedAgainstTheWorkingDirectory() {
        let cwd = URL(fileURLWithPath: "/work/dir", isDirectory: true)
        XCTAssertEqual(GetCommand.outputURL("a.bin", in: cwd).path, "/work/dir/a.bin")
        XCTAssertEqual(GetCommand.outputURL("sub/../b.bin", in: cwd).path, "/work/dir/b.bin")
        XCTAssertEqual(GetCommand.outputURL("/abs/c.bin", in: cwd).path, "/abs/c.bin")
    }
}
