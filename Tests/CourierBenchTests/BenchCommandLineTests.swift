import Courier
import CourierTestServer
import XCTest

/// Runs the (debug) `courier-bench` executable against an in-process server, for both clients.
/// Checks only outcomes and the output's shape, never timings.
final class BenchCommandLineTests: XCTestCase {
    private var server: TestServer!
    private var directory: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        server = try TestServer()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        server?.stop()
        if let directory { try? FileManager.default.removeItem(at: directory) }
        super.tearDown()
    }

    /// `swift build --build-tests` puts every product next to the test bundle.
    private var executable: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("courier-bench")
    }

    private func run(_ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            struct MissingExecutable: Error { let path: String }
            throw MissingExecutable(path: executable.path)  // fail, never skip: a skip would hide a broken build
        }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        // Files, not pipes: nothing can block on a full pipe while the other is read.
        let outFile = directory.appendingPathComponent("stdout-\(UUID().uuidString)")
        let errFile = directory.appendingPathComponent("stderr-\(UUID().uuidString)")
        try Data().write(to: outFile)
        try Data().write(to: errFile)
        let out = try FileHandle(forWritingTo: outFile)
        let err = try FileHandle(forWritingTo: errFile)
        defer {
            try? out.close()
            try? err.close()
        }
        process.standardOutput = out
        process.standardError = err
        try process.run()
        process.waitUntilExit()
        return (
            process.terminationStatus, try String(contentsOf: outFile, encoding: .utf8),
            try String(contentsOf: errFile, encoding: .utf8)
        )
    }

    /// The one RESULT line, after checking it is the only line on stdout.
    private func resultLine(_ result: (status: Int32, out: String, err: String), _ label: String) throws -> String {
        XCTAssertEqual(result.status, 0, "\(label): \(result.err)")
        let lines = result.out.split(separator: "\n", omittingEmptySubsequences: false)
        XCTAssertEqual(lines.count, 2, "\(label): one line and its newline: \(result.out.debugDescription)")
        let line = try XCTUnwrap(lines.first.map(String.init))
        XCTAssertTrue(line.hasPrefix("RESULT "), "\(label): \(line)")
        return line
    }

    private func fields(_ line: String) -> [String: String] {
        Dictionary(
            line.split(separator: " ").dropFirst().map { field in
                let parts = field.split(separator: "=", maxSplits: 1)
                return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
            }, uniquingKeysWith: { _, last in last })
    }

    func testSmallRunsEveryRequestWithoutErrorsOnEveryClient() throws {
        for client in ["courier", "urlsession", "urlsession-lean"] {
            let result = try run([
                "small", "--url", server.url("/bytes/1024").absoluteString, "--requests", "50", "--warmup", "5",
                "--concurrency", "4", "--client", client,
            ])
            let values = fields(try resultLine(result, client))
            XCTAssertEqual(values["client"], client)
            XCTAssertEqual(values["workload"], "small")
            XCTAssertEqual(values["n"], "50")
            XCTAssertEqual(values["c"], "4")
            XCTAssertEqual(values["errors"], "0")
            XCTAssertEqual(values["config"], "max_conns:default,timeout:60,warmup:5")
            for key in ["secs", "cpu_s", "rss_kib", "rps", "p50_ms", "p99_ms"] {
                XCTAssertNotNil(values[key].flatMap(Double.init), "\(client): \(key) is a number")
            }
        }
        // Warm-up and timed requests of every client reached this server.
        XCTAssertGreaterThanOrEqual(server.requests.count, 165)
    }

    func testDownloadAndMemoryOnBothClients() throws {
        let url = server.url("/bytes/300000").absoluteString
        for client in ["courier", "urlsession"] {
            let file = directory.appendingPathComponent("\(client).bin")
            let download = try run([
                "download", "--url", url, "--out", file.path, "--expect-bytes", "300000", "--client", client,
            ])
            let downloaded = fields(try resultLine(download, "\(client) download"))
            XCTAssertEqual(downloaded["workload"], "download")
            XCTAssertEqual(downloaded["bytes"], "300000")
            XCTAssertNotNil(downloaded["mib_s"].flatMap(Double.init))
            let size = try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber
            XCTAssertEqual(size?.intValue, 300_000, client)
            XCTAssertEqual(try Data(contentsOf: file), TestServer.deterministicBytes(count: 300_000), client)

            let memory = try run(["memory", "--url", url, "--client", client])
            let held = fields(try resultLine(memory, "\(client) memory"))
            XCTAssertEqual(held["workload"], "memory")
            XCTAssertEqual(held["bytes"], "300000")
        }
    }

    func testStreamOnBothClientsChecksLengthAndDigest() throws {
        let url = server.url("/bytes/300000").absoluteString
        let digest = SHA256.hexString(SHA256.hash(TestServer.deterministicBytes(count: 300_000)))
        for client in ["courier", "urlsession"] {
            let result = try run([
                "stream", "--url", url, "--expect-bytes", "300000", "--sha256", digest, "--client", client,
            ])
            let values = fields(try resultLine(result, "\(client) stream"))
            XCTAssertEqual(values["workload"], "stream")
            XCTAssertEqual(values["bytes"], "300000")
            XCTAssertEqual(values["pauses"], "0", client)
            for key in ["mib_s", "cpu_s", "rss_kib", "high_water_kib"] {
                XCTAssertNotNil(values[key].flatMap(Double.init), "\(client): \(key) is a number")
            }
        }
        // A wrong digest is a failed run, not a result.
        let wrong = try run(["stream", "--url", url, "--sha256", String(repeating: "0", count: 64)])
        XCTAssertEqual(wrong.status, 1)
        XCTAssertEqual(wrong.out, "")
        XCTAssertTrue(wrong.err.contains("SHA-256 is \(digest)"), wrong.err)
    }

    func testSlowConsumerPausesAndLosesNothing() throws {
        // 2 MB through a 64 KiB buffer to a consumer pacing itself to 20 MiB/s: the loopback
        // server is far faster, so the stream must pause (and continue with Range) at least once.
        let digest = SHA256.hexString(SHA256.hash(TestServer.deterministicBytes(count: 2_000_000)))
        let result = try run([
            "stream", "--url", server.url("/bytes/2000000").absoluteString, "--expect-bytes", "2000000", "--sha256", digest,
            "--overflow", "pause", "--buffer-limit", "65536", "--consume-mib-s", "20",
        ])
        let values = fields(try resultLine(result, "paused stream"))
        XCTAssertEqual(values["config"], "buffer_limit:65536,consume_mib_s:20,overflow:pause,sha256:yes,timeout:60")
        XCTAssertEqual(values["bytes"], "2000000")
        XCTAssertGreaterThan(values["pauses"].flatMap(Int.init) ?? 0, 0, result.out)
        XCTAssertTrue(server.requests.contains { $0.header("range") != nil }, "a pause continues with Range")

        // The same consumer under the default policy overflows: a failed run.
        let failed = try run([
            "stream", "--url", server.url("/bytes/2000000").absoluteString, "--buffer-limit", "65536", "--consume-mib-s", "5",
        ])
        XCTAssertEqual(failed.status, 1, failed.err)
        XCTAssertEqual(failed.out, "")
        XCTAssertFalse(failed.err.isEmpty)
    }

    func testPacedURLSessionStreamIsAUsageError() throws {
        let result = try run([
            "stream", "--url", server.url("/bytes/1000").absoluteString, "--consume-mib-s", "5", "--client", "urlsession",
        ])
        XCTAssertEqual(result.status, 2)
        XCTAssertEqual(result.out, "")
        XCTAssertTrue(result.err.hasPrefix("courier-bench: --consume-mib-s needs --client courier"), result.err)
    }

    func testSSECountsEveryEventOnBothClients() throws {
        for client in ["courier", "urlsession"] {
            let result = try run([
                "sse", "--url", server.url("/sse?count=5000").absoluteString, "--expect-events", "5000", "--client", client,
            ])
            let values = fields(try resultLine(result, "\(client) sse"))
            XCTAssertEqual(values["workload"], "sse")
            XCTAssertEqual(values["config"], "timeout:60")
            XCTAssertEqual(values["events"], "5000")
            XCTAssertNotNil(values["events_s"].flatMap(Double.init), client)
        }
        // More events than the stream has: a failed run on both clients. Courier reconnects after
        // the body's end and gets the 204; `retry=50` shortens its wait (the raw client would
        // count the `retry:` block as an event: it only splits lines).
        for (client, query) in [("courier", "count=10&retry=50"), ("urlsession", "count=10")] {
            let result = try run([
                "sse", "--url", server.url("/sse?\(query)").absoluteString, "--expect-events", "11", "--client", client,
            ])
            XCTAssertEqual(result.status, 1, client)
            XCTAssertTrue(result.err.contains("10 events, expected 11"), "\(client): \(result.err)")
        }
    }

    func testQueueAndTasksModesDownloadEveryFile() throws {
        let work = directory.appendingPathComponent("queue-work")
        let expected = TestServer.deterministicBytes(count: 1024)
        for mode in ["queue", "tasks"] {
            let result = try run([
                "queue", "--url", server.url("/bytes/1024?seed=0").absoluteString, "--files", "30", "--concurrency", "3",
                "--dir", work.path, "--mode", mode, "--expect-bytes", "1024",
            ])
            let values = fields(try resultLine(result, mode))
            XCTAssertEqual(values["client"], "courier")
            XCTAssertEqual(values["workload"], "queue")
            XCTAssertEqual(values["config"], "mode:\(mode),timeout:60")
            XCTAssertEqual(values["files"], "30")
            XCTAssertEqual(values["c"], "3")
            for key in ["secs", "cpu_s", "rss_kib", "files_s"] {
                XCTAssertNotNil(values[key].flatMap(Double.init), "\(mode): \(key) is a number")
            }
            // Each file its own URL (the query gets i=k), each at DIR/out/k, nothing else left there.
            for k in 1...30 {
                XCTAssertEqual(try Data(contentsOf: work.appendingPathComponent("out/\(k)")), expected, "\(mode) file \(k)")
            }
            let names = try FileManager.default.contentsOfDirectory(atPath: work.appendingPathComponent("out").path)
            XCTAssertEqual(Set(names), Set((1...30).map(String.init)), mode)
            XCTAssertEqual(
                FileManager.default.fileExists(atPath: work.appendingPathComponent("queue/journal").path), mode == "queue",
                "\(mode): the queue's journal (a tasks run deletes an earlier run's queue)")
        }
        let targets = server.requests.map(\.target)
        XCTAssertEqual(targets.count, 60)
        for k in 1...30 { XCTAssertEqual(targets.filter { $0 == "/bytes/1024?seed=0&i=\(k)" }.count, 2, "i=\(k)") }
    }

    func testItemsOnlyQueuesEveryItemAndDownloadsNothing() throws {
        let work = directory.appendingPathComponent("items-work")
        let result = try run([
            "queue", "--url", server.url("/bytes/1024").absoluteString, "--files", "500", "--dir", work.path, "--items-only",
        ])
        let values = fields(try resultLine(result, "items-only"))
        XCTAssertEqual(values["config"], "mode:items,timeout:60")
        XCTAssertEqual(values["items"], "500")
        XCTAssertNil(values["files"])
        let rss = try XCTUnwrap(values["rss_kib"].flatMap(Int.init))
        let base = try XCTUnwrap(values["base_rss_kib"].flatMap(Int.init))
        XCTAssertLessThanOrEqual(base, rss, "a peak never shrinks")
        // 500 add records of a few hundred bytes each.
        XCTAssertGreaterThan(try XCTUnwrap(values["journal_kib"].flatMap(Int.init)), 50)
        XCTAssertNotNil(values["items_s"].flatMap(Double.init))
        XCTAssertTrue(server.requests.isEmpty, "no item ran: \(server.requests.map(\.target).prefix(3))")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: work.appendingPathComponent("out").path), [])
    }

    func testFailedQueueDownloadsExitOneWithoutAResult() throws {
        let work = directory.appendingPathComponent("failing-work")
        for mode in ["queue", "tasks"] {
            let result = try run([
                "queue", "--url", server.url("/status/404").absoluteString, "--files", "4", "--concurrency", "2",
                "--dir", work.path, "--mode", mode,
            ])
            XCTAssertEqual(result.status, 1, mode)
            XCTAssertEqual(result.out, "", mode)
            XCTAssertTrue(result.err.contains("4 of 4"), "\(mode): \(result.err)")
            XCTAssertTrue(result.err.contains("404"), "\(mode): \(result.err)")
        }
        // The wrong size is a failure too.
        let short = try run([
            "queue", "--url", server.url("/bytes/100").absoluteString, "--files", "2", "--concurrency", "2",
            "--dir", work.path, "--expect-bytes", "101",
        ])
        XCTAssertEqual(short.status, 1)
        XCTAssertTrue(short.err.contains("has 100 bytes, expected 101"), short.err)
    }

    func testQueueWithURLSessionIsAUsageError() throws {
        let result = try run([
            "queue", "--url", server.url("/bytes/1").absoluteString, "--files", "1", "--concurrency", "1",
            "--dir", directory.appendingPathComponent("unused").path, "--client", "urlsession",
        ])
        XCTAssertEqual(result.status, 2)
        XCTAssertEqual(result.out, "")
        XCTAssertTrue(result.err.hasPrefix("courier-bench: queue needs --client courier"), result.err)
    }

    func testWrongLengthCountsAsErrorsAndExitsOne() throws {
        let result = try run([
            "small", "--url", server.url("/bytes/100").absoluteString, "--requests", "5", "--warmup", "0",
            "--expect-bytes", "99",
        ])
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.out.hasPrefix("RESULT "), result.out)
        XCTAssertTrue(result.out.contains(" errors=5 "), result.out)
        XCTAssertTrue(result.err.contains("100 bytes instead of 99"), result.err)
    }

    func testFailedDownloadExitsOneWithoutAResult() throws {
        for client in ["courier", "urlsession"] {
            let result = try run([
                "download", "--url", server.url("/status/404").absoluteString, "--out",
                directory.appendingPathComponent("missing.bin").path, "--client", client,
            ])
            XCTAssertEqual(result.status, 1, client)
            XCTAssertEqual(result.out, "", client)
            XCTAssertTrue(result.err.contains("404"), "\(client): \(result.err)")
        }
    }

    func testUsageErrorExitsTwo() throws {
        let result = try run(["small", "--url", server.url("/bytes/1").absoluteString, "--concurrency", "0"])
        XCTAssertEqual(result.status, 2)
        XCTAssertEqual(result.out, "")
        XCTAssertTrue(result.err.hasPrefix("courier-bench: --concurrency"), result.err)
    }
    func testSegmentedRunsEachRoundChecksEveryFileAndSkipsAMissingAria2c() throws {
        // Given a small file, two rounds, and no aria2c where the bench looks
        let arguments = [
            "segmented", "--case", "capped", "--quick", "--size", "2M", "--rate", "16M", "--rounds", "2",
            "--aria2c", directory.appendingPathComponent("no-aria2c").path, "--dir", directory.path,
        ]

        // When it runs
        let result = try run(arguments)

        // Then loopback, both rounds and the median of Courier's row are there, exact and without
        // errors, and aria2c's rows are skipped with a line that says so
        XCTAssertEqual(result.status, 0, result.err)
        let lines = result.out.split(separator: "\n").map(String.init)
        let results = lines.filter { $0.hasPrefix("RESULT ") }.map(fields)
        XCTAssertEqual(
            results.map { $0["config"]?.components(separatedBy: ",").first },
            [
                "case:loopback", "case:capped", "case:capped", "case:capped",
            ])
        XCTAssertEqual(results.last?["config"]?.hasSuffix("round:median"), true)
        for values in results {
            XCTAssertEqual(values["workload"], "segmented")
            XCTAssertEqual(values["errors"], "0")
            XCTAssertEqual(values["bytes"], "2097152")
            XCTAssertNotNil(values["speed_ratio"].flatMap(Double.init))
        }
        XCTAssertTrue(lines.contains { $0.hasPrefix("SKIP aria2c rows of capped: no executable at ") }, result.out)
    }

    func testSegmentedKillsTheCourierCommandAndTheFileIsStillExact() throws {
        // Given the courier command next to the bench, killed once
        let arguments = ["segmented", "--case", "kill", "--kills", "1", "--size", "4M", "--rate", "8M", "--dir", directory.path]

        // When it runs
        let result = try run(arguments)

        // Then the command was killed, rerun, and its file's SHA-256 is the served one
        XCTAssertEqual(result.status, 0, result.err)
        let killed = try XCTUnwrap(result.out.split(separator: "\n").map(String.init).first { $0.contains("case:kill") })
        let values = fields(killed)
        XCTAssertEqual(values["client"], "courier-cli")
        XCTAssertEqual(values["errors"], "0")
        XCTAssertEqual(values["kills"], "1")
        XCTAssertEqual(values["bytes"], "4194304")
        XCTAssertGreaterThanOrEqual(Int(values["served"] ?? "") ?? 0, 4_194_304)
    }
}
