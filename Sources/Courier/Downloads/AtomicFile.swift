import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Writes small files so that readers see the old or the new content, never a mix: a private
/// temporary file beside the target, then `rename(2)`.
enum AtomicFile {
    static func write(_ data: Data, to url: URL) throws(CourierError) {
        // A fixed name, so a process killed between write and rename leaves at most this one
        // file, which the next write replaces and completion removes. Replaced, never reopened:
        // a hard link planted at the name would otherwise have its other file truncated and
        // overwritten (and then renamed over the record). See SideFile.replace.
        let temporary = temporaryFile(for: url)
        let fd = try SideFile.replace(temporary, failure: "cannot write \(url.path)")
        defer { close(fd) }
        // Held until the descriptor is closed, after the rename: the sweep of abandoned side
        // files leaves a temporary that is being written alone (SideFile+Sweep.swift).
        _ = SideFile.lock(fd)
        let code = data.withUnsafeBytes { SideFile.writeAll($0, to: fd) }
        // fsync before rename: after a power cut the record is the old one or the new one, never empty.
        guard code == 0, fsync(fd) == 0, rename(temporary.path, url.path) == 0 else {
            let failure = code != 0 ? code : errno
            unlink(temporary.path)
            throw CourierError.fileSystem("cannot write \(url.path)", url: url, errno: failure)
        }
    }

    /// The temporary file `write(_:to:)` uses for `url`: `.<name>.tmp` beside it.
    static func temporaryFile(for url: URL) -> URL {
        url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).tmp")
    }
}
