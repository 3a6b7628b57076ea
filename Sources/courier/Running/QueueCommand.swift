import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier
import CourierSupport

/// `courier get -i FILE`: the listed downloads through a ``DownloadQueue`` whose journal makes a
/// rerun continue the unfinished and skip the finished, fed as the input comes by the library's
/// ``DownloadQueueFeeder`` (QueueCommand+Input.swift has courier's words for its problems),
/// in one supervised child. Docs/CommandLine.md, "`courier get -i`", has the rules.
struct QueueCommand {
    /// Set by the supervisor to the file its children keep the input in as they read it
    /// (``InputSpool``): stdin can be read once, and a child started after a crash must see
    /// every line the last one read. The input itself is the children's stdin.
    static let inputVariable = "COURIER_GET_INPUT"

    let options: GetCommand.QueueOptions

    init(_ options: GetCommand.QueueOptions) { self.options = options }

    /// The input's name in messages.
    static func source(_ options: GetCommand.QueueOptions) -> String {
        options.input == "-" ? "stdin" : options.input
    }

    /// Runs the queue until every item of the input is finished, or a stop signal; returns the
    /// exit code (every message is printed).
    func run() -> Int32 {
        let spool: InputSpool
        do {
            spool = try Self.openSpool(options)
        } catch {
            return CourierCommand.fail(error.message, error.status)
        }
        if let connection = options.store { return runFleet(connection: connection, spool: spool) }
        let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
        let shared = options.shared
        let (stops, watcher) = StopSignals.watching()
        defer { watcher.cancel() }

        // The first lines are read before anything is created: a mistake in them leaves nothing behind.
        var feeder = makeFeeder(spool, in: cwd)
        let directory = options.outputDirectory(in: cwd)
        do {
            guard try feeder.readFirst(until: { stops.signal != nil }) else {
                return end(.signal(stops.signal ?? SIGTERM), queue: nil, shown: nil, feeder: feeder)
            }
        } catch {
            return end(ending(error), queue: nil, shown: nil, feeder: feeder)
        }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            return CourierCommand.fail("cannot create \(directory.path): \(error.localizedDescription)", ExitCode.fileSystem)
        }

        let display = Locked<QueueProgress?>(nil)
        let manager = makeManager(split: shared.split) { line in
            if let display = display.current { display.message(line) } else { ProgressPrinter.writeToStandardError(line + "\n") }
        }
        defer { manager.invalidate(cancelingTasks: true) }

        var configuration = queueConfiguration()
        // The command ends: an item whose host has no route waits as --wait-for-network says (in
        // the manager), then fails with exit 3, rather than being held until the network returns.
        configuration.pausesWhileOffline = false

        let stateDirectory = options.stateDirectory(in: cwd)
        let queue: DownloadQueue
        do {
            queue = try DownloadQueue(directory: stateDirectory, manager: manager, configuration: configuration)
        } catch {
            return CourierCommand.fail("cannot open the download queue: \(error.message)", ExitCode.forError(error))
        }
        // Damage is reported, never fatal: what it cost is at worst a download run again.
        for skipped in queue.openReport.skipped {
            ProgressPrinter.writeToStandardError(
                "courier: warning: the queue's journal in \(stateDirectory.path) had a damaged record, skipped: \(skipped)\n")
        }

        let style = ProgressPrinter.style(quiet: shared.quiet)
        let shown = QueueProgress(
            style: style, columns: style == .terminal ? TerminalSize.columns() : 80, linePrefix: "courier: ",
            describe: QueueCommand.describe, write: ProgressPrinter.writeToStandardError)
        display.set(shown)
        let observer = queue.addObserver { change in display.current?.update(change) }
        defer { queue.removeObserver(observer) }
        let resizes = style == .terminal ? SignalWatcher(signals: [SIGWINCH]) { _ in shown.resize(columns: TerminalSize.columns()) } : nil
        defer { resizes?.cancel() }
        stops.onStop(feeder.wake)
        stops.beforeLeaving { shown.finish() }

