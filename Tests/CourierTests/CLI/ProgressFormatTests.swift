import XCTest
@testable import courier

/// The pure text of `courier get`'s progress, ETA and summary lines, and the printer's pacing.
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

    func testTerminalLine() {
        let mib: Int64 = 1024 * 1024
        XCTAssertEqual(
            ProgressFormat.terminalLine(completed: 12 * mib, total: 64 * mib, bytesPerSecond: 26 * 1024 * 1024),
            "12.0 MiB / 64.0 MiB  18%  26.0 MiB/s  ETA 0:02")
        XCTAssertEqual(
            ProgressFormat.terminalLine(completed: 12 * mib, total: nil, bytesPerSecond: 1024), "12.0 MiB  1.0 KiB/s")
        XCTAssertEqual(ProgressFormat.terminalLine(completed: 0, total: 64 * mib, bytesPerSecond: nil), "0 B / 64.0 MiB  0%")
    }

    func testPlainLine() {
        let mib: Int64 = 1024 * 1024
        XCTAssertEqual(
            ProgressFormat.plainLine(completed: 12 * mib, total: 64 * mib, bytesPerSecond: 85.3 * 1024 * 1024),
            "courier: 12.0 MiB of 64.0 MiB (18%) 85.3 MiB/s, ETA 0:01")
        XCTAssertEqual(ProgressFormat.plainLine(completed: 2048, total: nil, bytesPerSecond: 1024), "courier: 2.0 KiB 1.0 KiB/s")
        XCTAssertEqual(ProgressFormat.plainLine(completed: 2048, total: nil, bytesPerSecond: nil), "courier: 2.0 KiB")
    }

    func testSummary() {
        let mib: Int64 = 1024 * 1024
        XCTAssertEqual(
            ProgressFormat.summary(
                path: "/tmp/a.bin", size: 64 * mib, seconds: 2, bytesReceived: 52 * mib, resumedBytes: 12 * mib, retries: 1),
            "courier: saved /tmp/a.bin (64.0 MiB in 2.0 s, 26.0 MiB/s; continued from 12.0 MiB; 1 retry)")
        XCTAssertEqual(
            ProgressFormat.summary(path: "x", size: 10, seconds: 0, bytesReceived: 10, resumedBytes: 0, retries: 2),
            "courier: saved x (10 B in 0.0 s; 2 retries)")
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

    func testPacing() {
        XCTAssertFalse(ProgressPrinter.isDue(style: .plain, now: 10.5, start: 10, lastPrint: nil), "not in the first second")
        XCTAssertTrue(ProgressPrinter.isDue(style: .plain, now: 11, start: 10, lastPrint: nil))
        XCTAssertFalse(ProgressPrinter.isDue(style: .plain, now: 11.9, start: 10, lastPrint: 11))
        XCTAssertTrue(ProgressPrinter.isDue(style: .plain, now: 12, start: 10, lastPrint: 11))
        XCTAssertTrue(ProgressPrinter.isDue(style: .terminal, now: 10, start: 10, lastPrint: nil))
        XCTAssertFalse(ProgressPrinter.isDue(style: .terminal, now: 10.05, start: 10, lastPrint: 10))
        XCTAssertTrue(ProgressPrinter.isDue(style: .terminal, now: 10.1, start: 10, lastPrint: 10))
        XCTAssertFalse(ProgressPrinter.isDue(style: .quiet, now: 100, start: 0, lastPrint: nil))
    }

    func testTerminalPrinterRedrawsOneLineAndEndsItOnFinish() {
        let clock = Guarded(0.0)
        let written = Guarded("")
        let printer = ProgressPrinter(
            style: .terminal, now: { clock.current }, write: { text in written.withLock { $0 += text } })
        printer.update(completed: 0, total: 2048)
        clock.set(1)
        printer.update(completed: 1024, total: 2048)
        clock.set(1.01)
        printer.update(completed: 2048, total: 2048)  // throttled, but drawn by finish()
        printer.finish()
        printer.update(completed: 2048, total: 2048)  // after finish: ignored
        XCTAssertEqual(
            written.current,
            "\r0 B / 2.0 KiB  0%" + "\r1.0 KiB / 2.0 KiB  50%  1.0 KiB/s  ETA 0:01"
                + "\r2.0 KiB / 2.0 KiB  100%  2.0 KiB/s  ETA 0:00" + "\n")
    }

    func testTerminalPrinterBlanksTheRestOfALongerLine() {
        let clock = Guarded(0.0)
        let written = Guarded("")
        let printer = ProgressPrinter(
            style: .terminal, now: { clock.current }, write: { text in written.withLock { $0 += text } })
        printer.update(completed: 5000, total: 10000)
        clock.set(1)
        printer.update(completed: 0, total: nil)  // the download started over, total unknown
        XCTAssertEqual(written.current, "\r4.9 KiB / 9.8 KiB  50%" + "\r0 B" + String(repeating: " ", count: 19))
    }

    func testPlainAndQuietPrinters() {
        let clock = Guarded(0.0)
        let written = Guarded("")
        let plain = ProgressPrinter(style: .plain, now: { clock.current }, write: { text in written.withLock { $0 += text } })
        plain.start()
        plain.update(completed: 0, total: 4096)
        clock.set(1)
        plain.update(completed: 1024, total: 4096)
        clock.set(1.5)
        plain.update(completed: 2048, total: 4096)
        plain.finish()
        XCTAssertEqual(written.current, "courier: 1.0 KiB of 4.0 KiB (25%) 1.0 KiB/s, ETA 0:03\n", "nothing to end on finish")

        let quietOutput = Guarded("")
        let quiet = ProgressPrinter(style: .quiet, now: { clock.current }, write: { text in quietOutput.withLock { $0 += text } })
        quiet.update(completed: 1, total: 2)
        clock.set(10)
        quiet.update(completed: 2, total: 2)
        quiet.finish()
        XCTAssertEqual(quietOutput.current, "")
    }
}
