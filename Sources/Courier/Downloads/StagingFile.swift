import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A private file Courier writes a download body into before publishing it with one rename.
///
/// Opened as every side file is (``SideFile``): never through a symlink or a hard link planted at
/// its name, created `O_EXCL` with mode 0600, so nobody else can read it. A random staging file
/// is also locked (`flock`) from its creation until it is published or removed, which keeps the
/// sweep of abandoned side files (``SideFile/Sweeper``) away from it. Writes are buffered:
/// URLSession hands over ≤ 16 KiB per callback, and one `write(2)` per chunk is what makes
/// Foundation's own download task slow (Docs/Platform.md §6). Not thread-safe: a download's staging file
/// is created, written and closed only on its ``DiskWriter``'s queue.
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

    /// The suffix of random staging files. Distinct from `.courier-partial`: a partial file may be
    /// resumed by a later run and is never swept; a random staging file is nobody's once its
    /// process is gone (one kept for resuming is renamed, see ``keepForResuming()``).
    static let randomSuffix = ".courier-staging"

    /// A random `.courier-<uuid>.courier-staging` name in `directory`, chosen before the file is
    /// created so the transfer knows its path while the writer creates it.
    static func randomURL(in directory: URL) -> URL {
        directory.appendingPathComponent(".courier-\(UUID().uuidString.lowercased())\(randomSuffix)")
    }

    /// Creates the file at `url`, which must not exist yet, and locks it.
    init(creating url: URL, bufferCapacity: Int = 256 * 1024) throws(CourierError) {
        let directory = url.deletingLastPathComponent().path
        let fd = try SideFile.create(url, access: O_RDWR, failure: "cannot create a staging file in \(directory)")
        // Only a sweep can hold the lock of a file this new, and it then removes the name: with
        // the name checked after locking, the file is either ours and locked, or an error.
        guard SideFile.lock(fd), SideFile.names(url, fd) else {
            Glibc.close(fd)
            throw CourierError.fileSystem("the staging file \(url.path) was removed while it was created", url: url)
        }
        self.url = url
        self.descriptor = fd
        self.bufferCapacity = bufferCapacity
        buffer.reserveCapacity(bufferCapacity)
    }

    /// Opens the partial file at a fixed `url` and keeps exactly its first `keeping` bytes: bytes
    /// past what a resume record vouches for are not trusted.
    ///
    /// With `keeping == 0` nothing on disk is used: whatever holds the name is unlinked (only
    /// that link) and a new file created, so a hard link or symlink planted there is never
    /// truncated or written. Otherwise the file must be private (``SideFile/isPrivate(_:)``,
    /// checked on the opened descriptor) and hold at least `keeping` bytes, or this fails with
    /// ``CourierError/Code-swift.struct/invalidResumeData`` and writes nothing.
    init(at url: URL, keeping: Int64, bufferCapacity: Int = 256 * 1024) throws(CourierError) {
        let fd: Int32
        if keeping == 0 {
            fd = try SideFile.replace(url, access: O_RDWR, failure: "cannot create the partial file")
        } else {
            guard let (opened, status) = SideFile.openExisting(url, access: O_RDWR) else {
                throw CourierError(
                    code: .invalidResumeData,
                    message: "cannot open the partial file \(url.path): \(String(cString: strerror(errno)))", url: url)
            }
            guard SideFile.isPrivate(status), Int64(status.st_size) >= keeping else {
                Glibc.close(opened)
                throw CourierError(
                    code: .invalidResumeData,
                    message: "the partial file \(url.path) is not a private regular file (one link, owned by this user) "
                        + "holding \(keeping) bytes", url: url)
            }
            fd = opened
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

    /// Writes `data` at `offset` (a segmented download's connections each write their own
    /// range), after what is buffered for appending; ``length`` becomes the file's extent.
    func write(_ data: Data, at offset: Int64) throws(CourierError) {
        try flush()
        let code = data.withUnsafeBytes { SideFile.writeAll($0, to: descriptor, at: offset) }
        guard code == 0 else { throw CourierError.fileSystem("cannot write the staging file", url: url, errno: code) }
        length = max(length, offset + Int64(data.count))
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

    /// Flushes and hands the open descriptor over for publishing: the lock stays held (and the
    /// publisher works on this very file) until the handle is released.
    func handOver() throws(CourierError) -> SideFile.Handle {
        try flush()
        let handle = SideFile.Handle(url: url, descriptor: descriptor)
        descriptor = -1
        return handle
    }

    /// Flushes and closes a file kept for resuming; returns where it now is. A random staging
    /// file gets the partial file's suffix first (`.courier-<uuid>.courier-partial`), while it is
    /// still locked: the resume data handed out names it, and a sweep must not take it for
    /// an abandoned staging file once this process is gone.
    func keepForResuming() throws(CourierError) -> URL {
        var kept = url
        let name = url.lastPathComponent
        if name.hasSuffix(Self.randomSuffix) {
            let partial = url.deletingLastPathComponent()
                .appendingPathComponent(String(name.dropLast(Self.randomSuffix.count)) + ".courier-partial")
            // link(2) never replaces a file already there; if the name is taken, the file stays as it is.
            if link(url.path, partial.path) == 0 {
                unlink(url.path)
                kept = partial
            }
        }
        try close()
        return kept
    }

    /// Closes and deletes the file; used on every failure path. The name goes before the lock.
    func discard() {
        unlink(url.path)
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }

    /// The SHA-256 state after the file's first `length` bytes, read through the open descriptor
    /// (never the path, which could lead elsewhere by now): a resumed download's checksum covers
    /// what an earlier run wrote.
    func hashPrefix(length: Int64) throws(CourierError) -> SHA256 {
        var hasher = SHA256()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var offset: Int64 = 0
        while offset < length {
            let wanted = Int(min(length - offset, Int64(buffer.count)))
            let read = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, wanted, off_t(offset)) }
            if read < 0, errno == EINTR { continue }
            guard read > 0 else {
                throw CourierError.fileSystem("cannot read the partial file to check it", url: url, errno: read < 0 ? errno : nil)
            }
            buffer.withUnsafeBytes { hasher.update(bytes: UnsafeRawBufferPointer(rebasing: $0[0..<read])) }
            offset += Int64(read)
        }
        return hasher
    }

    /// Writes every byte; returns the error instead of throwing so it can run inside
    /// `withUnsafeBytes`, which does not forward typed errors.
    private func writeAll(_ bytes: UnsafeRawBufferPointer) -> CourierError? {
        let code = SideFile.writeAll(bytes, to: descriptor)
        return code == 0 ? nil : CourierError.fileSystem("cannot write the staging file", url: url, errno: code)
    }
}
