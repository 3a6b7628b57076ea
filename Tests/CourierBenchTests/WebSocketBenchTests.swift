import XCTest
@testable import courier_bench

/// The `websocket` workload's options and RESULT line (pure; no socket, no clock).
final class WebSocketBenchTests: XCTestCase {
    func testDefaultsMatchThePeersScriptAndTheConfigurationNamesThem() throws {
        let options = try XCTUnwrap(try BenchOptions.parse(["websocket", "--url", "ws://127.0.0.1:9/"]))
        XCTAssertEqual(options.workload, .websocket)
        XCTAssertEqual([options.messages, options.messageSize, options.bigMessages, options.warmup], [10_000, 32, 64, 200])
        XCTAssertNil(options.caFile)
        XCTAssertEqual(
            options.configuration.map { "\($0.key):\($0.value)" }, ["big_mib:64", "scheme:ws", "size:32", "timeout:60", "warmup:200"])

        let tls = try XCTUnwrap(
            try BenchOptions.parse([
                "websocket", "--url", "wss://localhost:9/", "--ca", "/tmp/ca.pem", "--messages", "5", "--size", "8", "--big-mib", "0",
            ]))
        XCTAssertEqual(tls.caFile, "/tmp/ca.pem")
        XCTAssertEqual([tls.messages, tls.messageSize, tls.bigMessages], [5, 8, 0])
    }

    func testAnIdlePhaseWithPingsIsParsedAndNamed() throws {
        let options = try XCTUnwrap(try BenchOptions.parse(["websocket", "--url", "ws://127.0.0.1:9/", "--idle", "60", "--ping", "1"]))

        XCTAssertEqual(options.idleSeconds, 60)
        XCTAssertEqual(options.pingSeconds, 1)
        XCTAssertEqual(
            options.configuration.map { "\($0.key):\($0.value)" },
            ["big_mib:64", "idle:60", "ping:1", "scheme:ws", "size:32", "timeout:60", "warmup:200"])
        XCTAssertThrowsError(try BenchOptions.parse(["websocket", "--url", "ws://h/", "--ping", "0"])) { error in
            XCTAssertEqual((error as? BenchUsageError)?.message, "--ping takes a number of seconds of at least 0.001, not '0'")
        }
    }

    func testMistakesAreUsageErrors() {
        let cases: [([String], String)] = [
            (["websocket", "--url", "http://h/"], "--url takes a ws:// or wss:// URL, not 'http://h/'"),
            (["small", "--url", "ws://h/"], "--url takes an http:// or https:// URL, not 'ws://h/'"),
            (["websocket", "--url", "ws://h/", "--ca", "x.pem"], "--ca needs a wss:// URL"),
            (["websocket", "--url", "ws://h/", "--messages", "0"], "--messages takes a whole number 1 or more, not '0'"),
            (
                ["websocket", "--url", "ws://h/", "--client", "urlsession"],
                "websocket needs --client courier: URLSession's WebSocket task does not work on Linux"
            ),
            (["websocket", "--url", "ws://h/", "--requests", "3"], "unknown option '--requests' for websocket"),
        ]
        for (arguments, message) in cases {
            XCTAssertThrowsError(try BenchOptions.parse(arguments), "\(arguments)") { error in
                XCTAssertEqual((error as? BenchUsageError)?.message, message)
            }
        }
    }

    func testTheLineGivesMicrosecondsCPUPerMessageAndTheBigRate() {
        let line = ResultLine(
            client: .courier, workload: .websocket, seconds: 2.5, cpuSeconds: 1.25, maxRSSKiB: 30000,
            configuration: [("scheme", "ws")],
            metrics: .webSocket(
                .init(latencies: [0.0001, 0.0002, 0.0003, 0.004], smallCPUSeconds: 0.0002, bigMessages: 64, bigSeconds: 0.5)))
        XCTAssertEqual(
            line.text,
            "RESULT client=courier workload=websocket secs=2.500 cpu_s=1.250 rss_kib=30000 config=scheme:ws "
                + "n=4 p50_us=200.0 p99_us=4000.0 cpu_us_per_msg=50.0 big_mib=64 mib_s=128.0")
    }

    func testConnectsAddTheirMedianCPUAndWallTimeAtTheEnd() throws {
        let options = try XCTUnwrap(try BenchOptions.parse(["websocket", "--url", "wss://h:9/", "--connects", "20"]))
        XCTAssertEqual(options.connects, 20)
        var echo = ResultLine.WebSocketEcho(latencies: [0.0001], smallCPUSeconds: 0.0001, bigMessages: 0, bigSeconds: 1)
        echo.connectCPUSeconds = [0.003, 0.001, 0.024]
        echo.connectSeconds = [0.004, 0.002, 0.030]
        let line = ResultLine(
            client: .courier, workload: .websocket, seconds: 1, cpuSeconds: 1, maxRSSKiB: 1, configuration: [("scheme", "wss")],
            metrics: .webSocket(echo))
        XCTAssertTrue(line.text.hasSuffix(" connects=3 connect_cpu_us_p50=3000.0 connect_ms_p50=4.000"), line.text)
    }
}
