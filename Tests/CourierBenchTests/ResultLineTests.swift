import XCTest
@testable import courier_bench

/// The RESULT line's format and the percentiles behind `p50_ms`/`p99_ms` (no timing involved).
final class ResultLineTests: XCTestCase {
    func testNearestRankPercentile() {
        let values = (1...100).map(Double.init)
        XCTAssertEqual(ResultLine.percentile(50, ofSorted: values), 50)
        XCTAssertEqual(ResultLine.percentile(99, ofSorted: values), 99)
        XCTAssertEqual(ResultLine.percentile(100, ofSorted: values), 100)
        XCTAssertEqual(ResultLine.percentile(0, ofSorted: values), 1)
        XCTAssertEqual(ResultLine.percentile(50, ofSorted: [1, 2, 3, 4]), 2)
        XCTAssertEqual(ResultLine.percentile(51, ofSorted: [1, 2, 3, 4]), 3)
        XCTAssertEqual(ResultLine.percentile(99, ofSorted: [1, 2, 3, 4]), 4)
        XCTAssertEqual(ResultLine.percentile(50, ofSorted: [7]), 7)
        XCTAssertEqual(ResultLine.percentile(99, ofSorted: [7]), 7)
        XCTAssertNil(ResultLine.percentile(50, ofSorted: []))
    }

    func testSmallLine() {
        // Latencies unsorted on purpose: the line sorts them.
        var latencies = (1...200).map { Double($0) / 1000 }
        latencies.reverse()
        let line = ResultLine(
            client: .courier, workload: .small, seconds: 2.5, cpuSeconds: 1.23456, maxRSSKiB: 36380,
            configuration: [("max_conns", "default"), ("timeout", "60"), ("warmup", "200")],
            metrics: .requests(.init(count: 5000, concurrency: 4, errors: 2, latencies: latencies)))
        XCTAssertEqual(
            line.text,
            "RESULT client=courier workload=small secs=2.500 cpu_s=1.235 rss_kib=36380 "
                + "config=max_conns:default,timeout:60,warmup:200 n=5000 c=4 errors=2 rps=2000.0 p50_ms=100.000 p99_ms=198.000 "
                + "cpu_us_per_req=246.9")
    }

    func testIdleLineGivesTheCoresKeptBusyAndTheKit() {
        let line = ResultLine(
            client: .courier, workload: .idle, seconds: 10.004, cpuSeconds: 0.028, maxRSSKiB: 35000,
            configuration: [("max_conns", "16"), ("seconds", "10"), ("shape", "sse16"), ("timeout", "60")],
            metrics: .idle(.init(transfers: 16, kit: "active")))
        XCTAssertEqual(
            line.text,
            "RESULT client=courier workload=idle secs=10.004 cpu_s=0.028 rss_kib=35000 "
                + "config=max_conns:16,seconds:10,shape:sse16,timeout:60 transfers=16 cpu_per_wall=0.0028 kit=active")
    }

    func testTransferLine() {
        let line = ResultLine(
            client: .urlsession, workload: .download, seconds: 0.5, cpuSeconds: 0.25, maxRSSKiB: 40000,
            configuration: [("timeout", "60")], metrics: .bytes(5_242_880))
        XCTAssertEqual(
            line.text,
            "RESULT client=urlsession workload=download secs=0.500 cpu_s=0.250 rss_kib=40000 config=timeout:60 "
                + "bytes=5242880 mib_s=10.0")
    }

    func testStreamLine() {
        let line = ResultLine(
            client: .courier, workload: .stream, seconds: 2, cpuSeconds: 1.5, maxRSSKiB: 50000,
            configuration: [
                ("buffer_limit", "8388608"), ("consume_mib_s", "none"), ("overflow", "pause"), ("sha256", "no"), ("timeout", "60"),
            ],
            metrics: .stream(.init(bytes: 268_435_456, highWaterMark: 8_389_633, pauses: 3)))
        XCTAssertEqual(
            line.text,
            "RESULT client=courier workload=stream secs=2.000 cpu_s=1.500 rss_kib=50000 "
                + "config=buffer_limit:8388608,consume_mib_s:none,overflow:pause,sha256:no,timeout:60 "
                + "bytes=268435456 mib_s=128.0 high_water_kib=8194 pauses=3")
        let none = ResultLine(
            client: .urlsession, workload: .stream, seconds: 1, cpuSeconds: 1, maxRSSKiB: 1, configuration: [],
            metrics: .stream(.init(bytes: 0, highWaterMark: 0, pauses: 0)))
        XCTAssertTrue(none.text.hasSuffix(" bytes=0 mib_s=0.0 high_water_kib=0 pauses=0"), none.text)
    }

    func testEventsLine() {
        let line = ResultLine(
            client: .urlsession, workload: .sse, seconds: 0.25, cpuSeconds: 0.2, maxRSSKiB: 30000,
            configuration: [("timeout", "60")], metrics: .events(200_000))
        XCTAssertEqual(
            line.text,
            "RESULT client=urlsession workload=sse secs=0.250 cpu_s=0.200 rss_kib=30000 config=timeout:60 "
                + "events=200000 events_s=800000.0")
    }

    func testQueueLines() {
        let files = ResultLine(
            client: .courier, workload: .queue, seconds: 0.8, cpuSeconds: 0.6, maxRSSKiB: 41000,
            configuration: [("mode", "tasks"), ("timeout", "60")], metrics: .files(.init(count: 1000, concurrency: 4)))
        XCTAssertEqual(
            files.text,
            "RESULT client=courier workload=queue secs=0.800 cpu_s=0.600 rss_kib=41000 config=mode:tasks,timeout:60 "
                + "files=1000 c=4 files_s=1250.0")
        let items = ResultLine(
            client: .courier, workload: .queue, seconds: 0.25, cpuSeconds: 0.3, maxRSSKiB: 60000,
            configuration: [("mode", "items"), ("timeout", "60")],
            metrics: .items(.init(count: 10_000, baseRSSKiB: 38000, journalBytes: 2_000_001)))
        XCTAssertEqual(
            items.text,
            "RESULT client=courier workload=queue secs=0.250 cpu_s=0.300 rss_kib=60000 config=mode:items,timeout:60 "
                + "items=10000 items_s=40000.0 base_rss_kib=38000 journal_kib=1954")
    }

    func testNoSuccessfulRequestGivesNaNLatencies() {
        let line = ResultLine(
            client: .courier, workload: .small, seconds: 1, cpuSeconds: 0, maxRSSKiB: 1, configuration: [],
            metrics: .requests(.init(count: 3, concurrency: 1, errors: 3, latencies: [])))
        XCTAssertTrue(line.text.hasSuffix(" errors=3 rps=3.0 p50_ms=nan p99_ms=nan cpu_us_per_req=0.0"), line.text)
        XCTAssertTrue(line.text.contains(" config= "), line.text)
    }

    func testNumberFormatting() {
        XCTAssertEqual(ResultLine.fixed(1.0005, 3), "1.000")
        XCTAssertEqual(ResultLine.fixed(.infinity, 1), "inf")
        XCTAssertEqual(ResultLine.fixed(.nan, 1), "nan")
        XCTAssertEqual(ResultLine.milliseconds(0.0012344), "1.234")
        XCTAssertEqual(ResultLine.milliseconds(nil), "nan")
        XCTAssertEqual(ResultLine.seconds(60), "60")
        XCTAssertEqual(ResultLine.seconds(2.5), "2.5")
    }
}
