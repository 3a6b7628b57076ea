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
            (["http://h/", "--retry", "3"], "unknown option '--retry' for get; did you mean --retries?"),
            (["http://h/", "--quite"], "did you mean --quiet?"),
            (["http://h/", "--max_time", "3"], "did you mean --max-time?"),
            (["http://h/", "--output-document", "x"], "did you mean --output?"),
            (["http://h/", "--frobnicate"], "unknown option '--frobnicate' for get"),
            (["http://h/", "--connect-timeout", "5"], "--connect-timeout is not available"),
            (["http://h/", "--connect-timeout=5"], "--timeout bounds it"),
            (["http://h/", "-C", "100"], "-C takes only '-'"),
            (["http://h/", "--continue-at=100"], "--continue-at takes only '-'"),
            (
                ["-O", "file.bin", "http://h/"],
                "-O takes no file name: it saves under the remote name, as curl's -O does (the default); to name the file, use -o file.bin"
            ),
            (["http://h/", "-O", "-"], "to write to stdout, use -o -"),
            (["http://h/", "-O", "-o", "x"], "contradict"),
            (["http://h/", "--timeout", "0"], "--timeout takes a number of seconds above 0"),
            (["http://h/", "-fsX"], "unknown option '-fsX'"),
            (["http://h/", "-o"], "-o needs a value"),
            (["http://h/", "--split", "0"], "--split takes a number of connections from 1 to 64, auto, off, or auto:N"),
            (["http://h/", "--split", "65"], "not '65'"),
            (["http://h/", "--split=auto:0"], "not 'auto:0'"),
            (["http://h/", "--split", "fast"], "not 'fast'"),
            (["http://h/", "--split", ""], "--split takes"),
            (["http://h/", "--split"], "--split needs a value"),
            (["http://h/", "--split", "4", "-o", "-"], "--split cannot stream to stdout"),
            (["http://h/", "--splt", "4"], "did you mean --split?"),
        ]
        for (arguments, expected) in cases {
            let message = usageMessage(arguments)
            XCTAssertTrue(message?.contains(expected) ?? false, "\(arguments): \(message ?? "accepted")")
        }
    }

    func testSplitTakesACountAutoOrAutoWithAMaximumAndIsOffByDefault() throws {
        XCTAssertEqual(try parse(["http://h/f"]).split, .off)
        XCTAssertEqual(try parse(["--split", "4", "http://h/f"]).split, .connections(4))
        XCTAssertEqual(try parse(["http://h/f", "--split=1"]).split, .off, "one connection is no split")
        XCTAssertEqual(try parse(["http://h/f", "--split", "auto"]).split, .automatic)
        XCTAssertEqual(try parse(["http://h/f", "--split", "auto:8"]).split, .automatic(upTo: 8))
        XCTAssertEqual(try parse(["http://h/f", "--split", "64"]).split, .connections(64))
        // -s stays curl's --silent: it takes no value, and the URL after it is still the URL
        let silent = try parse(["-s", "http://h/f"])
        XCTAssertTrue(silent.quiet)
        XCTAssertEqual(silent.split, .off)
        // -o - --whole stages the body in a file, where ranges land in place: allowed
        XCTAssertEqual(try parse(["http://h/f", "--split", "4", "-o", "-", "--whole"]).split, .connections(4))
        // The manager lets one download open what its split asks, and never lowers its cap
        XCTAssertEqual(GetCommand.runningTasksPerHost(4, for: .off), 4)
        XCTAssertEqual(GetCommand.runningTasksPerHost(4, for: .connections(8)), 8)
        XCTAssertEqual(GetCommand.runningTasksPerHost(4, for: .automatic), 16)
        XCTAssertEqual(GetCommand.runningTasksPerHost(4, for: .connections(2)), 4)
        XCTAssertNil(GetCommand.runningTasksPerHost(nil, for: .connections(8)), "no cap stays no cap")
        XCTAssertEqual(GetCommand.runningTasksPerHost(4, for: .connections(8), perHost: 6), 6, "a queue: its per-host cap")
    }

    func testCurlAndWgetSpellingsOfWhatCourierDoesAnywayAreAccepted() throws {
        let plain = try parse(["http://h/f"])
        for extra in [
            ["-O"], ["--remote-name"], ["-L"], ["--location"], ["-f"], ["--fail"], ["-c"], ["--continue"], ["-C", "-"],
            ["--continue-at=-"], ["-S"], ["--show-error"], ["-fLO"],
        ] {
            let options = try parse(extra + ["http://h/f"])
            XCTAssertEqual(options.url, plain.url, "\(extra)")
            XCTAssertNil(options.output, "\(extra)")
            XCTAssertFalse(options.quiet, "\(extra): changes nothing")
        }
        for quiet in [["-s"], ["--silent"], ["-q"], ["-fsSL"], ["-sS"]] {
            XCTAssertTrue(try parse(quiet + ["http://h/f"]).quiet, "\(quiet)")
        }
        XCTAssertNil(try GetCommand.Options.parse(["-fsSLh"]), "-h in a bundle asks for help")
    }

    func testDashOAloneMeansStandardOutput() throws {
        let options = try parse(["-o", "-", "http://h/f"])
        XCTAssertEqual(options.output, "-")
        XCTAssertTrue(options.writesToStandardOutput)
        XCTAssertTrue(options.streamsToStandardOutput, "streamed unless --whole")
        let whole = try parse(["-o", "-", "--whole", "http://h/f"])
        XCTAssertTrue(whole.writesToStandardOutput)
        XCTAssertFalse(whole.streamsToStandardOutput)
        XCTAssertEqual(
            usageMessage(["-o", "f", "--whole", "http://h/f"]),
            "--whole is for -o - (a file is always written whole: it appears only once complete)")
        XCTAssertFalse(try parse(["-o", "./-", "http://h/f"]).writesToStandardOutput, "./- is a file named -")
        XCTAssertEqual(try parse(["--timeout", "2.5", "http://h/f"]).timeout, 2.5)
    }

    func testSuggestionsPickTheClosestKnownWord() {
        let names = GetCommand.Options.longNames
        XCTAssertEqual(Suggestion.closest(to: "--retry", among: names), "--retries")
        XCTAssertEqual(Suggestion.closest(to: "--tries", among: names), "--retries", "wget's name")
        XCTAssertEqual(Suggestion.closest(to: "--out", among: names), "--output")
        XCTAssertEqual(Suggestion.closest(to: "--headers", among: names), "--header")
        XCTAssertEqual(Suggestion.closest(to: "--sha", among: names), "--sha256")
        XCTAssertEqual(Suggestion.closest(to: "--locaton", among: names), "--location")
        XCTAssertEqual(Suggestion.closest(to: "-output", among: names), "--output")
        XCTAssertNil(Suggestion.closest(to: "--bogus", among: names))
        XCTAssertNil(Suggestion.closest(to: "--x", among: names))
        XCTAssertEqual(Suggestion.closest(to: "gte", among: CourierCommand.commands), "get")
        XCTAssertEqual(Suggestion.closest(to: "--verison", among: CourierCommand.commands), "--version")
        XCTAssertEqual(Suggestion.distance("quite", "quiet"), 1)
        XCTAssertEqual(Suggestion.distance("retry", "retries"), 3)
        XCTAssertEqual(Suggestion.distance("", "abc"), 3)
    }

    func testRetryLinesSayWhatFailedWhereWhenAndHowManyAreLeft() throws {
        let url = try XCTUnwrap(URL(string: "http://h/f"))
        let dropped = CourierError(code: .network, message: "transfer closed with 5 bytes remaining to read", url: url)
        XCTAssertEqual(
            GetCommand.retryLine(
                TaskRetryEvent(
                    error: dropped, retry: 1, retryLimit: 3, delay: .milliseconds(250), bytesReceived: 12_897_485,
                    continuesFrom: 12_897_485)),
            "courier: network error: transfer closed with 5 bytes remaining to read (12.3 MiB received); "
                + "retrying in 0.2 s, continuing from there (retry 1 of 3)")
        XCTAssertEqual(
            GetCommand.retryLine(
                TaskRetryEvent(
                    error: dropped, retry: 2, retryLimit: 3, delay: .seconds(12), bytesReceived: 2048, continuesFrom: 0)),
            "courier: network error: transfer closed with 5 bytes remaining to read (2.0 KiB received); "
                + "retrying in 12 s, starting over (retry 2 of 3)")
        let busy = CourierError(
            code: .unacceptableStatusCode, message: "m", url: url,
            response: HTTPURLResponse(url: url, statusCode: 503, httpVersion: "HTTP/1.1", headerFields: ["Retry-After": "5"]))
        XCTAssertEqual(
            GetCommand.retryLine(
                TaskRetryEvent(
                    error: busy, retry: 1, retryLimit: nil, delay: .seconds(5), bytesReceived: 0, continuesFrom: 0)),
            "courier: HTTP 503 Service Unavailable; retrying in 5 s (retry 1)")
    }

    func testAStatusNotRetriedForItsLongRetryAfterSaysWhatTheServerAsked() throws {
        let url = try XCTUnwrap(URL(string: "http://h/f"))
        let get = GetCommand.retryPolicy(retries: 3)
        func error(_ status: Int, _ retryAfter: String) -> CourierError {
            CourierError(
                code: .unacceptableStatusCode, message: "m", url: url,
                response: HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: ["Retry-After": retryAfter]))
        }
        XCTAssertEqual(
            GetCommand.errorLine(error(503, "999999"), requestURL: url, retryPolicy: get),
            "HTTP 503 Service Unavailable from http://h/f: the server asked to be retried after 999999 s (11.6 days), "
                + "and courier waits at most 120 s, so it stopped instead of retrying")
        XCTAssertEqual(
            GetCommand.errorLine(error(503, "30"), requestURL: url, retryPolicy: get), "HTTP 503 Service Unavailable from http://h/f",
            "within the cap: retried, and these were the last")
        XCTAssertEqual(
            GetCommand.errorLine(error(404, "999999"), requestURL: url, retryPolicy: get), "HTTP 404 Not Found from http://h/f",
            "not a retryable status")

        // The policy in force words it, never a default one (issue 31): its own cap,
        var patient = get
        patient.maximumRetryAfter = .seconds(300)
        XCTAssertEqual(
            GetCommand.errorLine(error(503, "200"), requestURL: url, retryPolicy: patient), "HTTP 503 Service Unavailable from http://h/f",
            "within this policy's cap")
        XCTAssertTrue(
            GetCommand.errorLine(error(503, "999999"), requestURL: url, retryPolicy: patient).hasSuffix(
                "courier waits at most \(ProgressFormat.delay(.seconds(300))), so it stopped instead of retrying"))
        // nothing when it retries nothing (--retries 0), or when no status is retried at all (courier events)
        XCTAssertEqual(
            GetCommand.errorLine(error(503, "999999"), requestURL: url, retryPolicy: GetCommand.retryPolicy(retries: 0)),
            "HTTP 503 Service Unavailable from http://h/f", "--retries 0: the Retry-After was not why it stopped")
        XCTAssertEqual(
            GetCommand.errorLine(error(503, "999999"), requestURL: url, retryPolicy: nil), "HTTP 503 Service Unavailable from http://h/f")
    }

    func testFailuresSayHowMuchIsKeptInBinaryUnits() {
        let resume = ResumeData(
            url: URL(string: "http://h/x")!, partialFile: URL(fileURLWithPath: "/tmp/.x.courier-partial"),
            bytesOnDisk: 12_897_485, validator: "\"v\"", totalLength: nil)
        XCTAssertEqual(
            GetCommand.keptSuffix(resume, toStandardOutput: false), "; 12.3 MiB kept — run the same command again to resume")
        XCTAssertEqual(GetCommand.keptSuffix(nil, toStandardOutput: false), "")
        XCTAssertEqual(GetCommand.keptSuffix(resume, toStandardOutput: true), "; nothing was written to stdout")
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
        XCTAssertEqual(
            GetCommand.errorLine(error, requestURL: url, retryPolicy: nil), "HTTP 404 Not Found from http://***@127.0.0.1:9/files/x")
        let odd = CourierError(
            code: .unacceptableStatusCode, message: "m", url: url,
            response: HTTPURLResponse(url: url, statusCode: 599, httpVersion: "HTTP/1.1", headerFields: [:]))
        XCTAssertEqual(GetCommand.errorLine(odd, requestURL: url, retryPolicy: nil), "HTTP 599 from http://***@127.0.0.1:9/files/x")
    }

    func testOtherErrorLines() throws {
        let url = try XCTUnwrap(URL(string: "http://127.0.0.1:9/x"))
        XCTAssertEqual(
            GetCommand.errorLine(CourierError(code: .network, message: "Could not connect"), requestURL: url, retryPolicy: nil),
            "network error: Could not connect (http://127.0.0.1:9/x)")
        XCTAssertEqual(
            GetCommand.errorLine(CourierError(code: .timedOut, message: "too slow"), requestURL: url, retryPolicy: nil),
            "timed out: too slow (http://127.0.0.1:9/x)")
        XCTAssertEqual(GetCommand.oneLine("a\nb\r\nc"), "a b  c")
    }

    func testInterruptedLine() {
        let partial = URL(fileURLWithPath: "/tmp/.x.courier-partial")
        let resume = ResumeData(
            url: URL(string: "http://h/x")!, partialFile: partial, bytesOnDisk: 1234, validator: "\"v\"", totalLength: 5000)
        XCTAssertEqual(
            GetCommand.interruptedLine(keeping: resume), "courier: interrupted; 1.2 KiB kept — run the same command again to resume")
        XCTAssertTrue(GetCommand.interruptedLine(keeping: nil).hasPrefix("courier: interrupted; nothing was kept"))
        XCTAssertEqual(
            GetCommand.interruptedLine(keeping: resume, toStandardOutput: true),
            "courier: interrupted; nothing was written to stdout (a download to stdout is not kept: the next run starts over)")
    }

    func testOutputPathsAreResolvedAgainstTheWorkingDirectory() {
        let cwd = URL(fileURLWithPath: "/work/dir", isDirectory: true)
        XCTAssertEqual(GetCommand.outputURL("a.bin", in: cwd).path, "/work/dir/a.bin")
        XCTAssertEqual(GetCommand.outputURL("sub/../b.bin", in: cwd).path, "/work/dir/b.bin")
        XCTAssertEqual(GetCommand.outputURL("/abs/c.bin", in: cwd).path, "/abs/c.bin")
    }
}
