import Foundation
internal import CourierSupport

/// Shows one download's progress on stderr, as `courier get` does: one line redrawn with `\r` on
/// a terminal (``ProgressFormat/terminalLine(name:completed:total:bytesPerSecond:connections:columns:)``,
/// fitted to its width: ``resize(columns:)`` on SIGWINCH), a plain line about once a second
/// otherwise (logs, pipes), nothing when quiet. Feed it a task's progress (``update(completed:total:connections:)``);
/// the clock and the writer are arguments, so tests run it without a terminal. Thread-safe:
/// updates may come from the manager's queue, `finish()` and `message(_:)` from any thread.
public final class ProgressPrinter: Sendable {
    /// How progress is shown.
    public enum Style: Sendable {
        /// stderr is a terminal: redraw one line.
        case terminal
        /// stderr is a file or pipe: a plain line at most every ``ProgressPrinter/plainInterval``.
        case plain
        /// `--quiet`: no progress and no summary.
        case quiet
    }

    /// Seconds between plain lines (and before the first, so quick downloads print none).
    public static let plainInterval = 1.0
    /// Seconds between terminal redraws.
    public static let terminalInterval = 0.1

    /// How progress is shown.
    public let style: Style
    private let linePrefix: String
    private let now: @Sendable () -> Double
    private let write: @Sendable (String) -> Void
    private let state: Locked<State>

    private struct State {
        var start: Double?
        var lastPrint: Double?
        var meter = RateMeter()
        /// Columns of the line on screen (terminal style), for blanking a longer old line.
        var drawnWidth = 0
        /// The newest snapshot, and whether it is the one on screen (terminal style).
        var latest: (completed: Int64, total: Int64?)?
        var latestDrawn = false
        var finished = false
        /// The terminal's width.
        var columns: Int
        /// The file's name, shown first on the terminal line.
        var name: String?
        /// The connections the download uses now (terminal style shows more than one).
        var connections = 1
    }

    /// A printer in `style` for a terminal `columns` wide, naming the file `name` on the terminal
    /// line; plain lines start with `linePrefix` (`courier: `). `now` gives seconds on a monotonic
    /// clock, `write` takes each piece of text as it is to be written.
    public init(
        style: Style, columns: Int = 80, name: String? = nil, linePrefix: String = "",
        now: @escaping @Sendable () -> Double = ProgressPrinter.monotonicSeconds,
        write: @escaping @Sendable (String) -> Void = ProgressPrinter.standardError
    ) {
        self.style = style
        self.linePrefix = linePrefix
        self.now = now
        self.write = write
        self.state = Locked(State(columns: columns, name: name))
    }

    /// The style for this process: quiet when asked, terminal when stderr is one.
    public static func style(quiet: Bool) -> Style {
        if quiet { return .quiet }
        return isatty(STDERR_FILENO) != 0 ? .terminal : .plain
    }

    /// Notes that the download has started, so the first plain line waits a full interval.
    public func start() {
        let time = now()
        state.withLock { if $0.start == nil { $0.start = time } }
    }

    /// Names the file on the terminal line (its name may be known only once the headers arrive).
    public func setName(_ name: String) {
        state.withLock { $0.name = name }
    }

    /// The terminal is now `columns` wide: the line is redrawn to fit at once.
    public func resize(columns: Int) {
        state.withLock { state in
            guard state.columns != columns else { return }
            state.columns = columns
            guard style == .terminal, !state.finished, state.latest != nil else { return }
            draw(&state)
        }
    }

    /// Takes a progress snapshot, with the connections the download uses now (shown on a
    /// terminal while more than one; plain lines do not change); prints when a line is due.
    public func update(completed: Int64, total: Int64?, connections: Int = 1) {
        guard style != .quiet else { return }
        let time = now()
        // Written under the lock so no stale update can land after `finish()`.
        state.withLock { state in
            guard !state.finished else { return }
            if state.start == nil { state.start = time }
            state.meter.add(bytes: completed, at: time)
            state.latest = (completed, total)
            state.connections = connections
            state.latestDrawn = false
            guard Self.isDue(style: style, now: time, start: state.start ?? time, lastPrint: state.lastPrint) else {
                return
            }
            state.lastPrint = time
            switch style {
            case .terminal:
                draw(&state)
            case .plain:
                let line =
                    linePrefix + ProgressFormat.logLine(completed: completed, total: total, bytesPerSecond: state.meter.bytesPerSecond)
                write(line + "\n")
            case .quiet:
                break
            }
        }
    }

    /// Prints `line` (and a line break) on a line of its own: on a terminal the progress line is
    /// blanked first and redrawn below it with the next update. Printed whatever the style: the
    /// caller decides what `--quiet` leaves out.
    public func message(_ line: String) {
        state.withLock { state in
            guard style == .terminal, state.drawnWidth > 0 else { return write(line + "\n") }
            let blank = String(repeating: " ", count: min(state.drawnWidth, max(state.columns - 1, 1)))
            state.drawnWidth = 0
            state.latestDrawn = false
            write("\r" + blank + "\r" + line + "\n")
        }
    }

    /// Stops progress output. On a terminal, draws the newest snapshot if a throttled redraw
    /// skipped it (so a finished download shows 100%), then ends the line so that what follows
    /// starts on a line of its own.
    public func finish() {
        state.withLock { state in
            guard !state.finished else { return }
            state.finished = true
            guard style == .terminal else { return }
            if state.latest != nil, !state.latestDrawn { draw(&state) }
            if state.drawnWidth > 0 { write("\n") }
        }
    }

    /// Redraws the terminal line from the newest snapshot, blanking what is left of a longer
    /// previous one (within the terminal's width: blanks past it would wrap).
    private func draw(_ state: inout State) {
        guard let latest = state.latest else { return }
        let line = ProgressFormat.terminalLine(
            name: state.name, completed: latest.completed, total: latest.total,
            bytesPerSecond: state.meter.bytesPerSecond, connections: state.connections, columns: state.columns)
        let width = ProgressFormat.columns(of: line)
        let padding = max(0, min(state.drawnWidth, max(state.columns - 1, 1)) - width)
        state.drawnWidth = width
        state.latestDrawn = true
        write("\r" + line + String(repeating: " ", count: padding))
    }

    /// Whether a progress line is due at `now`. A millisecond of slack, so that updates the
    /// library paces at exactly the interval are not skipped for rounding.
    public static func isDue(style: Style, now: Double, start: Double, lastPrint: Double?) -> Bool {
        let slack = 0.001
        switch style {
        case .quiet:
            return false
        case .terminal:
            return lastPrint.map { now - $0 >= terminalInterval - slack } ?? true
        case .plain:
            return now - (lastPrint ?? start) >= plainInterval - slack
        }
    }

    /// Seconds on the monotonic clock: the printers' default `now`.
    @Sendable public static func monotonicSeconds() -> Double {
        Double(DispatchTime.now().uptimeNanoseconds) / 1e9
    }

    /// Writes `text` to stderr with the URLs in it masked by ``Redaction/default`` (a message can
    /// carry a URL with a token in its query or user info): the printers' default `write`. A
    /// program with names of its own to mask passes its own `write` (`courier` passes each line
    /// through the `Redaction` its options chose).
    @Sendable public static func standardError(_ text: String) {
        FileHandle.standardError.write(Data(Redaction.default.redactingURLs(in: text).utf8))
    }
}
