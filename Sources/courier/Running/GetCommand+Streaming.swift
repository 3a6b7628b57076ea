import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
import Courier
import CourierSupport

/// `-o -`: the body goes to stdout as it arrives, through the library's `bytes(for:)` and its
/// ``StreamSink`` (the proof, the digest and the record a restarted child continues from), so that
/// what is on stdout is always a prefix of the true body. The rules and their messages:
/// Docs/CommandLine.md (`-o -`, and "The supervised child" for a crash while streaming).
extension GetCommand {
    /// How a streamed body ended, with what the messages need.
    struct StreamEnd: Sendable {
        /// Bytes on stdout now (an earlier child's included).
        var written: Int64 = 0
        /// Bytes an earlier child had written, which this one read again without writing.
        var resumed: Int64 = 0
        /// The body could not be proven complete and `--accept-unverified` let it through.
        var unverified = false
        /// Whether the response had a strong validator (so a cut could have been continued).
        var hasValidator = false
        /// Why it ended early; `nil` when every byte is out and verified.
        var failure: (any Error)?
        /// The response head, once it arrived (`--etag-save` takes its ETag).
        var response: HTTPURLResponse?
    }

    /// Runs the streaming download to its end and returns the exit code; every message is printed.
    func runStreaming() -> Int32 {
        let (printer, resizes) = makeProgressPrinter()
        defer { resizes?.cancel() }
        let (stops, watcher) = StopSignals.watching()
        defer { watcher.cancel() }
        // A reader that goes away (`| head`) is a failed write said on stderr, not a silent death.
        signal(SIGPIPE, SIG_IGN)

        // The library's sink keeps the proof, the digest and the record a restarted child continues from.
        let staging = ProcessInfo.processInfo.environment[Self.stagingVariable].map { URL(fileURLWithPath: $0, isDirectory: true) }
        let sink: StreamSink
        do {
            sink = try StreamSink(
                descriptor: STDOUT_FILENO, recordFile: staging.map(StandardOutputRecord.file(in:)),
                expectedSHA256: options.expectedSHA256, publishesUnverifiedBodies: options.acceptUnverified)
        } catch {
            // The supervisor does not restart in this case; a child started some other way must not either.
            guard case .cannotContinue(let earlier)? = error.underlyingError as? StreamSink.Problem else {
                ProgressPrinter.writeToStandardError("courier: \(Self.oneLine(error.message))\n")
                return ExitCode.forError(error)
            }
            ProgressPrinter.writeToStandardError(
                "courier: an earlier process wrote to stdout and its bytes cannot be continued exactly\(earlier.incompleteSuffix)\n")
            return ExitCode.network
        }

        let retries = Locked(0)
        let verbose = options.verbose ? VerboseMonitor(printer: printer, redaction: OutputRedaction.current) : nil
        let manager = streamingManager(printer: printer, retries: retries, verbose: verbose)
        defer { manager.invalidate(cancelingTasks: true) }
        let started = ProgressPrinter.monotonicSeconds()
        // The request a file download sends; the library asks for the representation's own bytes
        // (`Accept-Encoding: identity`) for a stream that pauses, as for a file: a length to check,
        // offsets that mean something for Range, a checksum over what the server has.
        let request = self.request()
        stops.beforeLeaving { printer.finish() }
        printer.start()
        // Cancelling the consuming task cancels the transfer; the loop then ends with `cancelled`.
        let ended = stops.wait { [self] in await streamBody(manager: manager, request: request, sink: sink, printer: printer) }
        verbose?.waitUntilPrinted()
        printer.finish()
        let seconds = ProgressPrinter.monotonicSeconds() - started
        let end = ended ?? StreamEnd(failure: GetFailure(ExitCode.failure, "the download ended without a result"))

        guard let failure = end.failure else {
            do {
                try conditional.saveETag(from: end.response)
            } catch {
                return fail(error)
            }
            if end.unverified { Self.warnUnverified("the body written to stdout was") }
            if printer.style != .quiet {
                ProgressPrinter.writeToStandardError(
                    ProgressFormat.summary(
                        path: nil, size: end.written, seconds: seconds, bytesReceived: end.written - end.resumed,
                        resumedBytes: end.resumed, retries: retries.current) + "\n")
            }
            return ExitCode.success
        }
        return reportStreamFailure(failure, end: end, stops: stops)
    }

    /// One line for a stream that ended early, and its exit code.
    private func reportStreamFailure(_ failure: any Error, end: StreamEnd, stops: StopSignals) -> Int32 {
        guard let error = failure as? CourierError else { return fail(failure, suffix: Self.incompleteSuffix(written: end.written)) }
        if end.written == 0 && conditional.request.isNotModified(error) { return notModified(error) }
        if error.isCancellation, let signal = stops.signal {
            ProgressPrinter.writeToStandardError(Self.interruptedStreamLine(written: end.written) + "\n")
            return ExitCode.forSignal(signal)
        }
        var suffix = Self.incompleteSuffix(written: end.written)
        if end.written > 0, !end.hasValidator, error.isTransport || error.code == .timedOut {
            suffix += " (the server sent no ETag or Last-Modified, so the body could not be continued where it stopped)"
        }
        return fail(error, suffix: suffix)
    }

