import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Writes small files so that readers see the old or the new content, never a mix: a private
/// temporary file beside the target, then `rename(2)`.
enum AtomicFile {
    static func write(_ data: Data, to url: URL) throws(CourierError) {
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString.lowercased()).tmp")
        let fd = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw CourierError.fileSystem("cannot write \(url.path)", url: url, errno: errno) }
        let written = data.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        close(fd)
        guard written == data.count, rename(temporary.path, url.path) == 0 else {
            let code = errno
            unlink(temporary.path)
            throw CourierError.fileSystem("cannot write \(url.path)", url: url, errno: code)
        }
    }
}
