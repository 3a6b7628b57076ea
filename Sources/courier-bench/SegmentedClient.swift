import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CourierSupport

/// Who downloads in one `segmented` run, and how.
enum SegmentedClient: Sendable {
    /// Courier's library in this process, with this split.
    case courier(DownloadSplit)
    /// aria2c with `-x N -s N` and these further options.
    case aria2c(connections: Int, options: Aria2Options)

    /// The name on the RESULT line.
    var name: String {
        switch self {
        case .courier: "courier"
        case .aria2c: "aria2c"
        }
    }

    /// The connections the run may use, for its ideal time (an automatic split: its maximum).
    var connections: Int {
        switch self {
        case .courier(let split): split.cap(perHost: nil)
        case .aria2c(let connections, _): connections
        }
    }

    /// The settings for the RESULT line's `config=`.
    var configuration: [(key: String, value: String)] {
        switch self {
        case .courier(let split): [("split", split.description)]
        case .aria2c(let connections, let options): [("x", String(connections))] + options.configuration
        }
    }
}

/// aria2c's hand-picked options besides `-x -s`.
struct Aria2Options: Sendable, Equatable {
    /// `-k` (`--min-split-size`).
    var pieceSize = "1M"
    /// `--file-allocation`.
    var fileAllocation = "none"
    /// `--stream-piece-selector`.
    var pieceSelector = "default"
    /// `--disk-cache`.
    var diskCache = "16M"

    var configuration: [(key: String, value: String)] {
        [("k", pieceSize), ("alloc", fileAllocation), ("sel", pieceSelector), ("cache", diskCache)]
    }

    /// The whole command line for `connections` connections, saving `name` in `directory`.
    func arguments(connections: Int, url: URL, directory: URL, name: String) -> [String] {
        [
            "-x", String(connections), "-s", String(connections), "-k", pieceSize, "--file-allocation=\(fileAllocation)",
            "--stream-piece-selector=\(pieceSelector)", "--disk-cache=\(diskCache)", "--allow-overwrite=true",
            "--auto-file-renaming=false", "-d", directory.path, "-o", name, "--console-log-level=warn", "--summary-interval=0",
            url.absoluteString,
        ]
    }
}

/// How one download ended: the connections the client reported, or why it failed.
struct SegmentedOutcome: Sendable {
    var connections: Int
    var failure: String?
}

/// Runs Courier's in-process downloads for `segmented`: one manager for every run, set up so
/// that the per-host cap is not what limits a split.
final class SegmentedCourier: Sendable {
    let manager: SessionManager
    let timeout: Double

    init(timeout: Double) {
        var configuration = SessionManager.Configuration()
        configuration.urlSessionConfiguration.timeoutIntervalForRequest = timeout
        configuration.urlSessionConfiguration.httpMaximumConnectionsPerHost = 64
        configuration.maximumRunningTasksPerHost = 64
        manager = SessionManager(configuration: configuration)
        self.timeout = timeout
    }

    /// Downloads `url` into `file` (removing what an earlier run left) and waits for the end.
    func download(_ url: URL, to file: URL, split: DownloadSplit) -> SegmentedOutcome {
        var policy = DownloadPolicy.default
        policy.split = split
        let partial = DownloadPolicy.defaultPartialFile(for: file)
        for leftover in [file, partial, DownloadPolicy.recordFile(for: partial)] {
            try? FileManager.default.removeItem(at: leftover)
        }
        let outcome = Locked<SegmentedOutcome?>(nil)
        let done = DispatchSemaphore(value: 0)
        let task = manager.downloadTask(
            with: URLRequest(url: url, timeoutInterval: timeout), to: .file(file, options: .removePreviousFile), policy: policy
        ) { response in
            var result = SegmentedOutcome(connections: response.report.connections)
            if case .failure(let error) = response.result { result.failure = "\(error)" }
            outcome.withLock { $0 = result }
            done.signal()
        }
        task.resume()
        guard done.wait(timeout: .now() + timeout) == .success else {
            task.cancel()
            _ = done.wait(timeout: .now() + 10)
            return SegmentedOutcome(connections: 0, failure: "did not finish within --timeout \(ResultLine.seconds(timeout)) s")
        }
        return outcome.withLock { $0 } ?? SegmentedOutcome(connections: 0, failure: "no completion")
    }
}
