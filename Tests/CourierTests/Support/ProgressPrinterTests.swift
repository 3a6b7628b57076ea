import XCTest
import Courier
import CourierSupport

/// `ProgressPrinter`: the terminal's width, the log line, the pacing, and what each style writes
/// (time and the writer are arguments: no terminal, no clock).
final class ProgressPrinterTests: XCTestCase {
    func testTerminalWidthComesFromTheTerminalThenCOLUMNSThen80() {
        XCTAssertEqual(TerminalSize.columns(terminal: 132, environment: ["COLUMNS": "40"]), 132)
        XCTAssertEqual(TerminalSize.columns(terminal: 0, environment: ["COLUMNS": "40"]), 40, "a pty that was never sized says 0")
        XCTAssertEqual(TerminalSize.columns(terminal: nil, environment: ["COLUMNS": " 100 "]), 100)
        XCTAssertEqual(TerminalSize.columns(terminal: nil, environment: ["COLUMNS": "wide"]), 80)
        XCTAssertEqual(TerminalSize.columns(terminal: nil, environment: ["COLUMNS": "-3"]), 80)
        XCTAssertEqual(TerminalSize.columns(terminal: nil, environment: [:]), 80)
    }

    func testTheDefaultWriterMasksTheSecretsOfURLsInWhatItWrites() throws {
        // Given stderr pointed at a file
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("stderr-\(UUID().uuidString)")
        XCTAssertTrue(FileManager.default.createFile(atPath: file.path, contents: nil))
        defer { try? FileManager.default.removeItem(at: file) }
        let handle = try FileHandle(forWritingTo: file)
        let saved = dup(2)
        dup2(handle.fileDescriptor, 2)
        // When the printers' default writer writes a line naming a URL with a password and a token
        ProgressPrinter.standardError("retrying https://user:hunter2@example.com/f.bin?token=s3cret&part=1\n")
        dup2(saved, 2)
        close(saved)
        try handle.close()
        // Then neither secret reaches stderr, and the rest of the line does
        let text = try String(contentsOf: file, encoding: .utf8)
        XCTAssertFalse(text.contains("hunter2"), text)
        XCTAssertFalse(text.contains("s3cret"), text)
        XCTAssertTrue(text.contains("example.com/f.bin"), text)
        XCTAssertTrue(text.contains("part=1"), text)
    }

    func testLogLine() {
        let mib: Int64 = 1024 * 1024
        XCTAssertEqual(
            ProgressFormat.logLine(completed: 12 * mib, total: 64 * mib, bytesPerSecond: 85.3 * 1024 * 1024),
            "12.0 MiB of 64.0 MiB (18%) 85.3 MiB/s, ETA 0:01")
        XCTAssertEqual(ProgressFormat.logLine(completed: 2048, total: nil, bytesPerSecond: 1024), "2.0 KiB 1.0 KiB/s")
        XCTAssertEqual(ProgressFormat.logLine(completed: 2048, total: nil, bytesPerSecond: nil), "2.0 KiB")
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
        let log = ProgressPrinter(
            style: .plain, linePrefix: "courier: ", now: { clock.current }, write: { text in plain.withLock { $0 += text } })
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
        let inALog = ProgressPrinter(
            style: .plain, linePrefix: "courier: ", now: { clock.current }, write: { text in plain.withLock { $0 += text } })
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
        let plain = ProgressPrinter(
            style: .plain, linePrefix: "courier: ", now: { clock.current }, write: { text in written.withLock { $0 += text } })
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
