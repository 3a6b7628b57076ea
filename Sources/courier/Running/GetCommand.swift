import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier
import CourierSupport

/// `courier get <url>`: one URL into a file, crash-safely (a partial file and a resume record at a
/// fixed place, the output published once complete and verified), or to stdout with `-o -`
/// (GetCommand+Streaming.swift, GetCommand+StandardOutput.swift). Docs/CommandLine.md has the rules.
struct GetCommand {
    private(set) var options: Options
    /// `-z`, `--etag-compare`, `--etag-save`, read when the command starts (``run()``).
    private(set) var conditional = ConditionalFetch()

    init(_ options: Options) { self.options = options }

    /// Runs the download to its end and returns the exit code; every message is already printed.
    func run() -> Int32 {
        var command = self
        do {
            let (conditional, warnings) = try ConditionalFetch.resolve(options)
            command.conditional = conditional
            if !options.quiet { for warning in warnings { ProgressPrinter.writeToStandardError("courier: warning: \(warning)\n") } }
        } catch {
            return fail(error)
        }
        // A condition is a statement about the copy the user has: a newer copy replaces it.
        if command.conditional.request.isConditional { command.options.force = true }
        return command.runResolved()
    }

    /// ``run()`` once the conditions are read.
    private func runResolved() -> Int32 {
        if options.streamsToStandardOutput { return runStreaming() }
        let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
        let (printer, resizes) = makeProgressPrinter()
        defer { resizes?.cancel() }
        let (stops, watcher) = StopSignals.watching()
        defer { watcher.cancel() }

        let target: Target
        let cache: ResponseCache?
        do {
            target = try makeTarget(in: cwd, printer: printer)
            cache = try openCache(in: cwd)
        } catch {
            return report(error, printer: printer)
        }
        defer { target.cleanUp() }
        let started = ProgressPrinter.monotonicSeconds()
        let response = download(to: target, cache: cache, printer: printer, stops: stops)
        printer.finish()
        let seconds = ProgressPrinter.monotonicSeconds() - started

        switch response.result {
        case .success(let file):
            do {
                try conditional.saveETag(from: response.response)
            } catch {
                return report(error, printer: printer)
            }
            if !response.report.isVerified {
                Self.warnUnverified(options.writesToStandardOutput ? "the body written to stdout was" : "\(file.path) was saved")
            }
            // A signal that came too late to stop the download changes nothing: the file is saved.
            let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?.int64Value ?? 0
            if options.writesToStandardOutput {
                if let failure = copyToStandardOutput(file, size: size, stops: stops) { return failure }
            }
            if printer.style != .quiet {
                let report = response.report
                ProgressPrinter.writeToStandardError(
                    ProgressFormat.summary(
                        path: options.writesToStandardOutput ? nil : file.path, size: size, seconds: seconds,
                        bytesReceived: report.bytesReceived, resumedBytes: report.resumedBytes, retries: report.retries)
                        + (cache == nil ? "" : "; cache: \(Self.describe(response.cacheOutcome))") + "\n")
            }
            // The path the file got goes to stdout (`f=$(courier get -q "$url")`), except where
            // the caller named it and asked for quiet: curl's `-s -o FILE` prints nothing.
            if !options.writesToStandardOutput, !(options.quiet && options.output != nil) {
                FileHandle.standardOutput.write(Data((file.path + "\n").utf8))
            }
            return ExitCode.success
        case .failure(let error):
            if error.isCancellation, let signal = stops.signal {
                ProgressPrinter.writeToStandardError(
                    Self.interruptedLine(keeping: error.resumeData, toStandardOutput: options.writesToStandardOutput) + "\n")
                return ExitCode.forSignal(signal)
            }
            if conditional.request.isNotModified(error) { return notModified(error) }
            if error.code == .destinationFailed, !options.force, let file = target.chosenFile.current,
                Self.isExistingFile(file)
            {
                // Say it in the command's terms, not the library's (`.removePreviousFile`).
                return report(GetFailure(ExitCode.fileSystem, Self.existsMessage(file)), printer: printer)
            }
            return report(error, printer: printer)
        }
    }

