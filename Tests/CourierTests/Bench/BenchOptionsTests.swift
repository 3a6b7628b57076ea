import XCTest
@testable import courier_bench

/// `courier-bench`'s option parsing: defaults, every option, and the usage errors.
final class BenchOptionsTests: XCTestCase {
    private func parse(_ arguments: [String]) throws -> BenchOptions {
        try XCTUnwrap(try BenchOptions.parse(arguments))
    }

    private func usageMessage(_ arguments: [String]) -> String? {
        do {
            _ = try BenchOptions.parse(arguments)
            return nil
        } catch {
            return error.message
        }
    }

    func testSmallDefaults() throws {
        let options = try parse(["small", "--url", "http://bench.invalid/bytes/1024"])
        XCTAssertEqual(options.workload, .small)
        XCTAssertEqual(options.url.absoluteString, "http://bench.invalid/bytes/1024")
        XCTAssertEqual(options.client, .courier)
        XCTAssertEqual(options.requests, 5000)
        XCTAssertEqual(options.concurrency, 1)
        XCTAssertEqual(options.warmup, 200)
        XCTAssertNil(options.maxConnections)
        XCTAssertNil(options.expectedBytes)
        XCTAssertEqual(options.timeout, 60)
        XCTAssertNil(options.output)
        XCTAssertEqual(options.configuration.map { "\($0.key):\($0.value)" }, ["max_conns:default", "timeout:60", "warmup:200"])
    }

    func testEverySmallOptionInAnyOrderAndBothSpellings() throws {
        let options = try parse([
            "small", "--concurrency", "8", "--url=https://example.invalid/x", "--requests", "300", "--warmup=0",
            "--max-conns", "2", "--expect-bytes", "1024", "--timeout", "2.5", "--client", "urlsession",
        ])
        XCTAssertEqual(options.url.absoluteString, "https://example.invalid/x")
        XCTAssertEqual(options.client, .urlsession)
        XCTAssertEqual(options.requests, 300)
        XCTAssertEqual(options.concurrency, 8)
        XCTAssertEqual(options.warmup, 0)
        XCTAssertEqual(options.maxConnections, 2)
        XCTAssertEqual(options.expectedBytes, 1024)
        XCTAssertEqual(options.timeout, 2.5)
        XCTAssertEqual(options.configuration.map { "\($0.key):\($0.value)" }, ["max_conns:2", "timeout:2.5", "warmup:0"])
    }

    func testDownloadNeedsOutAndMemoryDoesNot() throws {
        let download = try parse(["download", "--url", "http://h/f", "--out", "/tmp/f.bin", "--expect-bytes", "5"])
        XCTAssertEqual(download.workload, .download)
        XCTAssertEqual(download.output, "/tmp/f.bin")
        XCTAssertEqual(download.expectedBytes, 5)
        XCTAssertEqual(download.configuration.map { "\($0.key):\($0.value)" }, ["timeout:60"])

        let memory = try parse(["memory", "--url", "http://h/f", "--client", "courier", "--timeout", "5"])
        XCTAssertEqual(memory.workload, .memory)
        XCTAssertNil(memory.output)
        XCTAssertEqual(memory.configuration.map { "\($0.key):\($0.value)" }, ["timeout:5"])
    }

    func testHelpIsNotAnError() throws {
        XCTAssertNil(try BenchOptions.parse(["--help"]))
        XCTAssertNil(try BenchOptions.parse(["-h"]))
        XCTAssertNil(try BenchOptions.parse(["small", "--url", "http://h/", "--help"]))
        XCTAssertFalse(BenchOptions.usage.isEmpty)
    }

    func testUsageErrors() {
        let cases: [([String], String)] = [
            ([], "missing workload"),
            (["large", "--url", "http://h/"], "unknown workload 'large'"),
            (["small"], "small needs --url"),
            (["small", "--url", "ftp://h/x"], "http:// or https://"),
            (["small", "--url", "not a url"], "http:// or https://"),
            (["small", "--url", "http://h/", "--requests", "0"], "--requests takes a whole number 1 or more"),
            (["small", "--url", "http://h/", "--requests", "many"], "--requests takes a whole number"),
            (["small", "--url", "http://h/", "--concurrency", "0"], "--concurrency takes a whole number 1 or more"),
            (["small", "--url", "http://h/", "--warmup", "-1"], "--warmup takes a whole number 0 or more"),
            (["small", "--url", "http://h/", "--max-conns", "0"], "--max-conns takes a whole number 1 or more"),
            (["small", "--url", "http://h/", "--expect-bytes", "-5"], "--expect-bytes takes a whole number 0 or more"),
            (["small", "--url", "http://h/", "--timeout", "0"], "--timeout takes a number of seconds above 0"),
            (["small", "--url", "http://h/", "--timeout", "inf"], "--timeout takes a number"),
            (["small", "--url", "http://h/", "--client", "curl"], "--client takes courier or urlsession"),
            (["small", "--url", "http://h/", "--requests"], "--requests needs a value"),
            (["small", "--url", "http://h/", "--requests", "1", "--requests", "2"], "--requests is given more than once"),
            (["small", "--url", "http://h/", "--out", "/tmp/x"], "unknown option '--out' for small"),
            (["small", "--url", "http://h/", "extra"], "unexpected argument 'extra'"),
            (["download", "--url", "http://h/"], "download needs --out"),
            (["download", "--url", "http://h/", "--out", "dir/"], "--out needs a file path"),
            (["download", "--url", "http://h/", "--out", "f", "--requests", "3"], "unknown option '--requests' for download"),
            (["memory", "--url", "http://h/", "--max-conns", "2"], "unknown option '--max-conns' for memory"),
        ]
        for (arguments, expected) in cases {
            let message = usageMessage(arguments)
            XCTAssertNotNil(message, "\(arguments) should be refused")
            XCTAssertTrue(message?.contains(expected) ?? false, "\(arguments): \(message ?? "accepted")")
        }
    }
}
