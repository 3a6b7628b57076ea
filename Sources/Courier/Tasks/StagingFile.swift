import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A private file Courier writes a download body into before publishing it with one rename.
///
/// Created with `O_EXCL | O_NOFOLLOW` and mode 0600, so nobody else can read it and a symlink
/// planted at the path is never followed. Writes are buffered: URLSession hands over ≤ 16 KiB
/// per callback, and one `write(2)` per chunk is what makes Foundation's own download task slow
/// (PLATFORM §6). Not thread-safe: a download's staging file is created, written and closed only
/// on its ``DiskWriter``'s queue.
final class StagingFile {
    let url: URL
    private var descriptor: Int32
    private var buffer: [UInt8] = []
    private let bufferCapacity: Int
    /// Bytes accepted so far (written or buffered).
    private(set) var length: Int64 = 0

    /// A fresh, randomly named staging file in `directory`.
    convenience init(in directory: URL, bufferCapacity: Int = 256 * 1024) throws(CourierError) {
        try self.init(creating: Self.randomURL(in: directory), bufferCapacity: bufferCapacity)
    }

    /// A random `.courier-<uuid>.courier-partial` name in `directory`, chosen before the file is
    /// created so the transfer knows its path while the writer creates it.
    static func randomURL(in directory: URL) -> URL {
        directory.appendingPathComponent(".courier-\(UUID().uuidString.lowercased()).courier-partial")
    }

    /// Creates the file at `url`, which must not exist yet.
    init(creating url: URL, bufferCapacity: Int = 256 * 1024) throws(CourierError) {
        let fd = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let code = errno
            let directory = url.deletingLastPathComponent().path
            throw CourierError.fileSystem("cannot create a staging file in \(directory)", url: url, errno: code)
        }
        self.url = url
        self.descriptor = fd
        self.bufferCapacity = bufferCapacity
        buffer.reserveCapacity(bufferCapacity)
    }

    /// Opens the partial file at a fixed `url` (created 0600 if missing, never through a symlink)
    /// and keeps exactly its first `keeping` bytes: bytes past what a resume record vouches for
    /// are not trusted. Fails if the file is not a regular file or is shorter than `keeping`.
    init(at url: URL, keeping: Int64, bufferCapacity: Int = 256 * 1024) throws(CourierError) {
        let fd = open(url.path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw CourierError.fileSystem("cannot open the partial file", url: url, errno: errno)
        }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, Int64(info.st_size) >= keeping else {
            Glibc.close(fd)
            throw CourierError(
                code: .invalidResumeData, message: "the partial file \(url.path) is not a regular file holding \(keeping) bytes",
                url: url)
        }
        guard fchmod(fd, 0o600) == 0, ftruncate(fd, off_t(keeping)) == 0, lseek(fd, 0, SEEK_END) == off_t(keeping) else {
            let code = errno
            Glibc.close(fd)
            throw CourierError.fileSystem("cannot prepare the partial file", url: url, errno: code)
        }
        self.url = url
        self.descriptor = fd
        self.bufferCapacity = bufferCapacity
        self.length = keeping
        buffer.reserveCapacity(bufferCapacity)
    }

    deinit {
        if descriptor >= 0 { Glibc.close(descriptor) }
    }

    func append(_ data: Data) throws(CourierError) {
        length += Int64(data.count)
        if buffer.count + data.count > bufferCapacity { try flush() }
        if data.count >= bufferCapacity {
            if let problem = data.withUnsafeBytes({ writeAll($0) }) { throw problem }
        } else {
            buffer.append(contentsOf: data)
        }
    }

    func flush() throws(CourierError) {
        guard !buffer.isEmpty else { return }
        if let problem = buffer.withUnsafeBytes({ writeAll($0) }) { throw problem }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Drops everything written so far (a restart from byte 0).
    func truncate() throws(CourierError) {
        buffer.removeAll(keepingCapacity: true)
        length = 0
        guard ftruncate(descriptor, 0) == 0, lseek(descriptor, 0, SEEK_SET) == 0 else {
            throw CourierError.fileSystem("cannot truncate the staging file", url: url, errno: errno)
        }
    }

    /// Flushes and closes; the file stays on disk for the caller to publish or remove.
    func close() throws(CourierError) {
        defer {
            if descriptor >= 0 { Glibc.close(descriptor) }
            descriptor = -1
        }
        try flush()
    }

    /// Closes and deletes the file; used on every failure path.
    func discard() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
        unlink(url.path)
    }

    /// Writes every byte; returns the error instead of throwing so it can run inside
    /// `withUnsafeBytes`, which does not forward typed errors.
    private func writeAll(_ bytes: UnsafeRawBufferPointer) -> CourierError? {
        guard var base = bytes.baseAddress else { return nil }
        var remaining = bytes.count
        while remaining > 0 {
            let written = write(descriptor, base, remaining)
            if written < 0 {
                if errno == EINTR { continue }
                return CourierError.fileSystem("cannot write the staging file", url: url, errno: errno)
            }
            remaining -= written
            base += written
        }
        return nil
    }
}