    /// Runs one download task to its completion, stopping it cleanly on SIGINT or SIGTERM.
    private func download(to target: Target, cache: ResponseCache?, printer: ProgressPrinter, stops: StopSignals) -> DownloadResponse {
        // Completions on the manager's own queue: this process has no main run loop, so the main
        // thread just waits on a semaphore.
        let verbose = options.verbose ? VerboseMonitor(printer: printer, redaction: OutputRedaction.current) : nil
        var configuration = Self.managerConfiguration(
            options, verbose: verbose, say: { printer.message($0) }, retryLine: Self.downloadRetryLine)
        configuration.maximumRunningTasksPerHost = Self.runningTasksPerHost(
            configuration.maximumRunningTasksPerHost, for: options.split)
        configuration.responseCache = cache
        let manager = SessionManager(configuration: configuration)
        defer { manager.invalidate(cancelingTasks: true) }
        let finished = DispatchSemaphore(value: 0)
        let result = Locked<DownloadResponse?>(nil)
        // The task, for its connection count on the bar; set right after it is made (its
        // progress begins only once it is resumed).
        let counted = Locked<DownloadTask?>(nil)
        let task = manager.downloadTask(
            with: request(), to: target.destination, policy: target.policy, validation: conditional.request.validation(),
            progress: { progress in
                let total = progress.totalUnitCount
                printer.update(
                    completed: progress.completedUnitCount, total: total >= 0 ? total : nil,
                    connections: counted.current?.connectionCount ?? 1)
            },
            completion: { response in
                result.set(response)
                finished.signal()
            })
        // Keeps the partial file and brings its record up to date; the task then completes with
        // `cancelled` and the resume data.
        counted.set(task)
        stops.onStop { task.cancel(producingResumeData: { _ in }) }
        stops.beforeLeaving { printer.finish() }
        printer.start()
        task.resume()
        finished.wait()
        counted.set(nil)
        verbose?.waitUntilPrinted()
        // `finished` is signalled only after `result` is set.
        return result.current
            ?? DownloadResponse(
                request: nil, response: nil,
                result: .failure(CourierError(code: .network, message: "the download ended without a result")))
    }

    // MARK: - Request and destination

    /// Where the file goes, and the policy that keeps its partial file in a fixed place.
    private struct Target {
        let destination: DownloadDestination
        let policy: DownloadPolicy
        /// The output file, once known (at once with `-o`, from the response without).
        let chosenFile: Locked<URL?>
        /// With `-o -`: the private directory the body is staged in, removed at the end when this
        /// process made it (a supervisor's is the supervisor's to remove).
        var ownStagingDirectory: URL? = nil

        func cleanUp() {
            if let directory = ownStagingDirectory { try? FileManager.default.removeItem(at: directory) }
        }
    }

    private func makeTarget(in cwd: URL, printer: ProgressPrinter) throws(GetFailure) -> Target {
        var policy = options.downloadPolicy
        policy.split = options.split
        policy.expectedSHA256 = options.expectedSHA256
        if options.cacheDirectory != nil { policy.responseCache = .upTo(bytes: Self.cacheMaximumBytes) }
        if options.writesToStandardOutput {
            // Staged privately, copied to stdout once complete and verified. A supervisor shares
            // its directory with every child it starts, so a restart after a crash continues.
            let supplied = ProcessInfo.processInfo.environment[Self.stagingVariable].map { URL(fileURLWithPath: $0) }
            let directory: URL
            if let supplied { directory = supplied } else { directory = try Self.makeStagingDirectory() }
            let file = directory.appendingPathComponent("body")
            return Target(
                destination: .file(file, options: [.removePreviousFile]), policy: policy, chosenFile: Locked(file),
                ownStagingDirectory: supplied == nil ? directory : nil)
        }
        let publishing: DownloadDestination.Options = options.force ? [.removePreviousFile] : []
        if let output = options.output {
            // The partial file is `.<name>.courier-partial` beside the output (the library's default).
            let file = Self.outputURL(output, in: cwd)
            try Self.checkOutput(file, force: options.force)
            return Target(destination: .file(file, options: publishing), policy: policy, chosenFile: Locked(file))
        }
        // The name is known only once the response is in; the partial file's place must not
        // wait for it, or a rerun could not find it. So it is named after the URL.
        policy.partialFile = DownloadPolicy.partialFile(for: options.url, in: cwd)
        let url = options.url
        // The URL's own name is known now: a file already there stops the command before any
        // byte is fetched, rather than after the whole body.
        // (A URL without a name of its own, `https://host/`, is left to the headers: the fallback
        // name is a guess, and the server's Content-Disposition may well give another.)
        if !options.force, let urlNamed = FileNameSanitizer.urlName(for: url).map(cwd.appendingPathComponent), Self.isExistingFile(urlNamed)
        {
            throw GetFailure(ExitCode.fileSystem, Self.existsMessage(urlNamed))
        }
        let chosenFile = Locked<URL?>(nil)
        // Decided as soon as the headers arrive (a Content-Disposition name is known only then), so
        // a name that is taken stops the body at once, keeping what arrived for the next run.
        let destination = DownloadDestination(stagingDirectory: cwd, timing: .atResponse) { _, response in
            // Named after the URL given, not a redirect's target, so reruns agree on the name.
            let name = FileNameSanitizer.suggestedName(
                for: url, contentDisposition: response.value(forHTTPHeaderField: "Content-Disposition"))
            let file = cwd.appendingPathComponent(name)
            chosenFile.set(file)
            printer.setName(name)
            // Publishing never overwrites without --force (link(2), not rename(2)), so a file
            // created after this check is still never replaced.
            return (file, publishing)
        }
        return Target(destination: destination, policy: policy, chosenFile: chosenFile)
    }

