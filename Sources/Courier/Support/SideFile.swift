import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// How Courier opens the files it keeps beside a transfer — partial files, resume records and
/// their temporaries, encoded multipart bodies — in directories that others may write to.
///
/// A name there may be a symlink or a hard link to someone else's file, planted or left over.
/// Writing through it would change that other file, and publishing it would hand that file to
/// the caller. So every open is `O_NOFOLLOW | O_CLOEXEC`; a new file is created
/// `O_CREAT | O_EXCL` with mode 0600 (``create(_:access:failure:)``); and an existing file is
/// trusted only when its open descriptor — not its path, which can change between a check and a
/// use — shows a file of Courier's own (``isPrivate(_:)``). Anything else is never written: its
/// name is unlinked, which removes only that link, and a new file is created
/// (``replace(_:access:failure:)``). Docs/ResumableDownloads.md ("Side files") has the whole list.
enum SideFile {
    /// An open descriptor on a side file, closed when the handle is released. While it is open,
    /// the `flock(2)` lock taken on it (``lock(_:)``) tells a sweep that the file is in use.
    final class Handle: Sendable {
        let url: URL
        let descriptor: Int32

        init(url: URL, descriptor: Int32) {
            self.url = url
            self.descriptor = descriptor
        }

        /// Opens an existing side file to read it, without following a symlink or blocking on a FIFO.
        static func opening(_ url: URL) -> Handle? {
            let descriptor = open(url.path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
            return descriptor >= 0 ? Handle(url: url, descriptor: descriptor) : nil
        }

        deinit {
            close(descriptor)
        }
    }

    /// Creates `url`, which must not exist, not even as a dangling symlink (`O_EXCL` fails on any
    /// name, and with `O_NOFOLLOW` never creates through a link): mode 0600.
    static func create(
        _ url: URL, access: Int32 = O_WRONLY, failure: @autoclosure () -> String
    ) throws(CourierError)
        -> Int32
    {
        let descriptor = open(url.path, access | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw CourierError.fileSystem(failure(), url: url, errno: errno) }
        return descriptor
    }

    /// A new file at `url`, whatever held the name: the name is unlinked first — that removes only
    /// the link, never the file a hard link or symlink leads to — then created as
    /// ``create(_:access:failure:)``. If a name reappears in between, it is removed and the file
    /// created once more.
    static func replace(
        _ url: URL, access: Int32 = O_WRONLY, failure: @autoclosure () -> String
    ) throws(CourierError)
        -> Int32
    {
        var attempt = 0
        while true {
            attempt += 1
            unlink(url.path)
            let descriptor = open(url.path, access | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if descriptor >= 0 { return descriptor }
            let code = errno
            guard code == EEXIST, attempt < 2 else { throw CourierError.fileSystem(failure(), url: url, errno: code) }
        }
    }

    /// Opens the existing file at `url` for `access` and returns its descriptor with its status
    /// (from `fstat`, so it describes the file opened), or `nil` with `errno` set. A symlink is
    /// not followed (`ELOOP`); `O_NONBLOCK` keeps a FIFO planted at the name from blocking the
    /// open (it has no effect on a regular file's reads and writes).
    static func openExisting(_ url: URL, access: Int32) -> (descriptor: Int32, status: stat)? {
        let descriptor = open(url.path, access | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let code = errno
            close(descriptor)
            errno = code
            return nil
        }
        return (descriptor, status)
    }

    /// Whether `status` (of an open descriptor) is a file Courier may take as its own: a regular
    /// file with exactly one link, owned by the effective user. A second link means the bytes are
    /// also reachable under a name Courier did not create, so writing them would change that
    /// file; another owner means someone else put it there.
    static func isPrivate(_ status: stat) -> Bool {
        (status.st_mode & S_IFMT) == S_IFREG && status.st_nlink == 1 && status.st_uid == geteuid()
    }

    /// The status of the file at `url` when it is private (``isPrivate(_:)``), checked on an open
    /// descriptor; `nil` when it is missing, a symlink, or not private.
    static func privateStatus(of url: URL) -> stat? {
        guard let (descriptor, status) = openExisting(url, access: O_RDONLY) else { return nil }
        close(descriptor)
        return isPrivate(status) ? status : nil
    }

    /// The contents of the small private file at `url` (a resume record), or `nil` when it is not
    /// private or is longer than `limit`.
    static func contents(of url: URL, limit: Int) -> Data? {
        guard let (descriptor, status) = openExisting(url, access: O_RDONLY) else { return nil }
        defer { close(descriptor) }
        guard isPrivate(status), status.st_size <= limit else { return nil }
        var bytes = [UInt8](repeating: 0, count: limit + 1)
        var count = 0
        while count < bytes.count {
            let read = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress! + count, $0.count - count) }
            if read < 0, errno == EINTR { continue }
            guard read >= 0 else { return nil }
            if read == 0 { break }
            count += read
        }
        return count <= limit ? Data(bytes[0..<count]) : nil
    }

    /// Takes the exclusive `flock(2)` lock that tells a sweep the file is in use, without waiting.
    /// The lock belongs to the open file description: it lasts until the last descriptor of it
    /// is closed, and a second `open` of the same file, even in this process, cannot take it.
    static func lock(_ descriptor: Int32) -> Bool {
        flock(descriptor, LOCK_EX | LOCK_NB) == 0
    }

    /// Whether the name `url` still refers to the file open as `descriptor` (neither removed nor
    /// replaced since it was opened).
    static func names(_ url: URL, _ descriptor: Int32) -> Bool {
        var opened = stat()
        var named = stat()
        guard fstat(descriptor, &opened) == 0, lstat(url.path, &named) == 0 else { return false }
        return opened.st_dev == named.st_dev && opened.st_ino == named.st_ino
    }

    /// Writes every byte to `descriptor`; `0`, or the `errno` of the write that failed.
    static func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32) -> Int32 {
        writeAll(bytes, to: descriptor, at: nil)
    }

    /// Writes every byte at `offset` (`pwrite`, which leaves the descriptor's position alone), or
    /// at the descriptor's position when `offset` is `nil`; returns 0 or the `errno` that stopped it.
    static func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32, at offset: Int64?) -> Int32 {
        guard var base = bytes.baseAddress else { return 0 }
        var remaining = bytes.count
        var position = offset
        while remaining > 0 {
            let written = position.map { pwrite(descriptor, base, remaining, off_t($0)) } ?? write(descriptor, base, remaining)
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            remaining -= written
            base += written
            position = position.map { $0 + Int64(written) }
        }
        return 0
    }

    /// Copies the whole file open as `source` into a new private file at `url`, created and locked
    /// like a staging file (publishing across file systems); the copy is removed if anything fails.
    static func copy(_ source: Int32, to url: URL) throws(CourierError) -> Handle {
        let handle = Handle(url: url, descriptor: try create(url, failure: "cannot create \(url.path)"))
        _ = lock(handle.descriptor)
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var offset: off_t = 0
        while true {
            let read = buffer.withUnsafeMutableBytes { pread(source, $0.baseAddress, $0.count, offset) }
            if read < 0, errno == EINTR { continue }
            var code = read < 0 ? errno : 0
            if read > 0 {
                code = buffer.withUnsafeBytes { writeAll(UnsafeRawBufferPointer(rebasing: $0[0..<read]), to: handle.descriptor) }
            }
            guard code == 0 else {
                unlink(url.path)
                throw CourierError.fileSystem("cannot copy into \(url.path)", url: url, errno: code)
            }
            if read == 0 { return handle }
            offset += off_t(read)
        }
    }
}
