import XCTest
import Courier

/// The pure text of a download's progress (byte counts, rates, times left, the terminal line) and
/// the rate meter; `courier get`'s own lines are tested in Tests/CourierCLITests/ProgressFormatTests.swift.
final class ProgressFormatTests: XCTestCase {
    func testBytesUseBinaryUnitsWithOneDecimal() {
        XCTAssertEqual(ProgressFormat.bytes(0), "0 B")
        XCTAssertEqual(ProgressFormat.bytes(-5), "0 B")
        XCTAssertEqual(ProgressFormat.bytes(1023), "1023 B")
        XCTAssertEqual(ProgressFormat.bytes(1024), "1.0 KiB")
        XCTAssertEqual(ProgressFormat.bytes(1536), "1.5 KiB")
        XCTAssertEqual(ProgressFormat.bytes(12 * 1024 * 1024 + 300 * 1024), "12.3 MiB")
        XCTAssertEqual(ProgressFormat.bytes(64 * 1024 * 1024), "64.0 MiB")
        XCTAssertEqual(ProgressFormat.bytes(3 * 1024 * 1024 * 1024 / 2), "1.5 GiB")
        XCTAssertEqual(ProgressFormat.bytes(Int64.max), "8.0 EiB")
    }

    func testBytesNeverShow1024OfAUnit() {
        XCTAssertEqual(ProgressFormat.bytes(1024 * 1024 - 1), "1.0 MiB")
        XCTAssertEqual(ProgressFormat.bytes(1024 * 1024 - 60), "1023.9 KiB")
    }

    func testRate() {
        XCTAssertEqual(ProgressFormat.rate(512), "512 B/s")
        XCTAssertEqual(ProgressFormat.rate(85.3 * 1024 * 1024), "85.3 MiB/s")
        XCTAssertEqual(ProgressFormat.rate(0), "0 B/s")
        XCTAssertEqual(ProgressFormat.rate(.nan), "0 B/s")
        XCTAssertEqual(ProgressFormat.rate(.infinity), "0 B/s")
    }

    func testDuration() {
        XCTAssertEqual(ProgressFormat.duration(0), "0:00")
        XCTAssertEqual(ProgressFormat.duration(4.2), "0:05", "rounded up: never promise too early")
        XCTAssertEqual(ProgressFormat.duration(754), "12:34")
        XCTAssertEqual(ProgressFormat.duration(3723), "1:02:03")
        XCTAssertEqual(ProgressFormat.duration(99 * 3600 + 59 * 60 + 59), "99:59:59")
        XCTAssertEqual(ProgressFormat.duration(100 * 3600), "--:--")
        XCTAssertEqual(ProgressFormat.duration(-1), "--:--")
        XCTAssertEqual(ProgressFormat.duration(.infinity), "--:--")
    }

    func testPercentIsRoundedDownAnd100OnlyWhenComplete() {
        XCTAssertEqual(ProgressFormat.percent(0, of: 100), 0)
        XCTAssertEqual(ProgressFormat.percent(18, of: 100), 18)
        XCTAssertEqual(ProgressFormat.percent(999, of: 1000), 99)
        XCTAssertEqual(ProgressFormat.percent(999_999_999, of: 1_000_000_000), 99)
        XCTAssertEqual(ProgressFormat.percent(1000, of: 1000), 100)
        XCTAssertEqual(ProgressFormat.percent(0, of: 0), 100)
        XCTAssertNil(ProgressFormat.percent(10, of: nil))
    }

    func testSecondsLeft() {
        XCTAssertEqual(ProgressFormat.secondsLeft(25, of: 100, at: 25), 3)
        XCTAssertEqual(ProgressFormat.secondsLeft(120, of: 100, at: 25), 0)
        XCTAssertNil(ProgressFormat.secondsLeft(25, of: nil, at: 25))
        XCTAssertNil(ProgressFormat.secondsLeft(25, of: 100, at: nil))
        XCTAssertNil(ProgressFormat.secondsLeft(25, of: 100, at: 0))
    }

    private let mib: Int64 = 1024 * 1024

    private func line(_ name: String?, _ completed: Int64, _ total: Int64?, _ rate: Double?, columns: Int) -> String {
        ProgressFormat.terminalLine(name: name, completed: completed, total: total, bytesPerSecond: rate, columns: columns)
    }

