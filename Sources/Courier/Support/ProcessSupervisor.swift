import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs a copy of this program as a child process and watches it from the parent: the way to outlive a
/// FoundationNetworking trap (Docs/Platform.md §7), which ends the process it hits and cannot be
/// caught inside it. The parent blocks SIGINT, SIGTERM and SIGCHLD and takes them with
/// `sigwaitinfo` (so nothing runs in a signal handler, and each signal comes with its origin),
/// starts the child (``spawn(arguments:environment:input:)``), passes stop signals on and reaps it
/// (``wait(for:killingAt:)``); the child ties its life to the parent's (``dieWithParent()``).
/// What to do when a child ends is the caller's: `courier get` restarts one that a trap ended.
///
/// Use it from a single-threaded parent, on its main thread: a signal blocked here can still be
/// delivered to another thread, and the child's death signal fires when the thread that spawned
/// it ends.
public struct ProcessSupervisor {
    /// How a child ended.
    public enum Ending: Equatable, Sendable {
        /// It exited with this status.
        case exited(Int32)
        /// A signal ended it.
        case signaled(Int32)

        /// Decodes a `waitpid` status (the `WIFEXITED`/`WTERMSIG` macros are not imported); `nil`
        /// for a child that stopped rather than ended.
        public init?(waitStatus status: Int32) {
            let low = status & 0x7F
            if low == 0 {
                self = .exited((status >> 8) & 0xFF)
            } else if low != 0x7F {
                self = .signaled(low)
            } else {
                return nil
            }
        }
    }

    /// The signals a trap or a crash ends a process with.
    public static let trapSignals: Set<Int32> = [SIGILL, SIGTRAP, SIGABRT, SIGSEGV, SIGBUS, SIGFPE]

    private var watched = sigset_t()
    private var original = sigset_t()

    /// Blocks SIGINT, SIGTERM and SIGCHLD in this thread: from here on they wait to be taken by
    /// ``takeSignals(child:timeout:)`` and ``wait(for:killingAt:)``.
    public init() {
        sigemptyset(&watched)
        for signal in [SIGINT, SIGTERM, SIGCHLD] { sigaddset(&watched, signal) }
        pthread_sigmask(SIG_BLOCK, &watched, &original)
    }

