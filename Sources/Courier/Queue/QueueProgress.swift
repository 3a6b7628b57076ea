import Foundation
internal import CourierSupport

/// What `courier get -i` shows on stderr while its ``DownloadQueue`` runs: a display of a queue's
/// downloads for any program that runs one from a list.
///
/// On a terminal: one line per running download (``ProgressFormat``'s wget-style line) and a total
/// line below them, redrawn in place at most every ``ProgressPrinter/terminalInterval`` and
/// fitted to the terminal's width; finished downloads are printed above the block as they end.
/// In a pipe or file: one plain line when a download starts and one when it ends. Quiet: nothing.
/// The list's items are made known as their lines are read (``add(_:name:)``); the total counts
/// the lines read so far, with a `+` until the input ends. Feed it the queue's changes
/// (``update(_:)``). Thread-safe: changes may come from the queue's callback queue, messages and
/// resizes from any thread.
public final class QueueProgress: Sendable {
    /// At most this many download lines on a terminal; the rest are counted on one line.
    public static let maximumRows = 12

    /// How progress is shown.
    public let style: ProgressPrinter.Style
    private let linePrefix: String
    private let describe: @Sendable (DownloadQueue.Failure) -> String
    private let now: @Sendable () -> Double
    private let write: @Sendable (String) -> Void
    private let state: Locked<State>

    private struct Row {
        var completed: Int64 = 0
        var total: Int64?
        var meter = RateMeter()
    }

    private struct State {
        /// The display name of each unfinished item of the input, by id (others are not shown).
        var names: [String: String] = [:]
        /// The input's downloads so far.
        var count = 0
        /// Whether the input has ended (the count is final).
        var inputEnded = false
        /// Running downloads, in the order they started.
        var running: [(id: String, row: Row)] = []
        /// Bytes received so far per unfinished item in this run, and by the finished ones, for
        /// the total and its rate (kept apart so that an input without end does not grow this).
        var received: [String: Int64] = [:]
        var receivedByFinished: Int64 = 0
        /// Bytes received in this run.
        var receivedInAll: Int64 { receivedByFinished + received.values.reduce(0, +) }
        var totalMeter = RateMeter()
        var completed = 0
        var failed = 0
        /// Lines of the block on screen (terminal style).
        var drawnLines = 0
        var lastDraw: Double?
        var columns: Int
        var finished = false
    }

    /// A display for the downloads of a list, made known as its lines are read, on a terminal
    /// `columns` wide. Lines of their own start with `linePrefix` (`courier` gives its name); a
    /// failure is put in words by `describe`. `now` gives seconds on a monotonic clock, `write`
    /// takes each piece of text as it is to be written.
    public init(
        style: ProgressPrinter.Style, columns: Int, linePrefix: String = "",
        describe: @escaping @Sendable (DownloadQueue.Failure) -> String = { $0.message },
        now: @escaping @Sendable () -> Double = ProgressPrinter.monotonicSeconds,
        write: @escaping @Sendable (String) -> Void = ProgressPrinter.standardError
    ) {
        self.style = style
        self.linePrefix = linePrefix
        self.describe = describe
        self.now = now
        self.write = write
        self.state = Locked(State(columns: columns))
    }

    /// A download of the input, shown as `name` until it finishes. Called before the queue is
    /// asked to run it, so its first change finds it.
    public func add(_ id: String, name: String) {
        state.withLock { state in
            state.count += 1
            // Dropped when it finishes (``update(_:)``), which a quiet display never looks at.
            if style != .quiet { state.names[id] = name }
        }
    }

    /// A download of the input that is already done (finished by an earlier run, or its file
    /// already there and right).
    public func addDone() {
        state.withLock { state in
            state.count += 1
            state.completed += 1
        }
    }

    /// The input has ended: the total is final.
    public func inputEnded() {
        state.withLock { $0.inputEnded = true }
    }

