import XCTest
@testable import courier_bench

/// `courier-bench segmented`'s options, its RESULT line and its medians (no timing involved).
final class SegmentedOptionsTests: XCTestCase {
    private func usageMessage(_ arguments: [String]) -> String? {
        do {
            _ = try SegmentedOptions.parse(arguments)
            return nil
        } catch {
            return error.message
        }
    }

    func testDefaultsAreEveryCaseOn256MiBAt16MiBPerSecondInThreeRounds() throws {
        // Given no options, when parsed
        let options = try XCTUnwrap(try SegmentedOptions.parse([]))

        // Then the figures of issue 24 are the defaults
        XCTAssertEqual(options.cases, [.capped, .slow, .ban, .kill, .nginx])
        XCTAssertEqual(options.size, 256 << 20)
        XCTAssertEqual(options.rate, 16 << 20)
        XCTAssertEqual(options.rounds, 3)
        XCTAssertFalse(options.quick)
        XCTAssertEqual(options.aria2c, "/usr/bin/aria2c")
        XCTAssertNil(options.courier)
        XCTAssertEqual(options.nginx, "/usr/sbin/nginx")
        XCTAssertEqual(options.nginxRates, [1 << 20, 4 << 20, 16 << 20], "issue 30's limit_rate 1m, 4m and 16m")
    }

    func testEveryOptionInBothSpellingsWithBinarySuffixes() throws {
        // Given every option, when parsed
        let options = try XCTUnwrap(
            try SegmentedOptions.parse([
                "--case=slow", "--size", "1G", "--rate=512k", "--rounds", "5", "--quick", "--kills", "0", "--seed", "7",
                "--timeout", "90", "--dir", "/tmp/x", "--aria2c", "/opt/aria2c", "--courier=/opt/courier", "--nginx", "/opt/nginx",
                "--nginx-rates=512K,2M",
            ]))

        // Then each is read
        XCTAssertEqual(options.cases, [.slow])
        XCTAssertEqual(options.size, 1 << 30)
        XCTAssertEqual(options.rate, 512 << 10)
        XCTAssertEqual(options.rounds, 5)
        XCTAssertTrue(options.quick)
        XCTAssertEqual(options.kills, 0)
        XCTAssertEqual(options.seed, 7)
        XCTAssertEqual(options.timeout, 90)
        XCTAssertEqual(options.directory, "/tmp/x")
        XCTAssertEqual(options.aria2c, "/opt/aria2c")
        XCTAssertEqual(options.courier, "/opt/courier")
        XCTAssertEqual(options.nginx, "/opt/nginx")
        XCTAssertEqual(options.nginxRates, [512 << 10, 2 << 20])
    }

    func testMistakesAreUsageErrorsAndHelpIsNotOne() throws {
        XCTAssertNil(try SegmentedOptions.parse(["--help"]))
        XCTAssertEqual(
            usageMessage(["--case", "fast"]),
            "--case takes capped, slow, ban, kill, nginx or all, or a comma-separated list, not 'fast'")
        XCTAssertEqual(
            usageMessage(["--nginx-rates", "1M,,4M"]), "--nginx-rates takes a whole number above 0 with an optional K, M or G, not ''")
        XCTAssertEqual(usageMessage(["--nginx", ""]), "--nginx needs a path")
        XCTAssertEqual(try SegmentedOptions.parse(["--case", "kill,capped,kill"])?.cases, [.kill, .capped])
        XCTAssertEqual(usageMessage(["--size", "0"]), "--size takes a whole number above 0 with an optional K, M or G, not '0'")
        XCTAssertEqual(usageMessage(["--rate", "16X"]), "--rate takes a whole number above 0 with an optional K, M or G, not '16X'")
        XCTAssertEqual(usageMessage(["--rounds", "0"]), "--rounds takes a whole number 1 or more, not '0'")
        XCTAssertEqual(usageMessage(["--url", "http://x/"]), "unknown option '--url' for segmented")
        XCTAssertEqual(usageMessage(["--quick=1"]), "--quick takes no value")
        XCTAssertEqual(usageMessage(["--rounds", "1", "--rounds", "2"]), "--rounds is given more than once")
        // The other workloads' parser does not take it: segmented has its own.
        XCTAssertNotNil(try? SegmentedOptions.parse([]))
        XCTAssertThrowsError(try BenchOptions.parse(["segmented", "--url", "http://x/"]))
    }

    func testTheLineGivesTheIdealTheRatioAndWhatWasFetchedAgainPerKillAndConnection() {
        // Given a kill run: 4 MiB served for a 3 MiB file, 2 kills with 4 connections active in all
        let run = ResultLine.Segmented(
            bytes: 3 << 20, idealSeconds: 1, errors: 0, connections: 4, peakInFlight: 4, refusals: 0,
            servedBytes: 4 << 20, fileSize: 3 << 20, kills: 2, connectionsAtKills: 4)
        let line = ResultLine(
            clientName: "courier-cli", workload: .segmented, seconds: 2, cpuSeconds: 0.5, maxRSSKiB: 1000,
            configuration: [("case", "kill"), ("round", "1")], metrics: .segmented(run))

        // When printed, then every field is there, in order
        XCTAssertEqual(
            line.text,
            "RESULT client=courier-cli workload=segmented secs=2.000 cpu_s=0.500 rss_kib=1000 config=case:kill,round:1 "
                + "bytes=3145728 mib_s=1.5 ideal_s=1.000 speed_ratio=0.500 errors=0 conns=4 peak=4 r429=0 served=4194304 "
                + "refetched=1048576 kills=2 refetched_per_kill_conn=262144")
    }

    func testTheMedianIsTheMiddleRunWithTheErrorsOfAllRounds() {
        // Given three rounds, one of them failed
        func line(_ seconds: Double, errors: Int) -> ResultLine {
            let run = ResultLine.Segmented(
                bytes: errors == 0 ? 100 : 0, idealSeconds: 1, errors: errors, connections: 1, peakInFlight: 1, refusals: 0,
                servedBytes: 100, fileSize: 100)
            return ResultLine(
                clientName: "aria2c", workload: .segmented, seconds: seconds, cpuSeconds: 0, maxRSSKiB: 0,
                configuration: [("case", "capped"), ("round", "1")], metrics: .segmented(run))
        }

        // When their median is taken
        let median = SegmentedBench.median(of: [line(3, errors: 0), line(1, errors: 1), line(2, errors: 0)])

        // Then it is the 2-second run, labelled so, and it does not hide the failure
        XCTAssertEqual(median.seconds, 2)
        XCTAssertTrue(median.text.contains("config=case:capped,round:median "), median.text)
        XCTAssertTrue(median.text.contains(" errors=1 "), median.text)
    }
}
