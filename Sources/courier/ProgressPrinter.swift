import Foundation

/// The text of progress and summary lines. Pure (no clock, no I/O), so every case can be pinned
/// down by unit tests.
enum ProgressFormat {
    private static let units = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]

    /// A byte count in binary units with one decimal: `0 B`, `1023 B`, `1.0 KiB`, `12.3 MiB`.
    static func bytes(_ count: Int64) -> String {
        guard count >= 1024 else { return "\(max(count, 0)) B" }
        var value = Double(count) / 1024
        var index = 0
        // 1023.96 KiB would print as "1024.0 KiB": move up a unit before rounding gets there.
        while value >= 1023.95, index < units.count - 1 {
            value /= 1024
            index += 1
        }
        return String(format: "%.1f", value) + " " + units[index]
    }

    /// A transfer rate: `512 B/s`, `85.3 MiB/s`.
    static func rate(_ bytesPerSecond: Double) -> String {
        guard bytesPerSecond.isFinite, bytesPerSecond > 0 else { return "0 B/s" }
        return bytes(Int64(min(bytesPerSecond, 9e18).rounded())) + "/s"
    }

    /// A time left: `0:05`, `12:34`, `1:02:03`; `--:--` when unknown or beyond 99 hours.
    static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0, seconds < 100 * 3600 else { return "--:--" }
        let total = Int(seconds.rounded(.up))
        let hours = total / 3600
        let minutes = total % 3600 / 60
        let rest = total % 60
        let two = { (value: Int) in value < 10 ? "0\(value)" : "\(value)" }
        return hours > 0 ? "\(hours):\(two(minutes)):\(two(rest))" : "\(minutes):\(two(rest))"
    }

    /// Whole percent done, rounded down so that 100% means every byte is there; `nil` when
    /// the total is unknown.
    static func percent(_ completed: Int64, of total: Int64?) -> Int? {
        guard let total, total >= 0 else { return nil }
        guard total > 0 else { return 100 }
        if completed >= total { return 100 }
        return max(0, min(99, Int((Double(completed) * 100 / Double(total)).rounded(.down))))
    }

    /// Seconds until `total` at `bytesPerSecond`, when both are known.
    static func secondsLeft(_ completed: Int64, of total: Int64?, at bytesPerSecond: Double?) -> Double? {
        guard let total, let bytesPerSecond, bytesPerSecond > 0 else { return nil }
        return Double(max(total - completed, 0)) / bytesPerSecond
    }

    /// The line redrawn in place on a terminal:
    /// `12.0 MiB / 64.0 MiB  18%  85.3 MiB/s  ETA 0:01`, or `12.0 MiB  85.3 MiB/s` with no total.
    /// Rate and ETA are left out until a rate has been measured.
    static func terminalLine(completed: Int64, total: Int64?, bytesPerSecond: Double?) -> String {
        var parts: [String] = []
        if let total, let percent = percent(completed, of: total) {
            parts.append("\(bytes(completed)) / \(bytes(total))")
            parts.append("\(percent)%")
        } else {
            parts.append(bytes(completed))
        }
        if let bytesPerSecond {
            parts.append(rate(bytesPerSecond))
            if let left = secondsLeft(completed, of: total, at: bytesPerSecond) {
                parts.append("ETA \(duration(left))")
            }
        }
        return parts.joined(separator: "  ")
    }

    /// A progress line for a log (stderr not a terminal):
    /// `courier: 12.0 MiB of 64.0 MiB (18%) 85.3 MiB/s, ETA 0:01`, or `courier: 12.0 MiB 85.3 MiB/s`.
    static func plainLine(completed: Int64, total: Int64?, bytesPerSecond: Double?) -> String {
        var text = "courier: "
        if let total, let percent = percent(completed, of: total) {
            text += "\(bytes(completed)) of \(bytes(total)) (\(percent)%)"
        } else {
            text += bytes(completed)
        }
        if let bytesPerSecond {
            text += " " + rate(bytesPerSecond)
            if let left = secondsLeft(completed, of: total, at: bytesPerSecond) { text += ", ETA \(duration(left))" }
        }
        return text
    }

    /// The line printed once a download is saved:
    /// `courier: saved /tmp/x.bin (64.0 MiB in 1.2 s, 53.3 MiB/s; continued from 12.0 MiB; 1 retry)`.
    /// The rate counts the bytes this run received, not those already on disk.
    static func summary(
        path: String, size: Int64, seconds: Double, bytesReceived: Int64, resumedBytes: Int64, retries: Int
    ) -> String {
        var details = "\(bytes(size)) in \(String(format: "%.1f", max(seconds, 0))) s"
        if seconds > 0, bytesReceived > 0 { details += ", \(rate(Double(bytesReceived) / seconds))" }
        if resumedBytes > 0 { details += "; continued from \(bytes(resumedBytes))" }
        if retries > 0 { details += "; \(retries) \(retries == 1 ? "retry" : "retries")" }
        return "courier: saved \(path) (\(details))"
    }
}

/// The transfer rate over the last few seconds, from (time, bytes done) samples.
struct RateMeter {
    /// How far back the rate looks, in seconds.
    let window: Double
    /// The shortest span worth computing a rate over; shorter spans give wild numbers.
    let minimumSpan: Double
    private var samples: [(time: Double, bytes: Int64)] = []

