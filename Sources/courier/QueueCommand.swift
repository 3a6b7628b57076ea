import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier

/// `courier get -i FILE`: the downloads an input file lists, through a ``DownloadQueue`` whose
/// journal makes rerunning the same command continue every unfinished download and skip the
/// finished ones.
///
/// Runs in the supervised child (GetSupervisor.swift): the whole queue in one process, so that a
/// FoundationNetworking trap set off by one server ends that process only. The supervisor then
/// starts a new child, which reopens the journal and carries on. The journal is what makes a
/// restart cheap and safe, so no per-item supervision is needed.
///
/// Each line's item has a stable id (``GetCommand/InputList/Entry/id``): a rerun finds the items
/// already journaled and adds only new lines. Items in the journal whose line was removed are
/// paused, never deleted (their bytes stay; putting the line back continues them). Failed,
/// paused and cancelled items of the input are queued again.
struct QueueCommand {
    /// Set by the supervisor to the private copy of the input it validated (stdin can be read once).
    static let inputVariable = "COURIER_GET_INPUT"

    let options: GetCommand.QueueOptions

    init(_ options: GetCommand.QueueOptions) { self.options = options }

    /// Reads and parses the input: the supervisor's copy when there is one, else the file or stdin.
    static func readList(_ options: GetCommand.QueueOptions, in cwd: URL) throws -> GetCommand.InputList {
        try parse(try readText(options, in: cwd), options, in: cwd)
    }

