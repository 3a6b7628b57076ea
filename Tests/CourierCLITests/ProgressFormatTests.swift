import XCTest
@testable import courier
import CourierSupport

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

    func testTerminalWidthComesFromTheTerminalThenCOLUMNSThen80() {
        XCTAssertEqual(TerminalSize.columns(terminal: 132, environment: ["COLUMNS": "40"]), 132)
        XCTAssertEqual(TerminalSize.columns(terminal: 0, environment: ["COLUMNS": "40"]), 40, "a pty that was never sized says 0")
        XCTAssertEqual(TerminalSize.columns(terminal: nil, environment: ["COLUMNS": " 100 "]), 100)
        XCTAssertEqual(TerminalSize.columns(terminal: nil, environment: ["COLUMNS": "wide"]), 80)
        XCTAssertEqual(TerminalSize.columns(terminal: nil, environment: ["COLUMNS": "-3"]), 80)
        XCTAssertEqual(TerminalSize.columns(terminal: nil, environment: [:]), 80)
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
        let clock = Locked(0.0)
        let written = Locked("")
        let printer = ProgressPrinter(
            style: .terminal, columns: 40, name: "f.bin", now: { clock.current }, write: { text in written.withLock { $0 += text } })
        printer.update(completed: 0, total: 2048)
        clock.set(1)
        printer.update(completed: 1024, total: 2048)
        clock.set(1.01)
        printer.update(completed: 2048, total: 2048)  // throttled, but drawn by finish()
        printer.finish()
        printer.update(completed: 2048, total: 2048)  // after finish: ignored
        XCTAssertEqual(
            written.current,
            "\rf.bin  0%  0 B" + "\rf.bin  50%  1.0 KiB  1.0 KiB/s  eta 1s" + "\rf.bin  100%  2.0 KiB  2.0 KiB/s  eta 0s" + "\n")
    }

    func testTerminalPrinterBlanksTheRestOfALongerLine() {
        let clock = Locked(0.0)
        let written = Locked("")
        let printer = ProgressPrinter(
            style: .terminal, columns: 40, now: { clock.current }, write: { text in written.withLock { $0 += text } })
        printer.update(completed: 5000, total: 10000)
        clock.set(1)
        printer.update(completed: 0, total: nil)  // the download started over, total unknown
        XCTAssertEqual(written.current, "\r50%  4.9 KiB" + "\r0 B" + String(repeating: " ", count: 9))
    }

    func testTerminalPrinterRedrawsToFitWhenTheTerminalIsResized() {
        let clock = Locked(0.0)
        let written = Locked("")
        let printer = ProgressPrinter(
            style: .terminal, columns: 80, name: "f.bin", now: { clock.current },
            write: { text in written.withLock { $0 += text } })
        printer.update(completed: 5 * 1024, total: 10 * 1024)
        XCTAssertTrue(written.current.contains("["), "a bar at 80 columns: \(written.current)")
        written.set("")
        printer.resize(columns: 20)
        let redrawn = written.current
        XCTAssertTrue(redrawn.hasPrefix("\r"), redrawn)
        XCTAssertLessThanOrEqual(
            redrawn.dropFirst().count, 19, "neither line nor blanking passes the new width: \(redrawn.debugDescription)")
        XCTAssertFalse(redrawn.contains("["))
        written.set("")
        printer.resize(columns: 20)
        XCTAssertEqual(written.current, "", "the same width again: nothing to redraw")
    }

    func testMessagesBlankTheProgressLineAndTheNextUpdateRedrawsIt() {
        let clock = Locked(0.0)
        let written = Locked("")
        let printer = ProgressPrinter(
            style: .terminal, columns: 40, now: { clock.current }, write: { text in written.withLock { $0 += text } })
        printer.update(completed: 1024, total: nil)
        printer.message("courier: retrying")
        clock.set(1)
        printer.update(completed: 2048, total: nil)
        XCTAssertEqual(written.current, "\r1.0 KiB" + "\r       \rcourier: retrying\n" + "\r2.0 KiB  1.0 KiB/s")

        let plain = Locked("")
        let log = ProgressPrinter(style: .plain, now: { clock.current }, write: { text in plain.withLock { $0 += text } })
        log.message("courier: retrying")
        XCTAssertEqual(plain.current, "courier: retrying\n")
    }

    func testOnlyTheTerminalPrinterShowsTheConnectionCount() {
        // Given a terminal printer and a plain one, each told of 3 connections
        let clock = Locked(0.0)
        let terminal = Locked("")
        let plain = Locked("")
        let onTerminal = ProgressPrinter(
            style: .terminal, columns: 60, name: "f.bin", now: { clock.current }, write: { text in terminal.withLock { $0 += text } })
        let inALog = ProgressPrinter(style: .plain, now: { clock.current }, write: { text in plain.withLock { $0 += text } })
        for printer in [onTerminal, inALog] {
            printer.start()
            printer.update(completed: 0, total: 2048, connections: 3)
        }
        clock.set(1)
        for printer in [onTerminal, inALog] {
            printer.update(completed: 1024, total: 2048, connections: 3)
            printer.finish()
        }
        // Then the terminal line has it and the log line is as it always was
        XCTAssertTrue(terminal.current.contains("3 conn"), terminal.current.debugDescription)
        XCTAssertEqual(plain.current, "courier: 1.0 KiB of 2.0 KiB (50%) 1.0 KiB/s, ETA 0:01\n")
    }

    func testPlainAndQuietPrinters() {
        let clock = Locked(0.0)
        let written = Locked("")
        let plain = ProgressPrinter(style: .plain, now: { clock.current }, write: { text in written.withLock { $0 += text } })
        plain.start()
        plain.update(completed: 0, total: 4096)
        clock.set(1)
        plain.update(completed: 1024, total: 4096)
        clock.set(1.5)
        plain.update(completed: 2048, total: 4096)
        plain.finish()
        XCTAssertEqual(written.current, "courier: 1.0 KiB of 4.0 KiB (25%) 1.0 KiB/s, ETA 0:03\n", "nothing to end on finish")

        let quietOutput = Locked("")
        let quiet = ProgressPrinter(style: .quiet, now: { clock.current }, write: { text in quietOutput.withLock { $0 += text } })
        quiet.update(completed: 1, total: 2)
        clock.set(10)
        quiet.update(completed: 2, total: 2)
        quiet.finish()
        XCTAssertEqual(quietOutput.current, "")
    }
}
