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

    func testCachedUsesAMemoryCacheAndSmallTakesOneOnRequest() throws {
        let cached = try parse(["cached", "--url", "http://bench.invalid/r"])
        XCTAssertEqual(cached.workload, .cached)
        XCTAssertEqual(cached.cache, .memory)
        XCTAssertEqual(cached.configuration.first.map { "\($0.key):\($0.value)" }, "cache:memory")
        XCTAssertEqual(try parse(["small", "--url", "http://bench.invalid/r", "--cache", "memory"]).cache, .memory)
        XCTAssertEqual(try parse(["small", "--url", "http://bench.invalid/r"]).cache, .off)
        XCTAssertEqual(
            usageMessage(["cached", "--url", "http://bench.invalid/r", "--cache", "off"]), "cached needs a cache: --cache memory")
        XCTAssertEqual(
            usageMessage(["cached", "--url", "http://bench.invalid/r", "--client", "urlsession"]),
            "cached needs --client courier: URLSession on Linux has no cache")
        XCTAssertNotNil(usageMessage(["small", "--url", "http://bench.invalid/r", "--cache", "disk"]))
        XCTAssertNotNil(usageMessage(["memory", "--url", "http://bench.invalid/r", "--cache", "memory"]))
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

    func testLogAttachesALoggingMonitorLevelAndNamesItInTheConfiguration() throws {
        let options = try XCTUnwrap(BenchOptions.parse(["small", "--url", "http://127.0.0.1:1/x", "--log", "debug"]))
        XCTAssertEqual(options.logLevel, .debug)
        XCTAssertEqual(options.configuration.first?.key, "log")
        XCTAssertEqual(options.configuration.first?.value, "debug")
        XCTAssertThrowsError(try BenchOptions.parse(["small", "--url", "http://127.0.0.1:1/x", "--log", "loud"]))
        XCTAssertThrowsError(try BenchOptions.parse(["memory", "--url", "http://127.0.0.1:1/x", "--log", "info"]))
    }

    func testHTTPSOptionsNameThePolicyAndNewConnectionsInTheConfiguration() throws {
        let plain = try parse(["small", "--url", "https://127.0.0.1:1/small"])
        XCTAssertEqual(plain.tlsPolicy, .none)
        XCTAssertFalse(plain.newConnections)
        XCTAssertNil(plain.request.value(forHTTPHeaderField: "Connection"))
        XCTAssertEqual(plain.configuration.map(\.key), ["max_conns", "timeout", "warmup"])

        let options = try parse([
            "small", "--url", "https://127.0.0.1:1/small", "--new-connections", "--tls-policy=system", "--cacert", "/tmp/ca.pem",
        ])
        XCTAssertEqual(options.tlsPolicy, .system)
        XCTAssertEqual(options.caFile, "/tmp/ca.pem")
        XCTAssertTrue(options.newConnections)
        XCTAssertEqual(options.request.value(forHTTPHeaderField: "Connection"), "close")
        XCTAssertEqual(
            options.configuration.map { "\($0.key):\($0.value)" },
            ["max_conns:default", "new_conns:yes", "timeout:60", "tls_policy:system", "warmup:200"])
    }

    func testHTTPSOptionMistakesAreUsageErrors() {
        let url = "https://127.0.0.1:1/small"
        XCTAssertEqual(
            usageMessage(["small", "--url", url, "--tls-policy", "pinned", "--cacert", "/x"]),
            "--tls-policy takes none, only or system, not 'pinned'")
        XCTAssertEqual(usageMessage(["small", "--url", url, "--tls-policy", "only"]), "--tls-policy only needs --cacert FILE")
        XCTAssertEqual(
            usageMessage(["small", "--url", url, "--cacert", "/x"]),
            "--cacert needs --tls-policy only or system: without a policy the system's CA store is trusted (Docs/Benchmark.md)")
        XCTAssertEqual(
            usageMessage(["small", "--url", url, "--tls-policy", "only", "--cacert", "/x", "--client", "urlsession"]),
            "--tls-policy needs --client courier: a raw URLSession has no TLS policy")
        XCTAssertEqual(
            usageMessage(["small", "--url", "http://127.0.0.1:1/", "--tls-policy", "only", "--cacert", "/x"]),
            "--tls-policy needs an https:// URL")
        XCTAssertEqual(usageMessage(["small", "--url", url, "--new-connections=yes"]), "--new-connections takes no value")
        XCTAssertEqual(usageMessage(["memory", "--url", url, "--new-connections"]), "unknown option '--new-connections' for memory")
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

    func testStreamDefaultsAndEveryOption() throws {
        let plain = try parse(["stream", "--url", "http://h/256m.bin"])
        XCTAssertEqual(plain.workload, .stream)
        XCTAssertNil(plain.bufferLimit)
        XCTAssertEqual(plain.overflow, .fail)
        XCTAssertNil(plain.consumeMiBPerSecond)
        XCTAssertNil(plain.expectedSHA256)
        XCTAssertFalse(plain.streamConsumer.hashes)
        XCTAssertNil(plain.streamConsumer.bytesPerSecond)
        XCTAssertEqual(
            plain.configuration.map { "\($0.key):\($0.value)" },
            ["buffer_limit:8388608", "consume_mib_s:none", "overflow:fail", "sha256:no", "timeout:60"])

        let digest = String(repeating: "0f", count: 32)
        let slow = try parse([
            "stream", "--url", "http://h/x", "--buffer-limit=262144", "--overflow", "pause", "--consume-mib-s", "12.5",
            "--sha256", digest.uppercased(), "--expect-bytes", "5000000", "--timeout", "600",
        ])
        XCTAssertEqual(slow.bufferLimit, 262_144)
        XCTAssertEqual(slow.overflow, .pause)
        XCTAssertEqual(slow.consumeMiBPerSecond, 12.5)
        XCTAssertEqual(slow.expectedSHA256, [UInt8](repeating: 0x0F, count: 32))
        XCTAssertEqual(slow.expectedBytes, 5_000_000)
        XCTAssertTrue(slow.streamConsumer.hashes)
        XCTAssertEqual(slow.streamConsumer.bytesPerSecond, 12.5 * 1_048_576)
        XCTAssertEqual(
            slow.configuration.map { "\($0.key):\($0.value)" },
            ["buffer_limit:262144", "consume_mib_s:12.5", "overflow:pause", "sha256:yes", "timeout:600"])

        // The baseline has no stream settings to report.
        let raw = try parse(["stream", "--url", "http://h/x", "--client", "urlsession", "--sha256", digest])
        XCTAssertEqual(raw.configuration.map { "\($0.key):\($0.value)" }, ["sha256:yes", "timeout:60"])
    }

    func testIdleShapesAndSeconds() throws {
        let head = try parse(["idle", "--url", "http://h:1"])
        XCTAssertEqual(head.workload, .idle)
        XCTAssertEqual(head.shape, .head)
        XCTAssertEqual(head.seconds, 10)
        XCTAssertEqual(head.configuration.map { "\($0.key):\($0.value)" }, ["max_conns:default", "seconds:10", "shape:head", "timeout:60"])
        XCTAssertEqual(IdleWorkload.request(head).url?.absoluteString, "http://h:1/delay/10000")

        // Sixteen streams wait at once, so both clients are allowed sixteen connections.
        let streams = try parse(["idle", "--url", "http://h:1", "--shape", "sse16", "--seconds", "4"])
        XCTAssertEqual(streams.shape.transfers, 16)
        XCTAssertEqual(streams.maxConnections, 16)
        XCTAssertEqual(IdleWorkload.events(streams), 3)
        XCTAssertEqual(IdleWorkload.request(streams).url?.absoluteString, "http://h:1/sse?count=3&interval_ms=2000")

        XCTAssertEqual(usageMessage(["idle", "--url", "http://h:1", "--shape", "tail"]), "--shape takes head, sse or sse16, not 'tail'")
        XCTAssertNotNil(usageMessage(["idle", "--url", "http://h:1", "--seconds", "11"]))
        XCTAssertNotNil(usageMessage(["idle", "--url", "http://h:1", "--seconds", "0"]))
    }

    func testSSENeedsExpectedEvents() throws {
        let options = try parse(["sse", "--url", "http://h/sse?count=200000", "--expect-events", "200000", "--client", "urlsession"])
        XCTAssertEqual(options.workload, .sse)
        XCTAssertEqual(options.url.absoluteString, "http://h/sse?count=200000")
        XCTAssertEqual(options.expectedEvents, 200_000)
        XCTAssertEqual(options.client, .urlsession)
        XCTAssertEqual(options.configuration.map { "\($0.key):\($0.value)" }, ["timeout:60"])
    }

    func testQueueModesAndItemsOnly() throws {
        let queue = try parse(["queue", "--url", "http://h/1k.bin", "--files", "1000", "--concurrency", "4", "--dir", "/tmp/q"])
        XCTAssertEqual(queue.workload, .queue)
        XCTAssertEqual(queue.files, 1000)
        XCTAssertEqual(queue.concurrency, 4)
        XCTAssertEqual(queue.directory, "/tmp/q")
        XCTAssertEqual(queue.mode, .queue)
        XCTAssertFalse(queue.itemsOnly)
        XCTAssertNil(queue.expectedBytes)
        XCTAssertEqual(queue.configuration.map { "\($0.key):\($0.value)" }, ["mode:queue", "timeout:60"])

        let tasks = try parse([
            "queue", "--mode=tasks", "--url", "http://h/1k.bin", "--files=3", "--concurrency", "2", "--dir", "d",
            "--expect-bytes", "1024", "--timeout", "5", "--client", "courier",
        ])
        XCTAssertEqual(tasks.mode, .tasks)
        XCTAssertEqual(tasks.files, 3)
        XCTAssertEqual(tasks.directory, "d")
        XCTAssertEqual(tasks.expectedBytes, 1024)
        XCTAssertEqual(tasks.configuration.map { "\($0.key):\($0.value)" }, ["mode:tasks", "timeout:5"])

        // A flag: no value, anywhere on the line; --concurrency is not needed.
        let items = try parse(["queue", "--items-only", "--url", "http://h/1k.bin", "--files", "10000", "--dir", "d"])
        XCTAssertTrue(items.itemsOnly)
        XCTAssertEqual(items.mode, .queue)
        XCTAssertEqual(items.files, 10000)
        XCTAssertEqual(items.configuration.map { "\($0.key):\($0.value)" }, ["mode:items", "timeout:60"])
        XCTAssertTrue(
            try parse(["queue", "--url", "http://h/", "--files", "1", "--dir", "d", "--mode", "queue", "--items-only"]).itemsOnly)
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
            (["small", "--url", "http://h/", "--client", "curl"], "--client takes courier, urlsession or urlsession-lean"),
            (["small", "--url", "http://h/", "--requests"], "--requests needs a value"),
            (["small", "--url", "http://h/", "--requests", "1", "--requests", "2"], "--requests is given more than once"),
            (["small", "--url", "http://h/", "--out", "/tmp/x"], "unknown option '--out' for small"),
            (["small", "--url", "http://h/", "extra"], "unexpected argument 'extra'"),
            (["download", "--url", "http://h/"], "download needs --out"),
            (["download", "--url", "http://h/", "--out", "dir/"], "--out needs a file path"),
            (["download", "--url", "http://h/", "--out", "f", "--requests", "3"], "unknown option '--requests' for download"),
            (["memory", "--url", "http://h/", "--max-conns", "2"], "unknown option '--max-conns' for memory"),
            (["memory", "--url", "http://h/", "--overflow", "pause"], "unknown option '--overflow' for memory"),
            (["stream", "--url", "http://h/", "--buffer-limit", "0"], "--buffer-limit takes a whole number 1 or more"),
            (["stream", "--url", "http://h/", "--overflow", "drop"], "--overflow takes fail or pause"),
            (["stream", "--url", "http://h/", "--consume-mib-s", "0"], "--consume-mib-s takes a number of MiB per second above 0"),
            (["stream", "--url", "http://h/", "--consume-mib-s", "nan"], "--consume-mib-s takes a number"),
            (["stream", "--url", "http://h/", "--sha256", "abc"], "--sha256 takes 64 hexadecimal digits"),
            (["stream", "--url", "http://h/", "--sha256", String(repeating: "g", count: 64)], "--sha256 takes 64 hexadecimal digits"),
            (["stream", "--url", "http://h/", "--out", "f"], "unknown option '--out' for stream"),
            (["stream", "--url", "http://h/", "--expect-events", "3"], "unknown option '--expect-events' for stream"),
            (["stream", "--url", "http://h/", "--client", "urlsession", "--consume-mib-s", "5"], "--consume-mib-s needs --client courier"),
            (["stream", "--url", "http://h/", "--buffer-limit", "5", "--client", "urlsession"], "--buffer-limit needs --client courier"),
            (["stream", "--url", "http://h/", "--client", "urlsession", "--overflow", "fail"], "--overflow needs --client courier"),
            (["sse", "--url", "http://h/sse"], "sse needs --expect-events"),
            (["sse", "--url", "http://h/sse", "--expect-events", "0"], "--expect-events takes a whole number 1 or more"),
            (["sse", "--url", "http://h/sse", "--expect-events", "5", "--expect-bytes", "5"], "unknown option '--expect-bytes' for sse"),
            (["sse", "--url", "http://h/sse", "--expect-events", "5", "--buffer-limit", "5"], "unknown option '--buffer-limit' for sse"),
            (["small", "--url", "http://h/", "--items-only"], "unknown option '--items-only' for small"),
            (["queue", "--url", "http://h/", "--concurrency", "4", "--dir", "d"], "queue needs --files"),
            (
                ["queue", "--url", "http://h/", "--files", "0", "--concurrency", "4", "--dir", "d"],
                "--files takes a whole number 1 or more"
            ),
            (["queue", "--url", "http://h/", "--files", "5", "--concurrency", "4"], "queue needs --dir"),
            (["queue", "--url", "http://h/", "--files", "5", "--concurrency", "4", "--dir", ""], "--dir needs a directory path"),
            (["queue", "--url", "http://h/", "--files", "5", "--dir", "d"], "queue needs --concurrency"),
            (
                ["queue", "--url", "http://h/", "--files", "5", "--concurrency", "0", "--dir", "d"],
                "--concurrency takes a whole number 1 or more"
            ),
            (
                ["queue", "--url", "http://h/", "--files", "5", "--concurrency", "4", "--dir", "d", "--mode", "batch"],
                "--mode takes queue or tasks"
            ),
            (
                ["queue", "--url", "http://h/", "--files", "5", "--concurrency", "4", "--dir", "d", "--client", "urlsession"],
                "queue needs --client courier"
            ),
            (
                ["queue", "--url", "http://h/", "--files", "5", "--concurrency", "4", "--dir", "d", "--requests", "5"],
                "unknown option '--requests' for queue"
            ),
            (["queue", "--url", "http://h/", "--files", "5", "--dir", "d", "--items-only=yes"], "--items-only takes no value"),
            (
                ["queue", "--url", "http://h/", "--files", "5", "--dir", "d", "--items-only", "--items-only"],
                "--items-only is given more than once"
            ),
            (
                ["queue", "--url", "http://h/", "--files", "5", "--dir", "d", "--items-only", "--concurrency", "2"],
                "--concurrency has no meaning with --items-only"
            ),
            (
                ["queue", "--url", "http://h/", "--files", "5", "--dir", "d", "--items-only", "--expect-bytes", "2"],
                "--expect-bytes has no meaning with --items-only"
            ),
            (
                ["queue", "--url", "http://h/", "--files", "5", "--dir", "d", "--items-only", "--mode", "tasks"],
                "--items-only needs --mode queue"
            ),
        ]
        for (arguments, expected) in cases {
            let message = usageMessage(arguments)
            XCTAssertNotNil(message, "\(arguments) should be refused")
            XCTAssertTrue(message?.contains(expected) ?? false, "\(arguments): \(message ?? "accepted")")
        }
    }
}
