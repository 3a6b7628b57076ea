import XCTest
import Courier
import CourierTestServer
@testable import courier
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Every URL and header courier prints goes through one redaction: the error lines of `get`,
/// `get -o -` and `events`, `get -i`'s failure summary, `-v`, usage errors and `doctor` (text
/// and `--json`) never show a URL's user info or a secret query parameter, and `--redact-header`
/// and `--redact-param` add names to what is masked.
final class SecretsInMessagesTests: CommandLineTestCase {
    /// Distinctive values, so that "not in the output" cannot pass by accident.
    static let secrets = ["PASSW0RD", "T0KEN-VALUE", "S1GNATURE-VALUE", "HEADER-VALUE", "SESSION-VALUE"]

    private func assertNoSecret(_ text: String, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        for secret in Self.secrets {
            XCTAssertFalse(text.contains(secret), "\(what) shows \(secret):\n\(text)", file: file, line: line)
        }
    }

    /// The issue's repro, with user info: a presigned-looking URL that answers `status`.
    private func secretURL(_ path: String) -> String {
        "http://u:PASSW0RD@127.0.0.1:\(server.port)\(path)?token=T0KEN-VALUE&X-Amz-Signature=S1GNATURE-VALUE&part=2"
    }

    private var masked404: String {
        "HTTP 404 Not Found from http://***@127.0.0.1:\(server.port)/status/404?token=***&X-Amz-Signature=***&part=2"
    }

    // MARK: - get, get -o -, events

    func testGetsErrorLineMasksUserInfoAndQuerySecrets() throws {
        // Given a URL with user info and secret query parameters that answers 404
        // When courier get fetches it to a file
        let result = try run(["get", "--retries", "0", "-o", "x", secretURL("/status/404")])
        // Then the error line names the URL, masked
        XCTAssertEqual(result.status, ExitCode.http, result.err)
        XCTAssertEqual(errorLines(result.err), ["courier: \(masked404)"])
        assertNoSecret(result.err, "stderr")
    }

    func testGetToStandardOutputMasksItsErrorLineStreamedOrWhole() throws {
        for extra in [[], ["--whole"]] {
            // When the body goes to stdout, as it arrives or whole
            let result = try run(["get", "--retries", "0", "-o", "-"] + extra + [secretURL("/status/404")])
            // Then the error line is masked the same way
            XCTAssertEqual(result.status, ExitCode.http, "\(extra): \(result.err)")
            XCTAssertEqual(errorLines(result.err), ["courier: \(masked404); nothing was written to stdout"], "\(extra)")
            assertNoSecret(result.err, "stderr with \(extra)")
        }
    }

    func testEventsErrorLineMasksUserInfoAndQuerySecrets() throws {
        let result = try run(["events", "--max-reconnects", "0", secretURL("/status/404")])
        XCTAssertEqual(result.status, ExitCode.http, result.err)
        XCTAssertEqual(errorLines(result.err), ["courier: \(masked404)"])
        assertNoSecret(result.err, "stderr")
    }