    /// Takes one change of the queue.
    public func update(_ change: DownloadQueue.Change) {
        guard style != .quiet else { return }
        let time = now()
        state.withLock { state in
            guard !state.finished, let name = state.names[change.id] else { return }
            let index = state.running.firstIndex { $0.id == change.id }
            switch change.state {
            case .running(let received, let total):
                if let index {
                    state.running[index].row.completed = received
                    state.running[index].row.total = total
                    state.running[index].row.meter.add(bytes: received, at: time)
                } else {
                    var row = Row(completed: received, total: total)
                    row.meter.add(bytes: received, at: time)
                    state.running.append((change.id, row))
                    if style == .plain { write("\(linePrefix)started \(ProgressFormat.displayable(name))\n") }
                }
                state.received[change.id] = received
                state.totalMeter.add(bytes: state.receivedInAll, at: time)
                if style == .terminal, ProgressPrinter.isDue(style: .terminal, now: time, start: time, lastPrint: state.lastDraw) {
                    draw(&state, at: time)
                }
                return
            case .completed(let file):
                state.completed += 1
                let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?.int64Value ?? 0
                show("\(linePrefix)saved \(ProgressFormat.displayable(file.path)) (\(ProgressFormat.bytes(size)))", &state, at: time)
            case .failed(let failure):
                state.failed += 1
                show("\(linePrefix)failed: \(ProgressFormat.displayable(name)): \(describe(failure))", &state, at: time)
            case .queued, .paused, .cancelled:
                break
            }
            if change.state.isFinished {
                state.names[change.id] = nil
                state.receivedByFinished += state.received.removeValue(forKey: change.id) ?? 0
            }
            if let index = state.running.firstIndex(where: { $0.id == change.id }) { state.running.remove(at: index) }
            if style == .terminal { draw(&state, at: time) }
        }
    }

    /// Prints `line` on a line of its own, above the block on a terminal.
    public func message(_ line: String) {
        let time = now()
        state.withLock { state in
            guard style == .terminal, !state.finished else { return write(line + "\n") }
            show(line, &state, at: time)
            draw(&state, at: time)
        }
    }

    /// The terminal is now `columns` wide: redrawn at once.
    public func resize(columns: Int) {
        let time = now()
        state.withLock { state in
            guard state.columns != columns else { return }
            state.columns = columns
            if style == .terminal, !state.finished, state.drawnLines > 0 { draw(&state, at: time) }
        }
    }

    /// Ends the display: on a terminal the block is replaced by the final total line.
    public func finish() {
        state.withLock { state in
            guard !state.finished else { return }
            state.finished = true
            guard style == .terminal, state.drawnLines > 0 else { return }
            write(erase(&state) + totalLine(state) + "\n")
        }
    }

    // MARK: - Drawing (under the lock)

    /// Prints a line above the block (or plainly).
    private func show(_ line: String, _ state: inout State, at time: Double) {
        guard style == .terminal else { return write(line + "\n") }
        write(erase(&state) + line + "\n")
    }

    /// Moves to the block's first line and clears it and everything below.
    private func erase(_ state: inout State) -> String {
        guard state.drawnLines > 0 else { return "" }
        let up = state.drawnLines > 1 ? "\u{1B}[\(state.drawnLines - 1)A" : ""
        state.drawnLines = 0
        return up + "\r\u{1B}[J"
    }

    private func draw(_ state: inout State, at time: Double) {
        state.lastDraw = time
        let width = state.columns
        var lines = state.running.prefix(Self.maximumRows).map { entry in
            ProgressFormat.terminalLine(
                name: state.names[entry.id], completed: entry.row.completed, total: entry.row.total,
                bytesPerSecond: entry.row.meter.bytesPerSecond, columns: width)
        }
        if state.running.count > Self.maximumRows {
            lines.append(
                ProgressFormat.truncate("… and \(state.running.count - Self.maximumRows) more running", toColumns: max(width - 1, 1)))
        }
        lines.append(ProgressFormat.truncate(totalLine(state), toColumns: max(width - 1, 1)))
        let text = erase(&state) + lines.joined(separator: "\n")
        state.drawnLines = lines.count
        write(text)
    }

    /// `total: 3 of 6 done, 1 failed, 2 running  12.3 MiB  4.1 MiB/s` (`of 6+` while the input is read).
    private func totalLine(_ state: State) -> String {
        var text = "total: \(state.completed) of \(state.count)\(state.inputEnded ? "" : "+") done"
        if state.failed > 0 { text += ", \(state.failed) failed" }
        if !state.running.isEmpty { text += ", \(state.running.count) running" }
        let received = state.receivedInAll
        if received > 0 { text += "  " + ProgressFormat.bytes(received) }
        if !state.running.isEmpty, let rate = state.totalMeter.bytesPerSecond { text += "  " + ProgressFormat.rate(rate) }
        return text
    }
}