    /// The name on the progress line before the headers arrive: `-o`'s, else the URL's.
    func initialDisplayName() -> String {
        if let output = options.output, output != "-" { return URL(fileURLWithPath: output).lastPathComponent }
        return FileNameSanitizer.suggestedName(for: options.url, contentDisposition: nil)
    }

    func request() -> URLRequest {
        var request = URLRequest(url: options.url)
        for header in options.headers + conditional.request.headers { request.addValue(header.value, forHTTPHeaderField: header.name) }
        return request
    }

    /// A conditional download the server (or curl's own time check) says is not needed: nothing
    /// written, exit 0, as curl does. A 304's ETag is saved with `--etag-save`.
    func notModified(_ error: CourierError) -> Int32 {
        let why = error.statusCode == 304 ? "the server answered 304 Not Modified" : "\(error.underlyingError.map { "\($0)" } ?? "")"
        do {
            if error.statusCode == 304 { try conditional.saveETag(from: error.response) }
        } catch {
            return fail(error)
        }
        if !options.quiet {
            ProgressPrinter.writeToStandardError(
                "courier: not modified: \(why) (\(Self.displayURL(options.url))); nothing was downloaded\n")
        }
        return ExitCode.success
    }

    static func outputURL(_ path: String, in cwd: URL) -> URL {
        let absolute = path.hasPrefix("/") ? URL(fileURLWithPath: path) : cwd.appendingPathComponent(path)
        return absolute.standardizedFileURL
    }

    /// Fails before any byte is fetched when the output cannot be written: it exists (without
    /// `--force`), it is a directory, or its directory is missing.
    static func checkOutput(_ file: URL, force: Bool) throws(GetFailure) {
        var info = stat()
        if lstat(file.path, &info) == 0 {
            if (info.st_mode & S_IFMT) == S_IFDIR {
                throw GetFailure(ExitCode.fileSystem, "\(file.path) is a directory")
            }
            if !force { throw GetFailure(ExitCode.fileSystem, existsMessage(file)) }
        }
        let directory = file.deletingLastPathComponent()
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue
        else {
            throw GetFailure(ExitCode.fileSystem, "the directory \(directory.path) does not exist")
        }
    }

    static func isExistingFile(_ file: URL) -> Bool {
        var info = stat()
        return lstat(file.path, &info) == 0 && (info.st_mode & S_IFMT) != S_IFDIR
    }

    /// Prints the one error line (after the progress line ends) and returns its exit code.
    private func report(_ error: any Error, printer: ProgressPrinter) -> Int32 {
        printer.finish()
        let kept = (error as? CourierError).map { Self.keptSuffix($0.resumeData, toStandardOutput: options.writesToStandardOutput) }
        return fail(error, suffix: kept ?? "")
    }

    /// The retry policy `courier get` runs with, for a file and for `-o -` alike: the library's
    /// defaults with `--retries` as the limit. One place, so the error line words the policy in force.
    static func retryPolicy(retries: Int) -> RetryPolicy {
        var policy = RetryPolicy()
        policy.retryLimit = retries
        return policy
    }

    /// The resume record a run with `options` in `cwd` keeps beside its partial file, if there is
    /// a usable one: how the supervisor learns what a child it could not ask left behind. Read by
    /// the library's one reader (``ResumeData/record(beside:)``), as a download would read it.
    static func recordedResume(for options: Options, in cwd: URL) -> ResumeData? {
        guard !options.writesToStandardOutput else { return nil }
        let partial =
            options.output.map { DownloadPolicy.defaultPartialFile(for: outputURL($0, in: cwd)) }
            ?? DownloadPolicy.partialFile(for: options.url, in: cwd)
        return try? ResumeData.record(beside: partial)
    }

}

/// A failure found by the command itself (not the library), with its exit code.
struct GetFailure: Error {
    let status: Int32
    let message: String
    init(_ status: Int32, _ message: String) {
        self.status = status
        self.message = message
    }
}

extension GetCommand {
    /// The progress printer for this command's output, and on a terminal the watcher that redraws
    /// its line at once when the terminal is resized (cancel it when done).
    func makeProgressPrinter() -> (ProgressPrinter, SignalWatcher?) {
        let style = ProgressPrinter.style(quiet: options.quiet)
        let printer = ProgressPrinter(
            style: style, columns: style == .terminal ? TerminalSize.columns() : 80, name: initialDisplayName(),
            linePrefix: "courier: ", write: ProgressPrinter.writeToStandardError)
        let resizes =
            style == .terminal
            ? SignalWatcher(signals: [SIGWINCH]) { _ in printer.resize(columns: TerminalSize.columns()) } : nil
        return (printer, resizes)
    }
}
