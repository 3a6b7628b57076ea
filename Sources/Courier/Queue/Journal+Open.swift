import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension Journal {
    /// Opens the journal in `directory` — creating the directory (0700, its parent must exist)
    /// and the files (0600) as needed — and locks the directory for the journal's life. Returns
    /// the records in the order they were appended, and what replay found (see "Replay" in
    /// ``Journal``).
    ///
    /// Throws when another process (or another `Journal` of this one) holds the directory, when
    /// `journal` or `lock` is a symlink or not a private regular file, when `journal` is not a
    /// Courier journal or is of a newer format, and on I/O errors. Nothing is written to a file
    /// that was refused.
    package static func open(directory: URL) throws(CourierError) -> (Journal, records: [Data], report: Report) {
        let killPoint = try KillPoint.fromEnvironment()
        let directory = directory.standardizedFileURL
        try prepareDirectory(directory)
        let lockDescriptor = try takeLock(in: directory)
        do throws(CourierError) {
            // A compaction killed before its rename left its snapshot: the journal is the old one.
            unlink(AtomicFile.temporaryFile(for: directory.appendingPathComponent("journal")).path)
            let (descriptor, created) = try openPrivate(
                directory.appendingPathComponent("journal"), access: O_RDWR | O_APPEND, what: "journal")
            do throws(CourierError) {
                if created { try syncDirectory(directory) }
                var replay = Replay(descriptor: descriptor, directory: directory)
                let records = try replay.run()
                let journal = Journal(
                    directory: directory, descriptor: descriptor, size: replay.size, lockDescriptor: lockDescriptor,
                    killPoint: killPoint)
                return (journal, records, replay.report)
            } catch {
                Glibc.close(descriptor)
                throw error
            }
        } catch {
            Glibc.close(lockDescriptor)
            throw error
        }
    }

    /// Makes sure `directory` is a directory, creating it 0700 (not its parents) when missing.
    private static func prepareDirectory(_ directory: URL) throws(CourierError) {
        var status = stat()
        if stat(directory.path, &status) != 0 {
            guard errno == ENOENT else {
                throw CourierError.fileSystem("cannot use the queue directory \(directory.path)", url: directory, errno: errno)
            }
            // Only the last component: a missing parent is more likely a mistake than a wish.
            guard mkdir(directory.path, 0o700) == 0 || errno == EEXIST else {
                throw CourierError.fileSystem("cannot create the queue directory \(directory.path)", url: directory, errno: errno)
            }
            // The new entry in the parent must survive a crash along with the journal in it.
            try syncDirectory(directory.deletingLastPathComponent())
            guard stat(directory.path, &status) == 0 else {
                throw CourierError.fileSystem("cannot use the queue directory \(directory.path)", url: directory, errno: errno)
            }
        }
        guard status.st_mode & S_IFMT == S_IFDIR else {
            throw CourierError(code: .fileSystem, message: "the queue directory \(directory.path) is not a directory", url: directory)
        }
    }

    /// Opens (or creates) `lock` in `directory`, takes its `flock`, and writes this process's PID
    /// into it; returns its descriptor, which holds the lock until it is closed.
    private static func takeLock(in directory: URL) throws(CourierError) -> Int32 {
        let url = directory.appendingPathComponent("lock")
        let (descriptor, _) = try openPrivate(url, access: O_RDWR, what: "lock file")
        // `flock` locks belong to the open file description: a second open in this very process
        // conflicts too, which is what keeps two queues in one process apart.
        guard SideFile.lock(descriptor) else {
            let code = errno
            let holder = code == EWOULDBLOCK ? lockHolder(descriptor) : nil
            Glibc.close(descriptor)
            guard code == EWOULDBLOCK else {
                throw CourierError.fileSystem("cannot lock the queue directory \(directory.path)", url: url, errno: code)
            }
            throw CourierError(
                code: .fileSystem,
                message: "the queue directory \(directory.path) is in use by another process"
                    + (holder.map { " (pid \($0))" } ?? ""),
                url: directory)
        }
        // Only for the message above: the lock, not the PID, decides who owns the directory.
        let pid = Array("\(getpid())\n".utf8)
        if ftruncate(descriptor, 0) == 0 {
            _ = pid.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        }
        return descriptor
    }

    /// The PID written in the lock file open as `descriptor`, if it holds one.
    private static func lockHolder(_ descriptor: Int32) -> Int? {
        var bytes = [UInt8](repeating: 0, count: 32)
        let count = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return Int(String(decoding: bytes[0..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Opens the file at `url` for `access`, creating it (0600) when missing; refuses a symlink
    /// and anything but a private regular file (``SideFile/isPrivate(_:)``). Returns the
    /// descriptor and whether the file was created.
    static func openPrivate(_ url: URL, access: Int32, what: String) throws(CourierError) -> (Int32, created: Bool) {
        // Twice at most: a file created by another process between our two calls is opened.
        for _ in 0..<2 {
            if let (descriptor, status) = SideFile.openExisting(url, access: access) {
                guard SideFile.isPrivate(status) else {
                    Glibc.close(descriptor)
                    throw CourierError(
                        code: .fileSystem,
                        message: "the \(what) \(url.path) is not a regular file of this user with one link; Courier does not use it",
                        url: url)
                }
                return (descriptor, false)
            }
            switch errno {
            case ENOENT:
                let descriptor = Glibc.open(url.path, access | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
                if descriptor >= 0 { return (descriptor, true) }
                guard errno == EEXIST else { throw CourierError.fileSystem("cannot create \(url.path)", url: url, errno: errno) }
            case ELOOP:
                throw CourierError(
                    code: .fileSystem, message: "the \(what) \(url.path) is a symbolic link; Courier does not follow it", url: url)
            case let code:
                throw CourierError.fileSystem("cannot open the \(what) \(url.path)", url: url, errno: code)
            }
        }
        throw CourierError.fileSystem("cannot open the \(what) \(url.path)", url: url, errno: EEXIST)
    }

    /// `fsync(2)` on a directory, so the names created, renamed or removed in it survive a crash.
    static func syncDirectory(_ directory: URL) throws(CourierError) {
        let descriptor = Glibc.open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw CourierError.fileSystem("cannot sync \(directory.path)", url: directory, errno: errno) }
        defer { Glibc.close(descriptor) }
        while fsync(descriptor) != 0 {
            guard errno == EINTR else { throw CourierError.fileSystem("cannot sync \(directory.path)", url: directory, errno: errno) }
        }
    }

    /// The 16-byte file header of format ``formatVersion``.
    static var header: [UInt8] {
        magic + [UInt8(formatVersion >> 8), UInt8(formatVersion & 0xFF)] + [UInt8](repeating: 0, count: 10)
    }
}