    func testTerminalLineShowsNamePercentBarSizeRateAndETALikeWget() {
        XCTAssertEqual(
            line("data.bin", 12 * mib, 64 * mib, 4 * 1024 * 1024, columns: 80),
            "data.bin   18% [====>                      ]  12.0 MiB    4.0 MiB/s  eta 13s")
        XCTAssertEqual(
            line("data.bin", 0, 64 * mib, nil, columns: 80),
            "data.bin    0% [                           ]       0 B",
            "rate and ETA appear once measured; the bar keeps its width meanwhile")
        XCTAssertEqual(
            line("data.bin", 64 * mib, 64 * mib, 4 * 1024 * 1024, columns: 80),
            "data.bin  100% [===========================]  64.0 MiB    4.0 MiB/s  eta 0s")
    }

    func testTerminalLineWithoutATotalHasNoBar() {
        XCTAssertEqual(line("stream.bin", 12 * mib, nil, 1024, columns: 80), "stream.bin  12.0 MiB  1.0 KiB/s")
    }

    func testTerminalLineNeverWrapsAndShedsTheBarThenTheName() {
        let name = "a-rather-long-file-name-for-a-download.tar.gz"
        for columns in [200, 120, 80, 60, 50, 40, 30, 20, 12, 5, 1] {
            for (total, rate) in [(Optional(64 * mib), Optional(4.1 * 1024 * 1024)), (nil, 300.0), (64 * mib, nil)] {
                let text = line(name, 12 * mib + 300 * 1024, total, rate, columns: columns)
                XCTAssertLessThanOrEqual(ProgressFormat.columns(of: text), max(columns - 1, 1), "\(columns): \(text)")
                XCTAssertFalse(text.contains("\n") || text.contains("\r"))
            }
        }
        // Wide: the name is shortened in the middle, keeping its extension, and the bar stays.
        XCTAssertEqual(
            line(name, 12 * mib + 300 * 1024, 64 * mib, 4.1 * 1024 * 1024, columns: 80),
            "a-rather-…ad.tar.gz   19% [==>             ]  12.3 MiB    4.1 MiB/s  eta 13s")
        // At 40 columns: no bar; the name while it fits.
        XCTAssertEqual(
            line("a.gz", 12 * mib + 300 * 1024, 64 * mib, 4.1 * 1024 * 1024, columns: 40),
            "a.gz  19%  12.3 MiB  4.1 MiB/s  eta 13s")
        XCTAssertEqual(
            line(name, 12 * mib + 300 * 1024, 64 * mib, 4.1 * 1024 * 1024, columns: 40),
            "19%  12.3 MiB  4.1 MiB/s  eta 13s", "no room for even 8 columns of name")
        XCTAssertEqual(line(name, 12 * mib + 300 * 1024, 64 * mib, 4.1 * 1024 * 1024, columns: 30), "19%  12.3 MiB  4.1 MiB/s")
        XCTAssertEqual(line(name, 12 * mib + 300 * 1024, 64 * mib, 4.1 * 1024 * 1024, columns: 20), "19%  12.3 MiB")
        XCTAssertEqual(line(name, 12 * mib + 300 * 1024, 64 * mib, 4.1 * 1024 * 1024, columns: 12), "12.3 MiB")
        XCTAssertEqual(line(name, 12 * mib + 300 * 1024, 64 * mib, 4.1 * 1024 * 1024, columns: 5), "12…B")
    }

