import Foundation
import Courier
#if canImport(Glibc)
import Glibc
#endif

/// Runs `courier get` in a child process (`/proc/self/exe` with ``childVariable`` set) and outlives
/// it when a FoundationNetworking trap kills it (Docs/Platform.md §7): the decisions are Docs/CommandLine.md,
/// "The supervised child". Signals are blocked here (one thread) and taken with `sigwaitinfo`.
struct GetSupervisor {
    /// Set in the child's environment to the supervising process's id.
    static let childVariable = "COURIER_GET_CHILD"
    /// With `--max-time`: set in the child's environment to the moment the whole command must
    /// end, in `CLOCK_MONOTONIC` nanoseconds (one clock for every process on the machine), so a
    /// restarted child gets what is left of `--max-time`, not all of it again.
    static let deadlineVariable = "COURIER_GET_DEADLINE"

    /// The command line after the program name, starting with `get`; passed to the child as is.
    let arguments: [String]
    /// `arguments` parsed, for `--retries` and `--quiet` (with `-i`, the options the items share).
    let options: GetCommand.Options
    /// With `-i`: the queue's options.
    var queue: GetCommand.QueueOptions? = nil

    // MARK: - Child side

    /// In a child started by a supervisor (``childVariable`` set): arranges to be killed when the
    /// supervisor dies and returns `true`; if the supervisor is already gone, exits. Returns
    /// `false` in a process started any other way.
    static func enterChildMode() -> Bool {
        guard let value = ProcessInfo.processInfo.environment[childVariable] else { return false }
        guard let supervisor = pid_t(value), supervisor > 0 else {
            ProgressPrinter.writeToStandardError("courier: \(childVariable) must hold the supervising process's id, not '\(value)'\n")
            exit(ExitCode.failure)
        }
        // Asked for here, before anything else runs. It fires when the thread that spawned us
        // ends: the supervisor spawns from its main thread, which lives until the process exits.
        guard ProcessSupervisor.dieWithParent() else {
            ProgressPrinter.writeToStandardError("courier: cannot tie the download to its supervising process (prctl failed)\n")
            exit(ExitCode.failure)
        }
        // The supervisor may have died before the call above: then we were reparented and the
        // signal will never come. Checked after it, so no moment is left uncovered.
        guard getppid() == supervisor else {
            ProgressPrinter.writeToStandardError(
                "courier: \(childVariable)=\(value) names a process that is not this one's parent (gone?); not downloading\n")
            exit(ExitCode.failure)
        }
        return true
    }

    /// The `--max-time` a child runs with: what is left until the supervisor's deadline, if that
    /// is sooner than `given` (a child whose time is up gets 1 ms and reports the deadline).
    static func childMaxTime(_ given: Double?) -> Double? {
        guard let text = ProcessInfo.processInfo.environment[deadlineVariable], let deadline = UInt64(text) else {
            return given
        }
        let now = ProcessSupervisor.monotonicNanoseconds()
        let left = deadline > now ? Double(deadline - now) / 1e9 : 0
        return max(min(given ?? left, left), 0.001)
    }

    // MARK: - Supervisor side

    /// How a child ended (the library's).
    typealias Ending = ProcessSupervisor.Ending

    /// Runs the download in children until one ends it; returns the exit code. With `-o -` the
    /// children share one private staging directory (so a restart continues its bytes), removed
    /// here once the command ends.
    func run() -> Int32 {
        if let queue { return runQueue(queue) }
        guard options.writesToStandardOutput else { return supervise(staging: nil) }
        let staging: URL
        do {
            staging = try GetCommand.makeStagingDirectory()
        } catch {
            ProgressPrinter.writeToStandardError("courier: \(error.message)\n")
            return error.status
        }
        defer { try? FileManager.default.removeItem(at: staging) }
        return supervise(staging: staging)
    }

    /// `-i`: opens the input (`-i FILE`; stdin is already open) for the children, makes the
    /// private directory of its spool, and supervises them. The children read the input as it
    /// comes; a mistake in it is theirs to report (exit 2, naming the line).
    private func runQueue(_ queue: GetCommand.QueueOptions) -> Int32 {
        let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
        var input = STDIN_FILENO
        if queue.input != "-" {
            let path = GetCommand.outputURL(queue.input, in: cwd).path
            input = open(path, O_RDONLY | O_CLOEXEC)
            guard input >= 0 else {
                ProgressPrinter.writeToStandardError(
                    "courier: cannot read the input file \(queue.input): \(String(cString: strerror(errno)))\n")
                return ExitCode.fileSystem
            }
            // Our stdin was closed, so the file got its number: the children must inherit it as is.
            if input == STDIN_FILENO { _ = fcntl(input, F_SETFD, 0) }
        }
        defer { if input != STDIN_FILENO { close(input) } }
        let staging: URL
        do {
            staging = try GetCommand.makeStagingDirectory(prefix: "courier-input")
        } catch {
            ProgressPrinter.writeToStandardError("courier: \(error.message)\n")
            return error.status
        }
        defer { try? FileManager.default.removeItem(at: staging) }
        return supervise(staging: nil, input: Input(descriptor: input, spool: staging.appendingPathComponent("input")))
    }

