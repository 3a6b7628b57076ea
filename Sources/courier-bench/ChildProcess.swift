import Foundation

/// A command run by `segmented` (aria2c, the `courier` command): output into files, a deadline,
/// and SIGKILL on demand.
/// Used from the one thread that started it.
final class ChildProcess {
    private let process: Process
    private let ended = DispatchSemaphore(value: 0)

    /// Starts `executable` with `arguments`; its stdout and stderr go to `log` (appended).
    init(_ executable: String, _ arguments: [String], log: URL) throws {
        if !FileManager.default.fileExists(atPath: log.path) { try Data().write(to: log) }
        let output = try FileHandle(forWritingTo: log)
        output.seekToEndOfFile()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        let ended = ended
        process.terminationHandler = { _ in ended.signal() }
        self.process = process
        try process.run()
        try? output.close()
    }

    /// Whether it is still running.
    var isRunning: Bool { process.isRunning }

    /// Waits up to `seconds`; kills it when they pass. Returns its exit status, or `nil` when it
    /// was killed for the deadline.
    func wait(seconds: Double) -> Int32? {
        if ended.wait(timeout: .now() + seconds) == .success { return process.terminationStatus }
        kill()
        ended.wait()
        return nil
    }

    /// Sends SIGKILL (a crash, not a request to stop).
    func kill() {
        _ = Glibc.kill(process.processIdentifier, SIGKILL)
    }

    /// Waits for the end after ``kill()``; the status says how it ended.
    func waitAfterKill() -> (status: Int32, killed: Bool) {
        ended.wait()
        return (process.terminationStatus, process.terminationReason == .uncaughtSignal)
    }
}