    /// The input's text: the supervisor's copy when there is one, else the file or stdin.
    static func readText(_ options: GetCommand.QueueOptions, in cwd: URL) throws -> String {
        let data: Data
        do {
            if let staged = ProcessInfo.processInfo.environment[inputVariable] {
                data = try Data(contentsOf: URL(fileURLWithPath: staged))
            } else if options.input == "-" {
                data = FileHandle.standardInput.readDataToEndOfFile()
            } else {
                data = try Data(contentsOf: GetCommand.outputURL(options.input, in: cwd))
            }
        } catch {
            throw GetFailure(ExitCode.fileSystem, "cannot read the input file \(source(options)): \(error.localizedDescription)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw UsageError(get: "\(source(options)) is not UTF-8 text")
        }
        return text
    }

    /// The input's lines; a mistake is a usage error naming its line.
    static func parse(_ text: String, _ options: GetCommand.QueueOptions, in cwd: URL) throws(UsageError) -> GetCommand.InputList {
        try GetCommand.InputList(text, directory: options.outputDirectory(in: cwd), source: source(options))
    }

    /// The input's name in messages.
    static func source(_ options: GetCommand.QueueOptions) -> String {
        options.input == "-" ? "stdin" : options.input
    }

    /// Runs the queue until every item of the input is finished, or a stop signal; returns the
    /// exit code (every message is printed).
    func run() -> Int32 {
        let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
        let list: GetCommand.InputList
        do {
            list = try Self.readList(options, in: cwd)
            try FileManager.default.createDirectory(at: options.outputDirectory(in: cwd), withIntermediateDirectories: true)
        } catch let error as UsageError {
            ProgressPrinter.writeToStandardError("courier: \(error.message)\nRun '\(error.help)' for usage.\n")
            return ExitCode.usage
        } catch let failure as GetFailure {
            return fail(failure.message, failure.status)
        } catch {
            return fail("cannot create \(options.outputDirectory(in: cwd).path): \(error.localizedDescription)", ExitCode.fileSystem)
        }
        let shared = options.shared
        let stops = StopSignals()
        let watcher = stops.watch()
        defer { watcher.cancel() }

        // -H goes into every request through an adapter rather than the items' headers, which the
        // journal keeps in the clear: like a single get, a token is never written to disk.
        var managerConfiguration = SessionManager.Configuration()
        if let timeout = shared.timeout { managerConfiguration.urlSessionConfiguration.timeoutIntervalForRequest = timeout }
        let headers = shared.headers
        if !headers.isEmpty {
            managerConfiguration.interceptor = Interceptor(adapters: [Adapter { request in
                var request = request
                for header in headers { request.addValue(header.value, forHTTPHeaderField: header.name) }
                return request
            }])
        }
        let display = Guarded<QueueProgress?>(nil)
        if !shared.quiet {
            managerConfiguration.eventMonitors = [ClosureEventMonitor(onRetry: { _, event in
                let line = GetCommand.retryLine(event)
                if let display = display.current { display.message(line) } else { ProgressPrinter.writeToStandardError(line + "\n") }
            })]
        }
        let manager = SessionManager(configuration: managerConfiguration)
        defer { manager.invalidate(cancelingTasks: true) }

        var configuration = DownloadQueue.Configuration()
        configuration.maximumRunning = options.parallel
        configuration.maximumRunningPerHost = options.perHost
        var policy = DownloadPolicy()
        policy.retryLimit = shared.retries
        policy.publishesUnverifiedBodies = shared.acceptUnverified
        policy.deadline = shared.maxTime.map { .milliseconds(Int64(($0 * 1000).rounded(.up))) }
        policy.recordsHeaders = false
        if !shared.locationTrusted { policy.sensitiveHeaders = Set(headers.map { $0.name.lowercased() }) }
        configuration.policy = policy

        let stateDirectory = options.stateDirectory(in: cwd)
        let queue: DownloadQueue
        do {
            queue = try DownloadQueue(directory: stateDirectory, manager: manager, configuration: configuration)
        } catch {
            return fail("cannot open the download queue: \(error.message)", ExitCode.forError(error))
        }
        // Damage is reported, never fatal: what it cost is at worst a download run again.
        for skipped in queue.openReport.skipped {
            ProgressPrinter.writeToStandardError("courier: warning: the queue's journal in \(stateDirectory.path) had a damaged record, skipped: \(skipped)\n")
        }

        let wake = DispatchSemaphore(value: 0)
        let style = ProgressPrinter.style(quiet: shared.quiet)
        let names = Dictionary(list.entries.map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
        let observer = queue.addObserver { change in
            display.current?.update(change)
            wake.signal()
        }
        defer { queue.removeObserver(observer) }

        // Shown from before the reconciliation, whose resumed and added items start at once.
        let alreadyDone = list.entries.filter { if case .completed = queue.item($0.id)?.state { true } else { false } }.count
        let shown = QueueProgress(
            style: style, columns: style == .terminal ? TerminalSize.columns() : 80, names: names,
            count: list.entries.count, completed: alreadyDone)
        display.set(shown)
        var verifiedBeforehand = Set<String>()
        if let problem = reconcile(queue, list, verifiedBeforehand: &verifiedBeforehand) {
            Self.stop(queue)
            shown.finish()
            return fail(problem.message, problem.status)
        }
        let resizes = style == .terminal ? SignalWatcher(signals: [SIGWINCH]) { _ in shown.resize(columns: TerminalSize.columns()) } : nil
        defer { resizes?.cancel() }
        stops.onStop { wake.signal() }
        stops.beforeLeaving { shown.finish() }

        // The observer wakes this thread on every change; the queue's own state decides.
        let waitedFor = list.entries.filter { !verifiedBeforehand.contains($0.id) }
        while stops.signal == nil, !waitedFor.allSatisfy({ queue.item($0.id)?.state.isFinished ?? true }) {
            _ = wake.wait(timeout: .now() + .milliseconds(500))
            usleep(20_000)  // a burst of progress changes is looked at once
        }
        if let signal = stops.signal {
            // Checkpoint: every running download keeps its bytes and record; the journal still
            // lists them as running, so the next run continues them.
            Self.stop(queue)
            shown.finish()
            if !shared.quiet {
                ProgressPrinter.writeToStandardError("courier: interrupted; run the same command again to continue\n")
            }
            return ExitCode.forSignal(signal)
        }
        shown.finish()
        Self.stop(queue)
        return summarize(queue, list, verifiedBeforehand: verifiedBeforehand)
    }

    /// Brings the journal in line with the input: new lines added (in one durable batch), failed,
    /// paused and cancelled items of the input queued again, items no longer listed paused.
    /// Returns a problem that stops the command before anything new starts.
    private func reconcile(
        _ queue: DownloadQueue, _ list: GetCommand.InputList, verifiedBeforehand: inout Set<String>
    ) -> GetFailure? {
        let journaled = Dictionary(queue.items.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let listed = Set(list.entries.map(\.id))
        do {
            for item in journaled.values where !listed.contains(item.id) && !item.state.isFinished {
                try queue.pause(item.id)
            }
            var new: [DownloadQueue.NewItem] = []
            for entry in list.entries {
                if let item = journaled[entry.id] {
                    if item.sha256 != entry.sha256, !Self.isCompleted(item) {
                        // The line's checksum changed: the old item's bytes were fetched for another file.
                        try queue.remove(item.id)
                    } else {
                        switch item.state {
                        case .failed, .paused, .cancelled: try queue.resume(item.id)
                        case .queued, .running, .completed: break
                        }
                        continue
                    }
                }
                if GetCommand.isExistingFile(entry.destination) {
                    if !options.shared.force, let sha256 = entry.sha256, Self.sha256(of: entry.destination) == sha256 {
                        // Already there and proven right: published by a run whose journal record
                        // of it was lost (damaged), or fetched some other way. Nothing to fetch.
                        verifiedBeforehand.insert(entry.id)
                        continue
                    }
                    guard options.shared.force else {
                        return GetFailure(
                            ExitCode.fileSystem,
                            "\(entry.destination.path) already exists (line \(entry.line); use --force to replace it, or out= to save under another name)")
                    }
                    unlink(entry.destination.path)
                }
                new.append(DownloadQueue.NewItem(url: entry.url, to: entry.destination, id: entry.id, sha256: entry.sha256))
            }
            if !new.isEmpty { try queue.add(contentsOf: new) }
        } catch {
            return GetFailure(ExitCode.forError(error), "cannot update the download queue: \(error.message)")
        }
        return nil
    }

    /// The SHA-256 of the regular file at `file` (not through a link), lower-case hex.
    static func sha256(of file: URL) -> String? {
        var info = stat()
        guard lstat(file.path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG,
            let data = try? Data(contentsOf: file, options: .alwaysMapped)
        else { return nil }
        return SHA256.hexString(SHA256.hash(data))
    }

    private static func isCompleted(_ item: DownloadQueue.Item) -> Bool {
        if case .completed = item.state { return true }
        return false
    }

    /// `await queue.stop()` from this synchronous command.
    static func stop(_ queue: DownloadQueue) {
        let stopped = DispatchSemaphore(value: 0)
        Task {
            await queue.stop()
            stopped.signal()
        }
        stopped.wait()
    }

    /// Prints the saved paths (stdout) and the failures (stderr); returns the exit code.
    private func summarize(_ queue: DownloadQueue, _ list: GetCommand.InputList, verifiedBeforehand: Set<String>) -> Int32 {
        var failures: [(GetCommand.InputList.Entry, DownloadQueue.Failure?)] = []
        var paths: [String] = []
        for entry in list.entries {
            if verifiedBeforehand.contains(entry.id) {
                paths.append(entry.destination.path)
                continue
            }
            switch queue.item(entry.id)?.state {
            case .completed(let file): paths.append(file.path)
            case .failed(let failure): failures.append((entry, failure))
            default: failures.append((entry, nil))  // removed or cancelled by someone else
            }
        }
        if !paths.isEmpty { FileHandle.standardOutput.write(Data((paths.joined(separator: "\n") + "\n").utf8)) }
        guard !failures.isEmpty else {
            if !options.shared.quiet {
                ProgressPrinter.writeToStandardError("courier: all \(list.entries.count) downloads complete\n")
            }
            return ExitCode.success
        }
        var lines = ["courier: \(failures.count) of \(list.entries.count) downloads failed:"]
        var worst = ExitCode.success
        for (entry, failure) in failures {
            let why = failure.map(Self.describe) ?? "no longer in the queue"
            lines.append("courier:   line \(entry.line): \(entry.name): \(GetCommand.oneLine(why)) (\(GetCommand.displayURL(entry.url)))")
            worst = Self.worse(worst, failure.map(Self.exitCode) ?? ExitCode.failure)
        }
        lines.append("courier: run the same command again to retry them; the completed ones are not fetched again")
        ProgressPrinter.writeToStandardError(lines.joined(separator: "\n") + "\n")
        return worst
    }

    private func fail(_ message: String, _ status: Int32) -> Int32 {
        ProgressPrinter.writeToStandardError("courier: \(GetCommand.oneLine(message))\n")
        return status
    }

    // MARK: - Failures

    /// `HTTP 404 Not Found`, `integrity check failed: …`: a journaled failure in get's words.
    static func describe(_ failure: DownloadQueue.Failure) -> String {
        if failure.code == "unacceptableStatusCode", let status = failure.status {
            return "HTTP \(status)" + (HTTPStatus.reasonPhrase(status).map { " " + $0 } ?? "")
        }
        switch exitCode(for: failure) {
        case ExitCode.integrity: return "integrity check failed: \(failure.message)"
        case ExitCode.network where failure.code == "deadlineExceeded": return "did not finish within --max-time"
        case ExitCode.network: return "network error: \(failure.message)"
        default: return failure.message
        }
    }

    /// The exit code of a journaled failure: ``ExitCode/forError(_:)``'s classes, from the code's name.
    static func exitCode(for failure: DownloadQueue.Failure) -> Int32 {
        switch failure.code {
        case "network", "dnsFailed", "connectionRefused", "connectionLost", "tlsFailed", "noResponse",
            "timedOut", "invalidRequest", "sessionInvalidated", "invalidResponse", "deadlineExceeded":
            return ExitCode.network
        case "unacceptableStatusCode", "unacceptableContentType": return ExitCode.http
        case "integrityFailed": return ExitCode.integrity
        case "fileSystem", "destinationFailed", "invalidResumeData": return ExitCode.fileSystem
        default: return ExitCode.failure
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