    /// `-i`'s input as the children get it: `descriptor` becomes their stdin, `spool` is where
    /// they keep what they read of it.
    private struct Input {
        let descriptor: Int32
        let spool: URL
    }

    private func supervise(staging: URL?, input: Input? = nil) -> Int32 {
        // From here on SIGINT, SIGTERM and SIGCHLD wait to be taken. This process has one thread
        // (nothing here starts another), so none can be delivered behind our back.
        var children = ProcessSupervisor()

        // `--max-time` covers the whole command, restarts included (with -i, each item instead).
        let deadline =
            queue != nil ? nil : options.maxTime.map { ProcessSupervisor.monotonicNanoseconds() + UInt64(($0 * 1e9).rounded(.up)) }
        // A child that outlives `--max-time` by ``overdueGraceSeconds`` (stuck, or stopped) is killed.
        let hardLimit = deadline.map { $0 + UInt64(Self.overdueGraceSeconds) * 1_000_000_000 }
        let outcome = children.run(
            arguments: arguments, environment: childEnvironment(deadline: deadline, staging: staging, input: input),
            input: input?.descriptor, killingAt: hardLimit
        ) { number, crashes in
            let onStandardOutput = options.streamsToStandardOutput ? staging.flatMap { StandardOutputRecord.read(in: $0) } : nil
            let givingUp: String?
            if let onStandardOutput, let refusal = Self.cannotContinueLine(signal: number, onStandardOutput) {
                givingUp = refusal
            } else if crashes > options.retries {
                givingUp = Self.givingUpLine(signal: number, attempts: crashes) + keptSuffix(staging: staging)
            } else if let deadline, ProcessSupervisor.monotonicNanoseconds() >= deadline {
                givingUp = Self.givingUpLine(signal: number, attempts: crashes, outOfTime: true) + keptSuffix(staging: staging)
            } else {
                givingUp = nil
            }
            if let givingUp {
                message(givingUp)
            } else if !options.quiet, queue != nil {
                message(Self.queueRestartLine(signal: number, restart: crashes, of: options.retries))
            } else if !options.quiet {
                message(
                    Self.restartLine(
                        signal: number, restart: crashes, of: options.retries, writtenToStandardOutput: onStandardOutput?.written))
            }
            return givingUp == nil
        }
        switch outcome {
        case .exited(let status):
            return status
        case .stopped(let signal):
            // A signal between two children: there is no child to stop, so stop here.
            return stoppedBetweenAttempts(signal, staging: staging)
        case .cannotStart(let error):
            message("courier: cannot start the download process: \(error.message)")
            return ExitCode.failure
        case .overdue:
            let kept = options.writesToStandardOutput ? "; anything written to stdout is incomplete" : keptSuffix(staging: staging)
            message("courier: the download did not stop at --max-time; its process was killed" + kept)
            return ExitCode.network
        case .signaled(let number, nil) where ProcessSupervisor.trapSignals.contains(number):
            return ExitCode.network  // gave up after crashes, said above
        case .signaled(let number, let stop?) where ProcessSupervisor.trapSignals.contains(number):
            // Crashed while stopping: nothing more to do than to stop.
            message("courier: the download process crashed (\(Self.describe(signal: number))) while stopping")
            return ExitCode.forSignal(stop)
        case .signaled(let number, let stop):
            if stop == number { return ExitCode.forSignal(number) }
            message("courier: the download process was killed by \(Self.describe(signal: number))")
            return 128 + number
        }
    }

    /// How long past `--max-time` a child may take to stop by itself (its own deadline fires
    /// then and it writes its record) before it is killed.
    static let overdueGraceSeconds = 5