    func testARefusedRedirectsErrorLineMasksItsTarget() throws {
        // Given a redirect to a non-http URL with secrets of its own: the refusal names it
        let location = "ftp://u:PASSW0RD@files.example/f?token=T0KEN-VALUE"
        let encoded = try XCTUnwrap(location.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
        let result = try run(["get", "-o", "x", server.url("/redirect-to?url=\(encoded)").absoluteString])
        XCTAssertNotEqual(result.status, ExitCode.success, result.err)
        XCTAssertTrue(result.err.contains("ftp://***@files.example/f?token=***"), result.err)
        // The requested URL holds the target percent-encoded in its `url=` parameter, which is
        // not a secret name: only the target's clear text must not appear.
        XCTAssertFalse(result.err.contains("u:PASSW0RD@"), result.err)
        XCTAssertFalse(result.err.contains("token=T0KEN-VALUE"), result.err)
    }

    // MARK: - get -i

    func testGetInputFilesFailureSummaryMasksEveryURL() throws {
        // Given a list of two presigned-looking URLs that fail
        let input = logs.appendingPathComponent("input.txt")
        try Data(
            """
            \(secretURL("/status/404")) out=a
            \(secretURL("/status/403")) out=b

            """.utf8
        ).write(to: input)
        // When courier get -i runs it
        let result = try run(["get", "-i", input.path, "--retries", "0"])
        // Then the summary lists both failures with their URLs masked
        XCTAssertEqual(result.status, ExitCode.http, result.err)
        XCTAssertTrue(result.err.contains("2 of 2 downloads failed"), result.err)
        XCTAssertTrue(
            result.err.contains(
                "line 1: a: HTTP 404 Not Found (http://***@127.0.0.1:\(server.port)/status/404?token=***&X-Amz-Signature=***&part=2)"),
            result.err)
        assertNoSecret(result.err, "stderr")
    }

    // MARK: - -v and the options that add names

    func testVerboseMasksTheWidenedDefaultsAndTheNamesGivenOnTheCommandLine() throws {
        // Given headers among the widened defaults, one the user names, and a parameter the user names
        let url = server.url("/get?session=SESSION-VALUE&token=T0KEN-VALUE&page=2").absoluteString
        // When courier get -v fetches it
        let result = try run([
            "get", "-v", "-o", "x", "-H", "X-Api-Key: HEADER-VALUE", "-H", "X-Amz-Security-Token: HEADER-VALUE",
            "-H", "X-Custom-Secret: HEADER-VALUE", "--redact-header", "x-custom-secret", "--redact-param", "Session", url,
        ])
        // Then every one of them is masked, in the heads and the timeline alike
        XCTAssertEqual(result.status, ExitCode.success, result.err)
        XCTAssertTrue(result.err.contains("> X-Api-Key: ***"), result.err)
        XCTAssertTrue(result.err.contains("> X-Amz-Security-Token: ***"), result.err)
        XCTAssertTrue(result.err.contains("> X-Custom-Secret: ***"), result.err)
        XCTAssertTrue(result.err.contains("/get?session=***&token=***&page=2"), result.err)
        assertNoSecret(result.err, "stderr")
    }

    func testRedactParamAppliesToErrorLinesToo() throws {
        let url = server.url("/status/404?session=SESSION-VALUE&page=2").absoluteString
        let plain = try run(["get", "--retries", "0", "-o", "x", url])
        XCTAssertTrue(plain.err.contains("SESSION-VALUE"), "not a default name: \(plain.err)")
        let masked = try run(["get", "--retries", "0", "-o", "y", "--redact-param", "session", url])
        XCTAssertTrue(masked.err.contains("/status/404?session=***&page=2"), masked.err)
        assertNoSecret(masked.err, "stderr")
        let events = try run(["events", "--max-reconnects", "0", "--redact-param=session", url])
        XCTAssertTrue(events.err.contains("/status/404?session=***&page=2"), events.err)
        assertNoSecret(events.err, "events' stderr")
    }

    func testTheOptionsParseIntoOneRedaction() throws {
        let options = try XCTUnwrap(
            try GetCommand.Options.parse([
                "http://h/", "--redact-header", "X-One", "--redact-header=x-two", "--redact-param", "Sess",
            ]))
        XCTAssertEqual(options.redaction, Redaction.default.adding(headers: ["x-one", "X-Two"]).adding(queryParameters: ["sess"]))
        XCTAssertEqual(try XCTUnwrap(try GetCommand.Options.parse(["http://h/"])).redaction, .default)
        let events = try XCTUnwrap(try EventsCommand.Options.parse(["http://h/", "--redact-param", "sess"]))
        XCTAssertEqual(events.redaction, Redaction.default.adding(queryParameters: ["sess"]))
        let doctor = try XCTUnwrap(try DoctorCommand.parse(["--redact-param", "sess", "http://h/", "--redact-header=X-A"]))
        XCTAssertEqual(doctor.redaction, Redaction.default.adding(queryParameters: ["sess"]).adding(headers: ["x-a"]))
        XCTAssertEqual(doctor.url, URL(string: "http://h/"))
        guard case .queue(let queue) = try GetCommand.Invocation.parse(["-i", "list", "--redact-param", "sess"]) else {
            return XCTFail("not a queue")
        }
        XCTAssertEqual(queue.shared.redaction, Redaction.default.adding(queryParameters: ["sess"]))

        XCTAssertThrowsError(try GetCommand.Options.parse(["http://h/", "--redact-header", "Bad Name"]))
        XCTAssertThrowsError(try GetCommand.Options.parse(["http://h/", "--redact-param", ""]))
        XCTAssertThrowsError(try DoctorCommand.parse(["--redact-param"]))
    }

    func testAUsageErrorQuotingItsURLMasksIt() throws {
        let result = try run(["get", "ftp://u:PASSW0RD@h/f?token=T0KEN-VALUE"])
        XCTAssertEqual(result.status, ExitCode.usage, result.err)
        XCTAssertTrue(result.err.contains("'ftp://***@h/f?token=***' is not an http:// or https:// URL"), result.err)
        assertNoSecret(result.err, "stderr")
    }

    // MARK: - doctor

    func testDoctorMasksItsURLAndTheProxyInTextAndJSON() throws {
        // Given a URL whose password holds an `@`, and a proxy URL with a password and a secret query
        let url = "http://u:P@W@host.example/x?token=T0KEN-VALUE&page=2"
        let environment = [
            "http_proxy": "http://proxyuser:PASSW0RD@x@proxy.example:3128/?X-Amz-Signature=S1GNATURE-VALUE",
            "COLUMNS": "500",
        ]
        // When courier doctor reports on it, as text and as JSON
        let text = try run(["doctor", url], environment: environment)
        let json = try run(["doctor", "--json", url], environment: environment)
        // Then the URL and the proxy are masked whole in both
        XCTAssertEqual(text.status, ExitCode.success, text.err)
        XCTAssertTrue(
            text.out.contains(
                "http://***@host.example/x?token=***&page=2 → http://***@proxy.example:3128/?X-Amz-Signature=*** (from http_proxy)"),
            text.out)
        XCTAssertFalse(text.out.contains("W@host"), "no piece of the password: \(text.out)")
        XCTAssertFalse(text.out.contains("x@proxy"), "no piece of the password: \(text.out)")
        assertNoSecret(text.out + text.err, "doctor")
        XCTAssertEqual(json.status, ExitCode.success, json.err)
        let report = try JSONDecoder().decode(PlatformReport.self, from: Data(json.out.utf8))
        XCTAssertEqual(report.proxy.effective?.url, "http://***@host.example/x?token=***&page=2")
        XCTAssertEqual(report.proxy.effective?.proxy, "http://***@proxy.example:3128/?X-Amz-Signature=***")
        XCTAssertEqual(
            report.proxy.variables.first { $0.name == "http_proxy" }?.value, "http://***@proxy.example:3128/?X-Amz-Signature=***")
        assertNoSecret(json.out + json.err, "doctor --json")
        XCTAssertFalse(json.out.contains("W@host"), json.out)
    }

    func testDoctorRedactParamMasksMoreNames() throws {
        let url = "https://h.example/x?session=SESSION-VALUE"
        let result = try run(["doctor", "--json", "--redact-param", "session", url])
        let report = try JSONDecoder().decode(PlatformReport.self, from: Data(result.out.utf8))
        XCTAssertEqual(report.proxy.effective?.url, "https://h.example/x?session=***")
    }

    func testDoctorPrintsAControlCharacterInAValueWithoutStartingALine() throws {
        // Given a TMPDIR that holds a line break and a forged problem line
        let forged = logs.appendingPathComponent("missing").path + "\nproblem: forged"
        // When courier doctor prints its report
        let result = try run(["doctor"], environment: ["TMPDIR": forged, "COLUMNS": "500"])
        // Then the real problem is reported, on one line, and no line of the value's own appears
        XCTAssertEqual(result.status, ExitCode.failure, result.out)
        let lines = result.out.split(separator: "\n", omittingEmptySubsequences: false)
        XCTAssertFalse(lines.contains { $0.hasPrefix("problem:") }, result.out)
        let problems = lines.filter { $0.hasPrefix("  problem:") }
        XCTAssertEqual(problems.count, 1, result.out)
        XCTAssertTrue(problems.first?.contains("missing?problem: forged is not writable") ?? false, result.out)
        XCTAssertTrue(result.out.contains("missing?problem: forged (from TMPDIR)"), result.out)
    }
}
