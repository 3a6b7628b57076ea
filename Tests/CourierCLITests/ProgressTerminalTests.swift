import XCTest
import CourierTestServer
import Courier
@testable import courier
#if canImport(Glibc)
import Glibc
#endif

/// The progress line on a real terminal (a pseudo-terminal): it fits the terminal's width, and a
/// resize (SIGWINCH) redraws it to fit the new one.
final class ProgressTerminalTests: CommandLineTestCase {
    func testTheLineFitsFortyColumnsAndGrowsABarWhenTheTerminalWidens() throws {
        server.addFile("slow.bin", data: TestServer.deterministicBytes(count: 2 * 1024 * 1024, seed: 91))
        let terminal = try PseudoTerminal()
        try terminal.setSize(columns: 40)
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.lowercased().hasSuffix("_proxy") }
        environment["no_proxy"] = "127.0.0.1,localhost"
        environment["COLUMNS"] = "200"  // the terminal's own answer wins
        let output = directory.appendingPathComponent("slow.bin").path
        // 128 writes of 16 KiB, 40 ms apart: about five seconds.
        let command = try terminal.spawnSessionLeader(
            executable.path,
            ["courier", "get", server.url("/files/slow.bin?chunk=16384&chunk_delay_ms=40").absoluteString, "-o", output],
            environment: environment, standardError: nil)
        defer { command.killIfRunning() }

        // Given 40 columns, when a second and a half of progress is drawn
        var narrow = ""
        let resizeAt = Date().addingTimeInterval(1.5)
        while Date() < resizeAt, command.poll() == nil { narrow += terminal.read(timeout: 0.1) }
        // and the terminal is widened to 100 columns (the kernel sends SIGWINCH)
        try terminal.setSize(columns: 100)
        var wide = ""
        let deadline = Date().addingTimeInterval(30)
        while command.poll() == nil, Date() < deadline { wide += terminal.read(timeout: 0.1) }
        wide += terminal.read(timeout: 0.2)

        // Then the download succeeded,
        XCTAssertEqual(command.wait(timeout: 5), .exited(0), narrow + wide)
        // every line drawn at 40 columns stayed within 39 and had no room for a bar,
        let narrowLines = Self.lines(narrow)
        XCTAssertFalse(narrowLines.isEmpty, narrow.debugDescription)
        for line in narrowLines {
            XCTAssertLessThanOrEqual(ProgressFormat.columns(of: line), 39, line.debugDescription)
            XCTAssertFalse(line.contains("["), line)
        }
        XCTAssertTrue(narrowLines.contains { $0.contains("%") && $0.contains("KiB/s") && $0.contains("eta") }, narrow.debugDescription)
        // and after the resize the line grew a bar, still short of the last column.
        let wideLines = Self.lines(wide).filter { !$0.hasPrefix("courier: saved") }
        XCTAssertTrue(wideLines.contains { $0.hasPrefix("slow.bin ") && $0.contains("% [") && $0.contains("]") }, wide.debugDescription)
        for line in wideLines { XCTAssertLessThanOrEqual(ProgressFormat.columns(of: line), 99, line.debugDescription) }
        XCTAssertTrue(wide.contains("courier: saved \(output)"), wide.debugDescription)
    }

    /// What was drawn: the text between carriage returns and line feeds, trailing blanks removed.
    private static func lines(_ text: String) -> [String] {
        text.split(whereSeparator: { $0 == "\r" || $0 == "\n" || $0 == "\r\n" }).map {
            var line = String($0)
            while line.last == " " { line.removeLast() }
            return line
        }.filter { !$0.isEmpty }
    }
}