    /// The children's environment: ours, with ``childVariable`` set and where the deadline, the
    /// `-o -` staging directory and `-i`'s spool are.
    private func childEnvironment(deadline: UInt64?, staging: URL?, input: Input?) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment[Self.childVariable] = String(getpid())
        environment[Self.deadlineVariable] = deadline.map(String.init)
        environment[GetCommand.stagingVariable] = staging?.path
        environment[QueueCommand.inputVariable] = input?.spool.path
        // A crash is an expected, reported event here: one line instead of the runtime's
        // full-page backtrace. A person who wants the backtrace sets SWIFT_BACKTRACE.
        if environment["SWIFT_BACKTRACE"] == nil { environment["SWIFT_BACKTRACE"] = "enable=no" }
        return environment
    }

    /// Stopped by `signal` while no child ran.
    private func stoppedBetweenAttempts(_ signal: Int32, staging: URL?) -> Int32 {
        if queue != nil {
            if !options.quiet { message("courier: interrupted; run the same command again to continue") }
        } else if options.streamsToStandardOutput {
            let written = staging.flatMap { StandardOutputRecord.read(in: $0) }?.written ?? 0
            message(GetCommand.interruptedStreamLine(written: written))
        } else {
            message(GetCommand.interruptedLine(keeping: recorded(), toStandardOutput: options.writesToStandardOutput))
        }
        return ExitCode.forSignal(signal)
    }

    /// What the children left for the next run, as their resume record says (the supervisor
    /// cannot ask a child that crashed).
    private func recorded() -> ResumeData? {
        let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
        return GetCommand.recordedResume(for: options, in: cwd)
    }

    /// `; 12.3 MiB kept — run the same command again to resume`, `; nothing was written to stdout`,
    /// how much a streamed body put on stdout, or nothing.
    private func keptSuffix(staging: URL?) -> String {
        if queue != nil { return "; the queue's journal keeps what was done — run the same command again to continue" }
        if options.streamsToStandardOutput {
            return staging.flatMap { StandardOutputRecord.read(in: $0) }?.incompleteSuffix ?? GetCommand.incompleteSuffix(written: 0)
        }
        return GetCommand.keptSuffix(recorded(), toStandardOutput: options.writesToStandardOutput)
    }

    /// One line on stderr; on a terminal it first clears a progress line the child left behind.
    private func message(_ line: String) {
        let clear = isatty(STDERR_FILENO) != 0 ? "\r\u{1B}[K" : ""
        ProgressPrinter.writeToStandardError(clear + line + "\n")
    }

    // MARK: - Messages

    static func restartLine(signal: Int32, restart: Int, of limit: Int, writtenToStandardOutput written: Int64? = nil) -> String {
        let from =
            written.map { $0 > 0 ? "continuing after the \(StandardOutputRecord.amount($0)) already on stdout" : "retrying" }
            ?? "retrying from the bytes kept"
        return "courier: the download process crashed (\(describe(signal: signal))): the server's response set off "
            + "a known trap in FoundationNetworking; \(from) (\(restart) of \(limit))"
    }

    /// A restart of `-i`'s child after a trap.
    static func queueRestartLine(signal: Int32, restart: Int, of limit: Int) -> String {
        "courier: the download process crashed (\(describe(signal: signal))): a server's response set off a known trap "
            + "in FoundationNetworking; continuing every download from the queue's journal (\(restart) of \(limit))"
    }

    /// Why a crash after bytes went to stdout ends the command, or `nil` when a new child can
    /// continue exactly after them: it needs to know exactly how many went out (no write was
    /// under way) and a validator that proves the next response has the same bytes.
    static func cannotContinueLine(signal: Int32, _ record: StandardOutputRecord) -> String? {
        let crashed = "courier: network error: the download process crashed (\(describe(signal: signal)))"
        if record.writing > 0 {
            return crashed + " while writing to stdout, so how much of that write reached it is unknown and no new "
                + "process can continue exactly after it" + record.incompleteSuffix
        }
        guard !record.isContinuable else { return nil }
        return crashed + " after bytes were written to stdout, and the server sent no ETag or Last-Modified that would "
            + "let a new process continue exactly after them" + record.incompleteSuffix
    }

    /// Why the command gave up after crashes; what was kept follows (``keptSuffix()``).
    static func givingUpLine(signal: Int32, attempts: Int, outOfTime: Bool = false) -> String {
        let times = attempts == 1 ? "once" : "\(attempts) times"
        let lead = outOfTime ? "the download did not finish within --max-time" : "network error"
        return "courier: \(lead): the download process crashed \(times) (last: \(describe(signal: signal))): "
            + "the server's response sets off a known trap in FoundationNetworking"
    }

    /// `signal 4, SIGILL` (the library's words).
    static func describe(signal: Int32) -> String { ProcessSupervisor.describe(signal: signal) }
}
