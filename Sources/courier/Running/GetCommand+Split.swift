import Foundation
import Courier

/// `--split N|auto|auto:N`: one download over several `Range` connections
/// (Docs/SegmentedDownloads.md). Long option only: `-s` is curl's `--silent`, and stays so.
extension GetCommand.Options {
    /// The value of `--split`, read by the library's one parser (``DownloadSplit/init(argument:)``).
    static func split(_ value: String) throws(UsageError) -> DownloadSplit {
        guard let split = DownloadSplit(argument: value) else {
            throw UsageError(
                get: "--split takes a number of connections from 1 to \(DownloadSplit.maximumConnections), auto, off, "
                    + "or auto:N (at most N, found by itself), not '\(value)'")
        }
        return split
    }

    /// Why `--split` with `-o -` (streamed) is refused: the ranges of a split download arrive out
    /// of order, and stdout takes bytes only in order, so splitting would mean holding what is
    /// ahead in memory without bound. `--whole` stages the body in a private file first, where
    /// ranges land in place, so there a split works.
    static let splitToStandardOutput =
        "--split cannot stream to stdout: its ranges arrive out of order and stdout takes bytes in order; "
        + "use -o - --whole (staged in a private file, then copied) or save to a file"
}

extension GetCommand {
    /// The manager's per-host cap (`current`: the configuration's, `nil` for none) for a command
    /// whose downloads ask `split` each and may hold at most `perHost` connections to one host
    /// between them (`nil`: one download, alone on its host). Raised to what they may open, never
    /// lowered, so the manager does not hold back connections the split, or the queue's cap,
    /// allows: `courier get` runs one download, and the queue's `--per-host` counts connections.
    static func runningTasksPerHost(_ current: Int?, for split: DownloadSplit, perHost: Int? = nil) -> Int? {
        guard let current else { return nil }
        return max(current, perHost ?? split.cap(perHost: nil))
    }
}