    init(window: Double = 5, minimumSpan: Double = 0.25) {
        self.window = window
        self.minimumSpan = minimumSpan
    }

    /// Records that `bytes` were done at `time` (seconds on a monotonic clock).
    mutating func add(bytes: Int64, at time: Double) {
        // Fewer bytes than before means the download started over: the old samples mean nothing.
        if let last = samples.last, bytes < last.bytes || time < last.time { samples.removeAll() }
        samples.append((time, bytes))
        // Keep one sample at or before the window's start, so the span covers the whole window.
        while samples.count > 2, samples[1].time <= time - window { samples.removeFirst() }
    }

    /// Bytes per second over the window, or `nil` until the samples span `minimumSpan`.
    var bytesPerSecond: Double? {
        guard let first = samples.first, let last = samples.last, last.time - first.time >= minimumSpan else {
            return nil
        }
        return Double(last.bytes - first.bytes) / (last.time - first.time)
    }
}

/// Shows download progress on stderr: one line redrawn with `\r` on a terminal, a plain line
/// about once a second otherwise (logs, pipes), nothing when quiet. Thread-safe: updates come
/// from the manager's queue, `finish()` and `message(_:)` from the main thread.
final class ProgressPrinter: Sendable {
    enum Style: Sendable {
        /// stderr is a terminal: redraw one line.
        case terminal
        /// stderr is a file or pipe: a plain line at most every ``ProgressPrinter/plainInterval``.
        case plain
        /// `--quiet`: no progress and no summary.
        case quiet
    }

    /// Seconds between plain lines (and before the first, so quick downloads print none).
    static let plainInterval = 1.0
    /// Seconds between terminal redraws.
    static let terminalInterval = 0.1

    let style: Style
    private let now: @Sendable () -> Double
    private let write: @Sendable (String) -> Void
    private let state: Guarded<State>

    private struct State {
        var start: Double?
        var lastPrint: Double?
        var meter = RateMeter()
        /// Characters of the line on screen (terminal style), for blanking a longer old line.
        var drawnWidth = 0
        /// The newest snapshot, and whether it is the one on screen (terminal style).
        var latest: (completed: Int64, total: Int64?)?
        var latestDrawn = false
        var finished = false
    }

    init(
        style: Style, now: @escaping @Sendable () -> Double = ProgressPrinter.monotonicSeconds,
        write: @escaping @Sendable (String) -> Void = ProgressPrinter.writeToStandardError
    ) {
        self.style = style
        self.now = now
        self.write = write
        self.state = Guarded(State())
    }

    /// The style for this process: quiet when asked, terminal when stderr is one.
    static func style(quiet: Bool) -> Style {
        if quiet { return .quiet }
        return isatty(STDERR_FILENO) != 0 ? .terminal : .plain
    }

    /// Notes that the download has started, so the first plain line waits a full interval.
    func start() {
        let time = now()
        state.withLock { if $0.start == nil { $0.start = time } }
    }

    /// Takes a progress snapshot; prints when a line is due.
    func update(completed: Int64, total: Int64?) {
        guard style != .quiet else { return }
        let time = now()
        // Written under the lock so no stale update can land after `finish()`.
        state.withLock { state in
            guard !state.finished else { return }
            if state.start == nil { state.start = time }
            state.meter.add(bytes: completed, at: time)
            state.latest = (completed, total)
            state.latestDrawn = false
            guard Self.isDue(style: style, now: time, start: state.start ?? time, lastPrint: state.lastPrint) else {
                return
            }
            state.lastPrint = time
            switch style {
            case .terminal:
                draw(completed: completed, total: total, &state)
            case .plain:
                let line = ProgressFormat.plainLine(completed: completed, total: total, bytesPerSecond: state.meter.bytesPerSecond)
                write(line + "\n")
            case .quiet:
                break
            }
        }
    }

    /// Stops progress output. On a terminal, draws the newest snapshot if a throttled redraw
    /// skipped it (so a finished download shows 100%), then ends the line so that what follows
    /// starts on a line of its own.
    func finish() {
        state.withLock { state in
            guard !state.finished else { return }
            state.finished = true
            guard style == .terminal else { return }
            if let latest = state.latest, !state.latestDrawn { draw(completed: latest.completed, total: latest.total, &state) }
            if state.drawnWidth > 0 { write("\n") }
        }
    }

    /// Redraws the terminal line, blanking what is left of a longer previous one.
    private func draw(completed: Int64, total: Int64?, _ state: inout State) {
        let line = ProgressFormat.terminalLine(completed: completed, total: total, bytesPerSecond: state.meter.bytesPerSecond)
        let padding = String(repeating: " ", count: max(0, state.drawnWidth - line.count))
        state.drawnWidth = line.count
        state.latestDrawn = true
        write("\r" + line + padding)
    }

    /// Whether a progress line is due at `now`. A millisecond of slack, so that updates the
    /// library paces at exactly the interval are not skipped for rounding.
    static func isDue(style: Style, now: Double, start: Double, lastPrint: Double?) -> Bool {
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

    @Sendable static func monotonicSeconds() -> Double {
        Double(DispatchTime.now().uptimeNanoseconds) / 1e9
    }

    @Sendable static func writeToStandardError(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