    /// The manager for one streamed body: get's (``managerConfiguration(_:verbose:say:retryLine:)``,
    /// each retry counted for the summary) with the command's deadline and `--retries` as its
    /// retry policy (which continues a stream by `Range` once bytes were handed over).
    private func streamingManager(printer: ProgressPrinter, retries: Locked<Int>, verbose: VerboseMonitor?) -> SessionManager {
        let limit = options.retries
        var configuration = Self.managerConfiguration(options, verbose: verbose, say: { printer.message($0) }) { event in
            retries.withLock { $0 += 1 }
            // The policy is the command's, so its limit is known (the library reports `nil`
            // for a retrier's limit).
            return Self.retryLine(
                TaskRetryEvent(
                    error: event.error, retry: event.retry, retryLimit: limit, delay: event.delay,
                    bytesReceived: event.bytesReceived, continuesFrom: event.continuesFrom))
        }
        configuration.deadline = options.maxTime.map { .seconds(roundingUp: $0) }
        configuration.retryPolicy = Self.retryPolicy(retries: options.retries)
        // Not to another origin a redirect leads to, unless trusted (as for files).
        if !options.locationTrusted { configuration.sensitiveHeaders = Set(options.headers.map { $0.name.lowercased() }) }
        return SessionManager(configuration: configuration)
    }

    /// `.pause` (see `streamBody`), and `--timeout` (default 60 s, whole seconds rounded up, as
    /// for files) as the longest wait for the head and the longest silence between chunks.
    private func streamPolicy() -> StreamPolicy {
        let silence = Duration.seconds(max(1, (options.timeout ?? 60).rounded(.up)))
        return StreamPolicy(overflow: .pause, headTimeout: silence, idleTimeout: silence)
    }

    /// Streams the body to stdout through `sink`; returns how it ended (never throws: every way
    /// out is a ``StreamEnd``, so the caller can say how much was written).
    private func streamBody(
        manager: SessionManager, request: URLRequest, sink: StreamSink, printer: ProgressPrinter
    ) async -> StreamEnd {
        var end = StreamEnd(written: sink.written, resumed: sink.resumed)
        do {
            // Paused rather than failed when stdout is slower than the network: the library stops
            // the transfer and continues it with Range once the writes have caught up (a body
            // without a validator cannot pause and fails instead).
            let (bytes, response) = try await manager.bytes(
                for: request, policy: streamPolicy(), validation: conditional.request.validation())
            end.response = response
            try sink.begin(response)
            end.unverified = !sink.isVerified
            for try await chunk in bytes.chunks {
                let before = sink.written
                // A blocking write on a cooperative thread, on purpose: the pipe's pace is the
                // command's pace, and while it blocks the library pauses the transfer (`.pause`).
                try sink.write(chunk)
                if sink.written != before { printer.update(completed: sink.written, total: sink.facts?.length) }
            }
            try sink.finish()
        } catch {
            end.failure = Self.sinkFailure(error, sink: sink)
        }
        end.written = sink.written
        end.hasValidator = sink.facts?.validator != nil
        return end
    }

    /// The sink's problems in the command's words, with their exit codes; other errors as they are.
    static func sinkFailure(_ error: CourierError, sink: StreamSink) -> any Error {
        guard let problem = error.underlyingError as? StreamSink.Problem else { return error }
        let written = sink.written
        switch problem {
        case .unverifiable(let why):
            return GetFailure(
                ExitCode.integrity,
                why + "; nothing could prove it complete, so nothing was written to stdout "
                    + "(--accept-unverified writes it anyway, with a warning)")
        case .versionChanged(let earlier), .cannotContinue(let earlier):
            return GetFailure(
                ExitCode.network,
                "the server's body changed after the download process crashed (its ETag, Last-Modified or "
                    + "length differ), so it cannot be continued after the bytes already written"
                    + Self.incompleteSuffix(written: earlier.written))
        case .endedBeforeWrittenBytes:
            return GetFailure(
                ExitCode.integrity, "the body ended before the bytes already written to stdout" + Self.incompleteSuffix(written: written))
        case .lengthMismatch(let received, let announced):
            return GetFailure(
                ExitCode.integrity,
                "the body ended after \(received) of the \(announced) bytes the server announced" + Self.incompleteSuffix(written: written))
        case .digestMismatch(let actual, let expected):
            return GetFailure(
                ExitCode.integrity,
                "integrity check failed: the body's SHA-256 is \(SHA256.hexString(actual)), not "
                    + "\(SHA256.hexString(expected)); the \(StandardOutputRecord.amount(written)) written to stdout must not be trusted")
        case .writeFailed(let code):
            return GetFailure(
                ExitCode.fileSystem,
                "cannot write to stdout (\(String(cString: strerror(code)))) after \(ProgressFormat.bytes(written))"
                    + (sink.facts?.length.map { " of \(ProgressFormat.bytes($0))" } ?? "") + ": the output is incomplete")
        case .recordFailed(let why):
            return GetFailure(ExitCode.fileSystem, "cannot keep the record of what was written to stdout (\(why))")
        }
    }

    // MARK: - Messages

    /// What a failure leaves on stdout: `; nothing was written to stdout`, or
    /// `; the output is incomplete: 97.7 KiB (100000 bytes) were written to stdout`.
    static func incompleteSuffix(written: Int64) -> String {
        guard written > 0 else { return "; nothing was written to stdout" }
        return "; the output is incomplete: \(StandardOutputRecord.amount(written)) were written to stdout"
    }

    /// What to say after stopping a streamed body for a signal.
    static func interruptedStreamLine(written: Int64) -> String {
        guard written > 0 else { return "courier: interrupted; nothing was written to stdout" }
        return "courier: interrupted; the output is incomplete: \(StandardOutputRecord.amount(written)) were written to stdout"
    }
}
