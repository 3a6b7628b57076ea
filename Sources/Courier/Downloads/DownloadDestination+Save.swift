import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension DownloadDestination {
    /// Saves `data` at `file` with a download's guarantees: written to a private staging file
    /// beside it, then published in one step (`rename(2)` with ``Options/removePreviousFile``,
    /// else `link(2)`, which never replaces a file made meanwhile), so `file` never holds a
    /// partial body. For a body already in memory (a cached response, a small download);
    /// `courier get --cache` saves with it.
    ///
    /// - Throws: ``CourierError/Code-swift.struct/destinationFailed`` when `file` exists and
    ///   replacing was not asked for, or the file cannot be published (its message names it);
    ///   ``CourierError/Code-swift.struct/fileSystem`` when the staging file cannot be written.
    ///   The staging file is removed on every path.
    public static func save(_ data: Data, to file: URL, options: Options = []) throws(CourierError) {
        let staging = try StagingFile(in: file.deletingLastPathComponent())
        // Gone already once published (renamed, or linked and unlinked); removed here otherwise.
        defer { unlink(staging.url.path) }
        let handle: SideFile.Handle
        do {
            try staging.append(data)
            handle = try staging.handOver()
        } catch {
            try? staging.close()
            throw error
        }
        // The handle keeps the staging file locked and open until it is published.
        try withExtendedLifetime(handle) { () throws(CourierError) in
            try FilePublisher.publish(staging.url, to: file, options: options, requestURL: nil, handle: handle)
        }
    }
}
