import XCTest
@testable import courier
#if canImport(Glibc)
import Glibc
#endif

/// A pseudo-terminal whose slave becomes the controlling terminal of a new session, so that
/// typing ^C into the master signals that session's foreground process group, as a person's
/// terminal does. The pty functions are not in Swift's Glibc module; they are looked up by name.
final class PseudoTerminal {
    let master: Int32
    let slavePath: String

    init() throws {
        typealias OpenFunction = @convention(c) (Int32) -> Int32
        typealias FDFunction = @convention(c) (Int32) -> Int32
        typealias NameFunction = @convention(c) (Int32, UnsafeMutablePointer<CChar>, Int) -> Int32
        func lookup<Function>(_ name: String, as type: Function.Type) throws -> Function {
            guard let symbol = dlsym(nil, name) else { throw Failure(what: "dlsym(\(name))") }
            return unsafeBitCast(symbol, to: type)
        }
        let master = try lookup("posix_openpt", as: OpenFunction.self)(O_RDWR | O_NOCTTY)
        guard master >= 0 else { throw Failure(what: "posix_openpt") }
        var name = [CChar](repeating: 0, count: 128)
        guard try lookup("grantpt", as: FDFunction.self)(master) == 0,
            try lookup("unlockpt", as: FDFunction.self)(master) == 0,
            try lookup("ptsname_r", as: NameFunction.self)(master, &name, name.count) == 0
        else {
            close(master)
            throw Failure(what: "grantpt/unlockpt/ptsname_r")
        }
        self.master = master
        slavePath = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit { close(master) }

    struct Failure: Error { let what: String }

    /// Writes one byte as if typed.
    func type(_ byte: UInt8) throws {
        var byte = byte
        guard write(master, &byte, 1) == 1 else { throw Failure(what: "write") }
    }

    /// Sets the terminal's size, as a terminal window does when resized: the kernel sends
    /// SIGWINCH to the foreground process group.
    func setSize(columns: Int, rows: Int = 24) throws {
        var size = winsize(ws_row: UInt16(rows), ws_col: UInt16(columns), ws_xpixel: 0, ws_ypixel: 0)
        guard ioctl(master, UInt(TIOCSWINSZ), &size) == 0 else { throw Failure(what: "TIOCSWINSZ") }
    }

    /// What the program wrote to the terminal since the last call, waiting up to `timeout`
    /// seconds for the first byte. Keep reading while a program writes: a full terminal blocks it.
    func read(timeout: TimeInterval) -> String {
        var collected = Data()
        var wait = Int32(timeout * 1000)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            var descriptor = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, wait) > 0 else { break }
            let count = Glibc.read(master, &buffer, buffer.count)
            guard count > 0 else { break }
            collected.append(contentsOf: buffer[0..<count])
            wait = 0
        }
        return String(decoding: collected, as: UTF8.self)
    }

    /// Spawns `path` as the leader of a new session with the slave as stdin (which makes it the
    /// controlling terminal), stdout to /dev/null and stderr to the file `standardError`, or to
    /// the terminal when it is `nil` (then ``read(timeout:)`` returns what was written there).
    func spawnSessionLeader(
        _ path: String, _ argv: [String], environment: [String: String], standardError: String?
    ) throws
        -> SpawnedProcess
    {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, slavePath, O_RDWR, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        if let standardError {
            posix_spawn_file_actions_addopen(&actions, 2, standardError, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        } else {
            posix_spawn_file_actions_adddup2(&actions, 0, 2)
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        let setSession: Int16 = 0x80  // POSIX_SPAWN_SETSID (glibc ≥ 2.26), not in Swift's Glibc module
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        posix_spawnattr_setflags(&attributes, setSession | Int16(POSIX_SPAWN_SETSIGMASK))
        let cArgv = argv.map { strdup($0) } + [nil]
        let cEnvp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (cArgv + cEnvp).forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, path, &actions, &attributes, cArgv, cEnvp)
        guard result == 0 else { throw Failure(what: "posix_spawn: \(result)") }
        return SpawnedProcess(pid: pid)
    }
}

/// A process started with `posix_spawn`, reaped with `waitpid`.
final class SpawnedProcess {
    let pid: pid_t
    private var ended: GetSupervisor.Ending?

    init(pid: pid_t) { self.pid = pid }

    /// How it ended, waiting up to `timeout` seconds (then killing it: `nil`).
    func wait(timeout: TimeInterval) -> GetSupervisor.Ending? {
        let deadline = Date().addingTimeInterval(timeout)
        while ended == nil {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                ended = GetSupervisor.Ending(waitStatus: status)
            } else if Date() > deadline {
                killIfRunning()
                return nil
            } else {
                usleep(10_000)
            }
        }
        return ended
    }

    /// How it ended, if it has; never waits.
    func poll() -> GetSupervisor.Ending? {
        var status: Int32 = 0
        if ended == nil, waitpid(pid, &status, WNOHANG) == pid { ended = GetSupervisor.Ending(waitStatus: status) }
        return ended
    }

    func killIfRunning() {
        guard ended == nil else { return }
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        ended = GetSupervisor.Ending(waitStatus: status)
    }
}
