import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Writes small files so that readers see the old or the new content, never a mix: a private
/// temporary file beside the target, then `rename(2)`.
enum AtomicFile {
    static func write(_ data: Data, to url: URL) throws(CourierError) {
        // A fixed name, so a process killed between write and rename leaves at most this one
        // file, which the next write reuses and completion removes.
        let temporary = temporaryFile(for: url)
        let fd = open(temporary.path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw CourierError.fileSystem("cannot write \(url.path)", url: url, errno: errno) }
        let written = data.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        close(fd)
        guard written == data.count, rename(temporary.path, url.path) == 0 else {
            let code = errno
            unlink(temporary.path)
            throw CourierError.fileSystem("cannot write \(url.path)", url: url, errno: code)
        }
    }

    /// The temporary file `write(_:to:)` uses for `url`.
    static func temporaryFile(for url: URL) -> URL {
        url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).tmp")
    }
}