        let outcome: Ending
        do {
            switch try feeder.feed(queue, display: shown, until: { stops.signal != nil }) {
            case .finished: outcome = .finished
            case .stopped: outcome = .signal(stops.signal ?? SIGTERM)
            }
        } catch {
            outcome = ending(error)
        }
        return end(outcome, queue: queue, shown: shown, feeder: feeder)
    }

    /// The manager of the queue's (or the fleet worker's) downloads, its lines said through `say`.
    /// The queue's `--per-host` counts every connection (a split item holds several): the manager
    /// must not hold back what it allows. `-H` goes into every request through an adapter rather
    /// than the items' headers, which the journal (or a fleet's database) keeps in the clear:
    /// like a single get, a token is never stored.
    func makeManager(split: DownloadSplit, say: @escaping @Sendable (String) -> Void) -> SessionManager {
        let shared = options.shared
        var configuration = GetCommand.managerConfiguration(shared, say: say, retryLine: GetCommand.downloadRetryLine)
        configuration.maximumRunningTasksPerHost = GetCommand.runningTasksPerHost(
            configuration.maximumRunningTasksPerHost, for: split, perHost: options.perHost)
        if !shared.headers.isEmpty { configuration.interceptor = Interceptor(adapters: [Adapter.addingHeaders(shared.headers)]) }
        return SessionManager(configuration: configuration)
    }

    /// The queue's `--parallel`, `--per-host` and the items' download policy.
    func queueConfiguration() -> DownloadQueue.Configuration {
        var configuration = DownloadQueue.Configuration()
        configuration.maximumRunning = options.parallel
        configuration.maximumRunningPerHost = options.perHost
        configuration.policy = options.shared.downloadPolicy
        return configuration
    }

    /// Stops the queue (when there is one) and says how the command ended; returns its exit code.
    /// Every ending but the input's own stops the queue as SIGTERM does (a checkpoint): each
    /// running download keeps its bytes and record, and the journal still lists it as running,
    /// so the next run continues it.
    private func end(
        _ ending: Ending, queue: DownloadQueue?, shown: QueueProgress?, feeder: DownloadQueueFeeder
    ) -> Int32 {
        if let queue { CourierCommand.blocking { await queue.stop() } }
        shown?.finish()
        switch ending {
        case .signal(let signal):
            if !options.shared.quiet {
                ProgressPrinter.writeToStandardError("courier: interrupted; run the same command again to continue\n")
            }
            return ExitCode.forSignal(signal)
        case .mistake(let error):
            return CourierCommand.usage(error)
        case .failure(let problem):
            return CourierCommand.fail(problem.message, problem.status)
        case .finished:
            guard let queue else { return ExitCode.failure }  // the input ends only with a queue open
            do {
                return try summarize(queue, feeder)
            } catch {
                guard case .failure(let failure) = self.ending(error) else { return CourierCommand.fail("\(error)", ExitCode.fileSystem) }
                return CourierCommand.fail(failure.message, ExitCode.fileSystem)
            }
        }
    }

    /// Prints the saved paths (stdout) and the failures (stderr); returns the exit code. The
    /// input is read again from the spool, so the paths come in its order without the lines
    /// having been kept; only the failures are held until they are printed. An item no longer
    /// in the queue was removed or cancelled by someone else.
    private func summarize(_ queue: DownloadQueue, _ feeder: DownloadQueueFeeder) throws(DownloadQueueFeeder.Problem) -> Int32 {
        try summarize(
            feeder.forEachEntry, state: { queue.item($0.id)?.state }, gone: "no longer in the queue",
            withURL: true, trailer: "courier: run the same command again to retry them; the completed ones are not fetched again")
    }

    /// How the input's items ended, each in its order as `forEachEntry` gives it with its state
    /// (`state`; any but completed or failed is said as `gone`): the saved paths on stdout, as they
    /// come, then every item complete (unless quiet), or the lines of those that did not, after
    /// how many, and `trailer`, on stderr. Returns the exit code: the worst failure's.
    func summarize<Failure: Error>(
        _ forEachEntry: ((DownloadList.Entry) -> Void) throws(Failure) -> Void,
        state: @escaping (DownloadList.Entry) -> DownloadQueue.State?,
        gone: String, withURL: Bool, trailer: String? = nil
    ) throws(Failure) -> Int32 {
        var (paths, failures, count, worst) = ("", [String](), 0, ExitCode.success)
        try forEachEntry { entry in
            count += 1
            let why: String
            switch state(entry) {
            case .completed(let file):
                paths += file.path + "\n"
                if paths.utf8.count >= 64 * 1024 {
                    FileHandle.standardOutput.write(Data(paths.utf8))
                    paths = ""
                }
                return
            case .failed(let failure):
                why = Self.describe(failure)
                worst = Self.worse(worst, ExitCode.forCode(failure.code))
            default:
                why = gone
                worst = Self.worse(worst, ExitCode.failure)
            }
            let url = withURL ? " (\(GetCommand.displayURL(entry.url)))" : ""
            failures.append("courier:   line \(entry.line): \(entry.name): \(GetCommand.oneLine(why))\(url)")
        }
        if !paths.isEmpty { FileHandle.standardOutput.write(Data(paths.utf8)) }
        guard !failures.isEmpty else {
            if !options.shared.quiet { ProgressPrinter.writeToStandardError("courier: all \(count) downloads complete\n") }
            return ExitCode.success
        }
        let lines = ["courier: \(failures.count) of \(count) downloads failed:"] + failures + (trailer.map { [$0] } ?? [])
        ProgressPrinter.writeToStandardError(lines.joined(separator: "\n") + "\n")
        return worst
    }

    // MARK: - Failures

    /// `HTTP 404 Not Found`, `integrity check failed: …`: a journaled failure in get's words.
    static func describe(_ failure: DownloadQueue.Failure) -> String {
        if failure.code == .unacceptableStatusCode, let status = failure.status {
            return "HTTP \(status)" + (HTTPReasonPhrase.phrase(for: status).map { " " + $0 } ?? "")
        }
        switch ExitCode.forCode(failure.code) {
        case ExitCode.integrity: return "integrity check failed: \(failure.message)"
        case ExitCode.network where failure.code == .deadlineExceeded: return "did not finish within --max-time"
        case ExitCode.network: return "network error: \(failure.message)"
        default: return failure.message
        }
    }

    /// The failure classes from worst to least bad: wrong bytes from the server (5), a local file
    /// problem that needs a person (6), an error status (4), the network (3, often gone on a
    /// rerun), anything else (1).
    static let severity: [Int32] = [ExitCode.integrity, ExitCode.fileSystem, ExitCode.http, ExitCode.network, ExitCode.failure]

    /// The worse of two exit codes by ``severity`` (0 is the least bad).
    static func worse(_ a: Int32, _ b: Int32) -> Int32 {
        let rank = { (code: Int32) in severity.firstIndex(of: code) ?? (code == ExitCode.success ? severity.count + 1 : severity.count) }
        return rank(a) <= rank(b) ? a : b
    }
}
