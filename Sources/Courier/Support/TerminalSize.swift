import Foundation

/// The terminal's width in columns, for ``ProgressPrinter`` and other text fitted to a terminal.
public enum TerminalSize {
    /// What the terminal on `descriptor` (stderr, where progress goes, unless told) says
    /// (`TIOCGWINSZ`), else `COLUMNS`, else 80.
    public static func columns(of descriptor: Int32 = STDERR_FILENO) -> Int {
        var size = winsize()
        let fromTerminal = ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0 ? Int(size.ws_col) : nil
        return columns(terminal: fromTerminal, environment: ProcessInfo.processInfo.environment)
    }

    /// The rule, without the system: `terminal` (the terminal's answer, if any) when it gave one above 0, else a
    /// positive `COLUMNS`, else 80.
    public static func columns(terminal: Int?, environment: [String: String]) -> Int {
        if let terminal, terminal > 0 { return terminal }
        if let text = environment["COLUMNS"], let columns = Int(text.trimmingCharacters(in: .whitespaces)), columns > 0 {
            return columns
        }
        return 80
    }
}
