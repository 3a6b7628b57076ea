import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
import Courier
import CourierSupport

/// `--cache DIR`: the body through a data task whose manager has the disk response cache in DIR, held
/// in memory up to ``cacheMaximumBytes`` and written whole (Docs/CommandLine.md, "A response cache").
extension GetCommand {
    /// The disk store's bound, and so the largest body `--cache` takes.
    static let cacheMaximumBytes = 256 << 20

    /// Runs a `--cache` fetch to its end and returns the exit code; every message is printed.
    func runCached(directory: String) -> Int32 {
        let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
        let printer = ProgressPrinter(style: .quiet, columns: 80, name: initialDisplayName(), write: ProgressPrinter.writeToStandardError)
        let (stops, watcher) = StopSignals.watching()
        defer { watcher.cancel() }
        signal(SIGPIPE, SIG_IGN)  // a reader that goes away is a failed write, said on stderr

        if let output = options.output, !options.writesToStandardOutput {
            do {
                try Self.checkOutput(Self.outputURL(output, in: cwd), force: options.force)
            } catch {
                return fail(error)
            }
        }
        let cache: ResponseCache
        do {
            cache = try ResponseCache.disk(
                directory: URL(fileURLWithPath: directory, relativeTo: cwd), maximumBytes: Self.cacheMaximumBytes)
        } catch {
            return fail(GetFailure(ExitCode.fileSystem, "cannot use the cache directory \(directory): \(error)"))
        }

        let verbose = options.verbose ? VerboseMonitor(printer: printer, redaction: OutputRedaction.current) : nil
        var configuration = Self.managerConfiguration(options, verbose: verbose, say: { printer.message($0) })
        configuration.responseCache = cache
        configuration.maximumResponseSize = Self.cacheMaximumBytes
        configuration.retryPolicy = Self.retryPolicy(retries: options.retries)
        configuration.deadline = options.maxTime.map { .seconds(roundingUp: $0) }
        let manager = SessionManager(configuration: configuration)
        defer { manager.invalidate(cancelingTasks: true) }

        let started = ProgressPrinter.monotonicSeconds()
        let finished = DispatchSemaphore(value: 0)
        let result = Locked<DataResponse<Data>?>(nil)
        // `.dataOrEmpty`: an empty 200 is an empty file, not an error.
        let task = manager.dataTask(with: request(), serializer: .dataOrEmpty, validation: conditional.request.validation()) {
            result.set($0)
            finished.signal()
        }
        stops.onStop { task.cancel() }
        task.resume()
        finished.wait()
        verbose?.waitUntilPrinted()
        guard let response = result.current else {
            return fail(GetFailure(ExitCode.failure, "the download ended without a result"))
        }
        let body: Data
        switch response.result {
        case .success(let data): body = data
        case .failure(let error):
            if error.isCancellation, let signal = stops.signal {
                ProgressPrinter.writeToStandardError("courier: interrupted; nothing was written\n")
                return ExitCode.forSignal(signal)
            }
            if conditional.request.isNotModified(error) { return notModified(error) }
            if error.code == .responseTooLarge {
                return fail(
                    GetFailure(
                        ExitCode.failure,
                        "the body is larger than --cache takes (\(ProgressFormat.bytes(Int64(Self.cacheMaximumBytes)))); "
                            + "download it without --cache (\(Self.displayURL(options.url)))"))
            }
            return fail(error)
        }
        do {
            if let expected = options.expectedSHA256, SHA256.hash(body) != expected {
                throw GetFailure(ExitCode.integrity, "integrity check failed: the body's SHA-256 is not the one given; nothing was saved")
            }
            let path = try write(body, response: response.response, in: cwd)
            try conditional.saveETag(from: response.response)
            if !options.quiet {
                let seconds = ProgressPrinter.monotonicSeconds() - started
                let line = ProgressFormat.summary(
                    // No rate for a stored copy: nothing was received.
                    path: path?.path, size: Int64(body.count), seconds: seconds,
                    bytesReceived: response.cacheOutcome == .hit ? 0 : Int64(body.count),
                    resumedBytes: 0, retries: 0)
                ProgressPrinter.writeToStandardError(line + "; cache: \(Self.describe(response.cacheOutcome))\n")
            }
            if let path, !(options.quiet && options.output != nil) {
                FileHandle.standardOutput.write(Data((path.path + "\n").utf8))
            }
            return ExitCode.success
        } catch {
            return fail(error)
        }
    }

    /// Where the answer came from, in words for the summary line.
    static func describe(_ outcome: ResponseCache.Outcome?) -> String {
        switch outcome {
        case .hit: "hit (no request sent)"
        case .revalidated: "revalidated (304 Not Modified)"
        case .miss: "miss (stored if the server allows)"
        case .stale: "stale (the stored copy)"
        case nil: "not used"
        }
    }

    /// Writes `body` to stdout (`nil` is returned) or to the output file, returning its URL.
    private func write(_ body: Data, response: HTTPURLResponse?, in cwd: URL) throws(GetFailure) -> URL? {
        if options.writesToStandardOutput {
            let sent = Self.writeToStandardOutput(body)
            if let reason = sent.failure {
                throw GetFailure(ExitCode.fileSystem, "cannot write to stdout (\(reason)) after \(ProgressFormat.bytes(Int64(sent.count)))")
            }
            return nil
        }
        let file: URL
        if let output = options.output {
            file = Self.outputURL(output, in: cwd)
        } else {
            let name = FileNameSanitizer.suggestedName(
                for: options.url, contentDisposition: response?.value(forHTTPHeaderField: "Content-Disposition"))
            file = cwd.appendingPathComponent(name)
            try Self.checkOutput(file, force: options.force)
        }
        try Self.publish(body, to: file, replacing: options.force)
        return file
    }

    /// Saves `body` at `file` as a download is published (the library's `DownloadDestination.save`:
    /// a private staging file beside it, then `rename(2)` when `replacing`, else `link(2)`, which
    /// never replaces a file made meanwhile).
    static func publish(_ body: Data, to file: URL, replacing: Bool) throws(GetFailure) {
        do {
            try DownloadDestination.save(body, to: file, options: replacing ? [.removePreviousFile] : [])
        } catch {
            if !replacing, isExistingFile(file) { throw GetFailure(ExitCode.fileSystem, existsMessage(file)) }
            throw GetFailure(ExitCode.fileSystem, "cannot save \(file.path): \(error.message)")
        }
    }
}
