import XCTest
import Courier
@testable import courier
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `courier doctor`: the platform report on stdout, as text or JSON, and its exit status.
final class DoctorCommandTests: CommandLineTestCase {
    func testAHealthyMachineExitsZeroWithEverySection() throws {
        let result = try run(["doctor"])
        XCTAssertEqual(result.status, ExitCode.success, result.out + result.err)
        XCTAssertEqual(result.err, "")
        for title in [
            "Toolchain", "libcurl (loaded by FoundationNetworking)", "CA certificates", "Proxy (libcurl's environment rules)",
            "Temporary directory", "Known FoundationNetworking traps (Docs/Platform.md)", "Problems",
        ] {
            XCTAssertTrue(result.out.contains("\n\(title)\n") || result.out.hasPrefix(title + "\n"), title)
        }
        XCTAssertTrue(result.out.contains("  courier "), result.out)
        XCTAssertTrue(result.out.contains("  §7.1 "), result.out)
        // The kit's fixes that have no trap of their own: the header diet and the proxy's CONNECT answer.
        XCTAssertTrue(result.out.contains("  §6.18 "), result.out)
        XCTAssertTrue(result.out.contains("  §6.19                 active"), result.out)
        XCTAssertTrue(result.out.contains("  CONNECT_ONLY          yes (Courier's wss://"), result.out)
        XCTAssertTrue(result.out.contains("nothing a download needs is broken"), result.out)
    }

    func testJSONIsTheCodableReport() throws {
        let result = try run(["doctor", "--json", "https://example.com/file"])
        XCTAssertEqual(result.status, ExitCode.success, result.err)
        let report = try JSONDecoder().decode(PlatformReport.self, from: Data(result.out.utf8))
        XCTAssertEqual(report.courierVersion, CourierInfo.version)
        XCTAssertNotNil(report.libcurl)
        XCTAssertEqual(report.proxy.effective?.url, "https://example.com/file")
        XCTAssertEqual(report.problems, [])
    }

    /// TMPDIR naming a regular file: no file can be created "in" it, even as root.
    func testATemporaryDirectoryThatIsAFileFailsWithTheProblemNamed() throws {
        let file = logs.appendingPathComponent("not-a-directory")
        try Data("x".utf8).write(to: file)
        let result = try run(["doctor"], environment: ["TMPDIR": file.path])
        XCTAssertEqual(result.status, ExitCode.failure, result.out)
        let problem = try XCTUnwrap(result.out.split(separator: "\n").first { $0.contains("problem:") }, result.out)
        XCTAssertTrue(problem.contains("temporary directory"), String(problem))
        XCTAssertTrue(result.out.contains(file.path), result.out)
        XCTAssertTrue(result.out.contains("(from TMPDIR)"), result.out)

        let json = try run(["doctor", "--json"], environment: ["TMPDIR": file.path])
        XCTAssertEqual(json.status, ExitCode.failure)
        let report = try JSONDecoder().decode(PlatformReport.self, from: Data(json.out.utf8))
        XCTAssertEqual(report.problems.map(\.kind), [.temporaryDirectoryNotWritable])
    }

    func testTheProxyEnvironmentAndTheProxyForTheURLAreShown() throws {
        let result = try run(
            ["doctor", "https://downloads.example.com/a.iso"],
            environment: [
                "https_proxy": "http://user:secret@proxy.example:3128", "HTTP_PROXY": "http://other:8080",
                "no_proxy": "localhost,.internal", "COLUMNS": "500",
            ])  // no wrapping inside the lines checked
        XCTAssertEqual(result.status, ExitCode.success, result.err)
        XCTAssertFalse(result.out.contains("secret"), "passwords are masked")
        XCTAssertTrue(result.out.contains("http://***@proxy.example:3128 (used for https URLs)"), result.out)
        XCTAssertTrue(result.out.contains("HTTP_PROXY"), result.out)
        XCTAssertTrue(result.out.contains("ignored: libcurl reads only lower-case http_proxy"), result.out)
        XCTAssertTrue(
            result.out.contains("https://downloads.example.com/a.iso → http://***@proxy.example:3128 (from https_proxy)"),
            result.out)

        let bypassed = try run(
            ["doctor", "https://build.internal/x"], environment: ["https_proxy": "http://p:1", "no_proxy": ".internal", "COLUMNS": "500"])
        XCTAssertTrue(bypassed.out.contains("https://build.internal/x → direct (no_proxy entry \".internal\")"), bypassed.out)
    }

    func testUsageMistakes() throws {
        let unknown = try run(["doctor", "--jsn"])
        XCTAssertEqual(unknown.status, ExitCode.usage)
        XCTAssertTrue(unknown.err.contains("unknown option '--jsn' for doctor; did you mean --json?"), unknown.err)
        XCTAssertTrue(unknown.err.contains("courier doctor --help"), unknown.err)
        XCTAssertEqual(try run(["doctor", "not a url"]).status, ExitCode.usage)
        XCTAssertEqual(try run(["doctor", "http://a/", "http://b/"]).status, ExitCode.usage)
        let help = try run(["doctor", "--help"])
        XCTAssertEqual(help.status, ExitCode.success)
        XCTAssertTrue(help.out.hasPrefix("usage: courier doctor"), help.out)
        XCTAssertTrue(try run(["docter"]).err.contains("did you mean 'doctor'?"))
    }
}