    func testTerminalLineShowsTheConnectionCountWhileASplitDownloadUsesMoreThanOne() {
        // Given a split download using 4 connections, then 1 (a server without ranges, or the end)
        let four = ProgressFormat.terminalLine(
            name: "data.bin", completed: 12 * mib, total: 64 * mib, bytesPerSecond: 4 * 1024 * 1024, connections: 4, columns: 80)
        let one = ProgressFormat.terminalLine(
            name: "data.bin", completed: 12 * mib, total: 64 * mib, bytesPerSecond: 4 * 1024 * 1024, connections: 1, columns: 80)
        // Then the count follows the rate while it is more than one, in a fixed width
        XCTAssertEqual(four, "data.bin   18% [==>               ]  12.0 MiB    4.0 MiB/s   4 conn  eta 13s")
        XCTAssertEqual(one, line("data.bin", 12 * mib, 64 * mib, 4 * 1024 * 1024, columns: 80), "one connection: the line as before")
        XCTAssertEqual(ProgressFormat.connectionsText(64), "64 conn")
        XCTAssertNil(ProgressFormat.connectionsText(1))
        XCTAssertNil(ProgressFormat.connectionsText(0), "not started, or ended")
        // And when narrow it goes after the bar and the name, before the ETA and the rate
        let at = { (columns: Int) in
            ProgressFormat.terminalLine(
                name: "a-rather-long-file-name.tar.gz", completed: 12 * self.mib + 300 * 1024, total: 64 * self.mib,
                bytesPerSecond: 4.1 * 1024 * 1024, connections: 12, columns: columns)
        }
        XCTAssertEqual(at(48), "19%  12.3 MiB  4.1 MiB/s  12 conn  eta 13s")
        XCTAssertEqual(at(40), "19%  12.3 MiB  4.1 MiB/s  eta 13s")
        for columns in [200, 120, 80, 60, 50, 40, 30, 20, 12, 5, 1] {
            XCTAssertLessThanOrEqual(ProgressFormat.columns(of: at(columns)), max(columns - 1, 1), "\(columns): \(at(columns))")
        }
    }

    func testWideCharactersCountTwoColumns() {
        XCTAssertEqual(ProgressFormat.columns(of: "abc"), 3)
        XCTAssertEqual(ProgressFormat.columns(of: "日本語"), 6)
        XCTAssertEqual(ProgressFormat.columns(of: "é"), 1)
        let text = line("報告書-2026-最終版.pdf", 5 * mib, 10 * mib, nil, columns: 40)
        XCTAssertLessThanOrEqual(ProgressFormat.columns(of: text), 39, text)
        XCTAssertEqual(ProgressFormat.truncate("報告書.pdf", toColumns: 7), "報…pdf")
    }

    func testControlCharactersInANameAreNotSentToTheTerminal() {
        XCTAssertEqual(ProgressFormat.displayable("a\nb\u{1B}[2Jc\u{202E}"), "a?b?[2Jc?")
    }

    func testBarAndETA() {
        XCTAssertEqual(ProgressFormat.bar(0, of: 100, inner: 10), "[          ]")
        XCTAssertEqual(ProgressFormat.bar(45, of: 100, inner: 10), "[===>      ]")
        XCTAssertEqual(ProgressFormat.bar(100, of: 100, inner: 10), "[==========]")
        XCTAssertEqual(ProgressFormat.bar(0, of: 0, inner: 4), "[====]")
        XCTAssertEqual(ProgressFormat.eta(2.2), "3s")
        XCTAssertEqual(ProgressFormat.eta(65), "1m 5s")
        XCTAssertEqual(ProgressFormat.eta(7380), "2h 3m")
        XCTAssertEqual(ProgressFormat.eta(4 * 86_400 + 5 * 3600), "4d 5h")
        XCTAssertNil(ProgressFormat.eta(100 * 86_400))
        XCTAssertNil(ProgressFormat.eta(.nan))
    }

    func testRateMeterLooksAtTheRecentWindow() {
        var meter = RateMeter(window: 5, minimumSpan: 0.25)
        XCTAssertNil(meter.bytesPerSecond)
        meter.add(bytes: 0, at: 100)
        meter.add(bytes: 100, at: 100.1)
        XCTAssertNil(meter.bytesPerSecond, "too short a span to say")
        meter.add(bytes: 1000, at: 101)
        XCTAssertEqual(meter.bytesPerSecond ?? 0, 1000, accuracy: 0.001)
        // Slower later: after the window has passed, the fast start no longer counts.
        for second in 2...10 { meter.add(bytes: 1000 + Int64(second - 1) * 100, at: 100 + Double(second)) }
        XCTAssertEqual(meter.bytesPerSecond ?? 0, 100, accuracy: 0.001)
    }

    func testRateMeterStartsOverWhenTheDownloadDoes() {
        var meter = RateMeter(window: 5, minimumSpan: 0.25)
        meter.add(bytes: 0, at: 0)
        meter.add(bytes: 5000, at: 1)
        meter.add(bytes: 100, at: 2)
        XCTAssertNil(meter.bytesPerSecond)
        meter.add(bytes: 300, at: 3)
        XCTAssertEqual(meter.bytesPerSecond ?? 0, 200, accuracy: 0.001)
    }
}