    /// Starts `/proc/self/exe` (this program) with `arguments` (after the program's name) and
    /// `environment`, the signal mask this thread had before ``init()``, and `input` as its
    /// stdin when given. Throws a ``CourierError/Code-swift.struct/fileSystem`` error with the
    /// system's reason when it cannot start.
    public func spawn(arguments: [String], environment: [String: String], input: Int32? = nil) throws(CourierError) -> pid_t {
        let argv = [CommandLine.arguments.first ?? "courier"] + arguments
        let envp = environment.map { "\($0.key)=\($0.value)" }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var mask = original
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))

        let cArgv = argv.map { strdup($0) } + [nil]
        let cEnvp = envp.map { strdup($0) } + [nil]
        defer { (cArgv + cEnvp).forEach { free($0) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let input, input != STDIN_FILENO {
            // `dup2` clears the close-on-exec flag the input was opened with, on the copy only.
            posix_spawn_file_actions_adddup2(&actions, input, STDIN_FILENO)
        }
        var child: pid_t = 0
        let result = posix_spawn(&child, "/proc/self/exe", &actions, &attributes, cArgv, cEnvp)
        guard result == 0 else { throw CourierError(code: .fileSystem, message: String(cString: strerror(result))) }
        return child
    }

    /// Waits until `child` ends, passing SIGINT and SIGTERM on to it (``forwards(signalCode:)``).
    /// Returns how it ended, the first stop signal that came meanwhile, and whether it was killed
    /// (SIGKILL) for outliving `hardLimit` (``monotonicNanoseconds()``), a bound even on a child
    /// that is stuck.
    public mutating func wait(for child: pid_t, killingAt hardLimit: UInt64?) -> (ending: Ending, stop: Int32?, overdue: Bool) {
        var stop: Int32?
        while true {
            var timeout: Int?
            if let hardLimit {
                let now = Self.monotonicNanoseconds()
                timeout = now >= hardLimit ? 0 : Int((hardLimit - now) / 1_000_000_000) + 1
            }
            if let signal = takeSignals(child: child, timeout: timeout) { stop = stop ?? signal }
            var status: Int32 = 0
            let reaped = waitpid(child, &status, WNOHANG)
            if reaped == child, let ending = Ending(waitStatus: status) { return (ending, stop, false) }
            if reaped == -1 && errno != EINTR { return (.exited(1), stop, false) }  // cannot happen: it is our child
            if let hardLimit, Self.monotonicNanoseconds() >= hardLimit {
                kill(child, SIGKILL)
                while waitpid(child, &status, 0) == -1 && errno == EINTR {}
                return (.signaled(SIGKILL), stop, true)
            }
        }
    }

    /// Takes the pending SIGINT, SIGTERM and SIGCHLD, waiting up to `timeout` seconds (`nil`:
    /// until one comes) for the first. Passes SIGINT and SIGTERM on to `child` unless the
    /// terminal sent them. Returns the first stop signal taken (SIGCHLD is left to the reaping).
    public mutating func takeSignals(child: pid_t?, timeout: Int?) -> Int32? {
        var stop: Int32?
        var wait = timeout
        while true {
            var info = siginfo_t()
            let signal: Int32
            if let seconds = wait {
                var limit = timespec(tv_sec: seconds, tv_nsec: 0)
                signal = sigtimedwait(&watched, &info, &limit)
            } else {
                signal = sigwaitinfo(&watched, &info)
            }
            if signal == -1 {
                if errno == EINTR { continue }
                return stop  // EAGAIN: nothing (more) pending
            }
            wait = 0  // after the first, only take what is already pending
            guard signal == SIGINT || signal == SIGTERM else { continue }
            stop = stop ?? signal
            if let child, Self.forwards(signalCode: info.si_code) { kill(child, signal) }
        }
    }

    /// Whether a SIGINT or SIGTERM with this `si_code` is passed on to the child. `SI_KERNEL`
    /// means the terminal sent it (Ctrl-C), to its whole foreground process group: the child,
    /// which shares ours, has its own copy, and a second one would make it stop without
    /// finishing its work. Anything else (`kill <pid>`, a service manager) was sent to us alone.
    public static func forwards(signalCode: Int32) -> Bool {
        signalCode != SI_KERNEL
    }

    /// Nanoseconds on `CLOCK_MONOTONIC`: one clock for every process on the machine, so a parent
    /// can hand a deadline to its children.
    public static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// In a child: asks for SIGKILL when the thread that spawned it ends (`PR_SET_PDEATHSIG`);
    /// `false` when that cannot be had. The parent may have died before the call: check
    /// `getppid()` after it, so that no moment is left uncovered.
    public static func dieWithParent() -> Bool {
        // Only the child can ask for its death signal (no spawn API sets it).
        setParentDeathSignal(SIGKILL)
    }

    /// `prctl(PR_SET_PDEATHSIG, signal)`. Glibc's `prctl` is variadic, which Swift does not import,
    /// so it is called through a pointer with the fixed five-argument form its implementation
    /// reads (integer arguments are passed the same way either way on Linux's ABIs).
    private static func setParentDeathSignal(_ signal: Int32) -> Bool {
        typealias Prctl = @convention(c) (Int32, UInt, UInt, UInt, UInt) -> Int32
        guard let symbol = dlsym(nil, "prctl") else { return false }
        let prctl = unsafeBitCast(symbol, to: Prctl.self)
        let setParentDeathSignal: Int32 = 1  // PR_SET_PDEATHSIG, <linux/prctl.h>
        return prctl(setParentDeathSignal, UInt(signal), 0, 0, 0) == 0
    }

    /// `signal 4, SIGILL`.
    public static func describe(signal: Int32) -> String {
        let names: [Int32: String] = [
            SIGILL: "SIGILL", SIGTRAP: "SIGTRAP", SIGABRT: "SIGABRT", SIGSEGV: "SIGSEGV", SIGBUS: "SIGBUS",
            SIGFPE: "SIGFPE", SIGKILL: "SIGKILL", SIGINT: "SIGINT", SIGTERM: "SIGTERM", SIGHUP: "SIGHUP",
            SIGQUIT: "SIGQUIT", SIGPIPE: "SIGPIPE",
        ]
        return names[signal].map { "signal \(signal), \($0)" } ?? "signal \(signal)"
    }
}
