import Foundation
import Courier
#if canImport(Glibc)
import Glibc
#endif

/// `-o - --whole`: downloaded like a file into a private directory, copied to stdout only once
/// complete and verified (Docs/CommandLine.md, `--whole`); plain `-o -` streams (GetCommand+Streaming.swift).
extension GetCommand {
    /// Set by the supervisor in its children's environment: the private directory of a `-o -`
    /// command, the same for every child, so a restart after a crash continues: with `--whole`
    /// the body staged there, streaming after the bytes its ``StandardOutputRecord`` says are out.
    static let stagingVariable = "COURIER_GET_STAGING"

    /// A new private directory (mode 0700, from `mkdtemp`) in the temporary directory (`TMPDIR`).
    static func makeStagingDirectory(prefix: String = "courier-stdout") throws(GetFailure) -> URL {
        let template = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-XXXXXX").path
        var bytes = Array(template.utf8CString)
        guard let made = mkdtemp(&bytes) else {
            let reason = String(cString: strerror(errno))
            throw GetFailure(ExitCode.fileSystem, "cannot create a private directory in \(template): \(reason)")
        }
        return URL(fileURLWithPath: String(cString: made), isDirectory: true)
    }

    /// Copies the finished body to stdout, then removes it. Returns `nil` once every byte is
    /// written, or the exit code after saying what went wrong: stdout closed or failing (exit 6),
    /// or a stop signal (130/143; whatever was written by then is on stdout, and the message says
    /// it is incomplete).
    func copyToStandardOutput(_ file: URL, size: Int64, stops: StopSignals) -> Int32? {
        defer { unlink(file.path) }
        // A reader that goes away (`| head`) is reported as a failed write, not a silent death.
        signal(SIGPIPE, SIG_IGN)
        let input = open(file.path, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else {
            return failWriting("cannot read the downloaded body at \(file.path): \(String(cString: strerror(errno)))")
        }
        defer { close(input) }
        var buffer = [UInt8](repeating: 0, count: 256 * 1024)
        var written: Int64 = 0
        while true {
            if let signal = stops.signal {
                let line =
                    written == 0
                    ? GetCommand.interruptedLine(keeping: nil, toStandardOutput: true)
                    : "courier: interrupted while writing to stdout: \(ProgressFormat.bytes(written)) of "
                        + "\(ProgressFormat.bytes(size)) written, so the output is incomplete"
                ProgressPrinter.writeToStandardError(line + "\n")
                return ExitCode.forSignal(signal)
            }
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count == 0 { return nil }
            if count < 0 {
                if errno == EINTR { continue }
                return failWriting("cannot read the downloaded body at \(file.path): \(String(cString: strerror(errno)))")
            }
            let sent = Self.writeToStandardOutput(Data(buffer[0..<count]))
            if let reason = sent.failure {
                return failWriting(
                    "cannot write to stdout (\(reason)) after \(ProgressFormat.bytes(written + Int64(sent.count))) of "
                        + "\(ProgressFormat.bytes(size)): the output is incomplete")
            }
            written += Int64(count)
        }
    }

    private func failWriting(_ message: String) -> Int32 {
        ProgressPrinter.writeToStandardError("courier: \(message)\n")
        return ExitCode.fileSystem
    }

    /// Writes `data` to stdout in full, unless a write fails: how many bytes went out, and why
    /// it stopped.
    static func writeToStandardOutput(_ data: Data) -> (count: Int, failure: String?) {
        data.withUnsafeBytes { buffer -> (Int, String?) in
            guard let base = buffer.baseAddress else { return (0, nil) }
            var offset = 0
            while offset < buffer.count {
                let sent = write(STDOUT_FILENO, base + offset, buffer.count - offset)
                if sent < 0 {
                    if errno == EINTR { continue }
                    return (offset, String(cString: strerror(errno)))
                }
                offset += sent
            }
            return (offset, nil)
        }
    }
}
