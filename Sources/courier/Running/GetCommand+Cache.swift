import Foundation
import Courier

/// `--cache DIR`: the file download opts in to the library's disk response cache in DIR
/// (``DownloadPolicy/responseCache``), so a stored answer is published like a network body and
/// a complete body of at most ``cacheMaximumBytes`` is stored (Docs/CommandLine.md, "A response cache").
extension GetCommand {
    /// The disk store's bound, and so the largest body `--cache` stores.
    static let cacheMaximumBytes = 256 << 20

    /// The response cache `--cache` names, or `nil` without it.
    func openCache(in cwd: URL) throws(GetFailure) -> ResponseCache? {
        guard let directory = options.cacheDirectory else { return nil }
        do {
            return try ResponseCache.disk(
                directory: URL(fileURLWithPath: directory, relativeTo: cwd), maximumBytes: Self.cacheMaximumBytes)
        } catch {
            throw GetFailure(ExitCode.fileSystem, "cannot use the cache directory \(directory): \(error)")
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
}
