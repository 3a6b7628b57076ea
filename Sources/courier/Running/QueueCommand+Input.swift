import Foundation
import Courier
#if canImport(Glibc)
import Glibc
#endif

extension QueueCommand {
    /// How reading the input ended.
    enum Ending {
        /// The input ended and every item of it finished.
        case finished
        /// SIGINT or SIGTERM.
        case signal(Int32)
        /// A line with a mistake (exit 2), named in the error.
        case mistake(UsageError)
        /// The input could not be read or kept, the queue could not be updated, or a line's file
        /// is in the way.
        case failure(GetFailure)
    }

    /// The input's spool: the file the supervisor named (``inputVariable``). The child reads its
    /// input from stdin, where the supervisor put it, so without a supervisor there is none.
    static func openSpool(_ options: GetCommand.QueueOptions) throws(GetFailure) -> InputSpool {
        guard let path = ProcessInfo.processInfo.environment[inputVariable] else {
            throw GetFailure(ExitCode.failure, "\(inputVariable) is not set: get -i reads its input only under its supervisor")
        }
        return try InputSpool.opened(source: STDIN_FILENO, name: source(options), path: path)
    }

    /// The feeder of the queue (the library's ``DownloadQueueFeeder``) from `spool`, with the
    /// command's cap, split and `--force`.
    func makeFeeder(_ spool: InputSpool, in cwd: URL) -> DownloadQueueFeeder {
        DownloadQueueFeeder(
            spool: spool, directory: options.outputDirectory(in: cwd),
            maximumUnfinished: DownloadQueueFeeder.maximumUnfinished(parallel: options.parallel),
            split: options.shared.split, replacingExistingFiles: options.shared.force)
    }

    /// A feeder's problem in courier's words: a line's mistake is a usage error naming the input
    /// and the line (exit 2); an input that cannot be read or kept, or a file in a line's way,
    /// exit 6; a queue that cannot be updated, its error's exit code.
    func ending(_ problem: DownloadQueueFeeder.Problem) -> Ending {
        let source = Self.source(options)
        switch problem {
        case .mistake(let mistake):
            return .mistake(UsageError(get: "\(source), \(mistake)"))
        case .lineTooLong(let error):
            return .mistake(InputSpool.tooLong(error, in: source))
        case .unreadable(let error):
            return .failure(GetFailure(ExitCode.fileSystem, error.message))
        case .destinationExists(let entry, _):
            return .failure(
                GetFailure(
                    ExitCode.fileSystem,
                    "\(entry.destination.path) already exists (line \(entry.line); use --force to replace it, or out= to save under another name)"
                ))
        case .queueFailed(let error):
            return .failure(GetFailure(ExitCode.forError(error), "cannot update the download queue: \(error.message)"))
        }
    }
}
