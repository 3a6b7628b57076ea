import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A list of downloads read from a descriptor (a pipe, a file, a terminal) as it comes, kept in a
/// private spool file so that it survives a crash: the input of `courier get -i`, which every
/// child of one command shares.
///
/// Why a file: a process that crashed (a FoundationNetworking trap, a `kill -9`) loses what it
/// had read from a pipe, and the process that replaces it must see every line the last one read.
/// So bytes go from the input into this file, and lines are read from the file (``Reader``): a new
/// process reads it from its start, then goes on with the input. It also lets a program list its
/// outputs in the input's order at the end without keeping the lines in memory.
///
/// How bytes move depends on what the input is:
/// - a pipe (`… | courier get -i -`): `splice(2)` moves them from the pipe into the file in one
///   system call, so a crash at any instant leaves each byte either still in the pipe or in the file;
/// - a regular file: read at (its offset when the command started + this file's length), which
///   never moves the input's own offset, so a crash loses nothing;
/// - anything else (a terminal, a socket, a device): read, then written here; a crash between the
///   two loses what that one read returned (on a terminal, the line just typed).
///
/// Bytes move only when the reader asks, one chunk at a time: a producer writing faster than the
/// downloads finish waits on a full pipe. That is how back-pressure reaches it.
///
/// Used by one thread. Failures are ``CourierError/Code-swift.struct/fileSystem`` errors naming
/// the input or the spool and the system's reason.
public final class InputSpool {
    /// What ``fill(waitingUpTo:)`` did.
    public enum Fill: Equatable, Sendable {
        /// Bytes were added to the file.
        case moved
        /// The input has nothing yet (a pipe whose writer is still there).
        case nothingYet
        /// The input has no more bytes.
        case ended
    }

    /// The most bytes moved by one ``fill(waitingUpTo:)``: a pipe's default capacity.
    public static let chunkBytes = 64 * 1024

    private enum Kind { case pipe, regular(base: Int64), other }

    /// The input's name in messages (`stdin` or its path).
    public let name: String
    /// The file's path.
    public let path: String
    private let source: Int32
    private let file: Int32
    private var kind: Kind
    /// The file's length: every byte moved so far, by this child or an earlier one.
    public private(set) var size: Int64
    /// The input had no more bytes.
    public private(set) var ended = false

    /// Opens (or creates, mode 0600) the file at `path` for the input on `source`.
    public init(source: Int32, name: String, path: String) throws(CourierError) {
        self.source = source
        self.name = name
        self.path = path
        var info = stat()
        guard fstat(source, &info) == 0 else { throw Self.readFailure(name) }
        switch info.st_mode & S_IFMT {
        case S_IFIFO: kind = .pipe
        case S_IFREG: kind = .regular(base: Int64(max(lseek(source, 0, SEEK_CUR), 0)))
        case S_IFDIR: throw CourierError(code: .fileSystem, message: "cannot read the input file \(name): it is a directory")
        default: kind = .other
        }
        file = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard file >= 0 else { throw Self.keepFailure(path) }
        var kept = stat()
        fstat(file, &kept)
        size = Int64(kept.st_size)
    }

    deinit {
        close(file)
    }

    /// Moves up to ``chunkBytes`` from the input to the end of the file, waiting up to
    /// `milliseconds` for the input to have some (a regular file never waits).
    public func fill(waitingUpTo milliseconds: Int32) throws(CourierError) -> Fill {
        guard !ended else { return .ended }
        let moved: Int
        switch kind {
        case .regular(let base):
            moved = try copy { buffer in pread(source, buffer.baseAddress, buffer.count, off_t(base + size)) }
        case .pipe, .other:
            var ready = pollfd(fd: source, events: Int16(POLLIN), revents: 0)
            let polled = poll(&ready, 1, milliseconds)
            if polled == 0 || (polled < 0 && errno == EINTR) { return .nothingYet }
            guard polled > 0 else { throw Self.readFailure(name) }
            if case .pipe = kind {
                guard let spliced = try splice() else {
                    kind = .other  // this file system takes no splice: read and write instead
                    return try fill(waitingUpTo: 0)
                }
                moved = spliced
            } else {
                moved = try copy { buffer in read(source, buffer.baseAddress, buffer.count) }
            }
        }
        guard moved >= 0 else { return .nothingYet }
        if moved == 0 {
            ended = true
            return .ended
        }
        return .moved
    }

    /// Up to `count` bytes of the file from `offset` (fewer at its end).
    public func bytes(at offset: Int64, count: Int) throws(CourierError) -> [UInt8] {
        let wanted = Int(max(min(Int64(count), size - offset), 0))
        var bytes = [UInt8](repeating: 0, count: wanted)
        var done = 0
        while done < wanted {
            let got = bytes.withUnsafeMutableBytes { pread(file, $0.baseAddress! + done, wanted - done, off_t(offset) + off_t(done)) }
            if got < 0, errno == EINTR { continue }
            guard got > 0 else { throw Self.keepFailure(path) }
            done += got
        }
        return bytes
    }

    /// `splice(2)` from the pipe to the file's end: the bytes moved, `-1` when the pipe had none
    /// after all, `nil` when the file system (or the C library) cannot splice.
    private func splice() throws(CourierError) -> Int? {
        var offset = Int64(size)
        while true {
            guard let call = Self.spliceCall else { return nil }
            let moved = call(source, nil, file, &offset, Self.chunkBytes, Self.spliceNonBlocking)
            if moved >= 0 {
                size = offset
                return moved
            }
            switch errno {
            case EINTR: continue
            case EAGAIN: return -1
            case EINVAL, ENOSYS: return nil
            case ENOSPC, EDQUOT, EFBIG, EIO: throw Self.keepFailure(path)
            default: throw Self.readFailure(name)
            }
        }
    }

    /// Reads with `read` into a chunk and writes what came to the file's end: the bytes moved,
    /// `-1` for none yet (a non-blocking input), `0` at the input's end.
    private func copy(_ read: (UnsafeMutableRawBufferPointer) -> Int) throws(CourierError) -> Int {
        var chunk = [UInt8](repeating: 0, count: Self.chunkBytes)
        var got: Int
        repeat { got = chunk.withUnsafeMutableBytes(read) } while got < 0 && errno == EINTR
        if got < 0 {
            if errno == EAGAIN { return -1 }
            throw Self.readFailure(name)
        }
        var written = 0
        while written < got {
            let wrote = chunk.withUnsafeBytes { pwrite(file, $0.baseAddress! + written, got - written, off_t(size) + off_t(written)) }
            if wrote < 0, errno == EINTR { continue }
            guard wrote > 0 else { throw Self.keepFailure(path) }
            written += wrote
        }
        size += Int64(got)
        return got
    }

    private static func readFailure(_ name: String) -> CourierError {
        CourierError(code: .fileSystem, message: "cannot read the input file \(name): \(String(cString: strerror(errno)))")
    }

    private static func keepFailure(_ path: String) -> CourierError {
        CourierError(code: .fileSystem, message: "cannot keep a copy of the input in \(path): \(String(cString: strerror(errno)))")
    }

    // MARK: - splice(2)

    /// Glibc's `splice` needs `_GNU_SOURCE`, which Swift's Glibc module is not built with, so it
    /// is called through its symbol.
    private typealias SpliceFunction =
        @convention(c) (
            Int32, UnsafeMutablePointer<Int64>?, Int32, UnsafeMutablePointer<Int64>?, Int, UInt32
        ) -> Int
    private static let spliceCall: SpliceFunction? = dlsym(nil, "splice").map { unsafeBitCast($0, to: SpliceFunction.self) }
    /// `SPLICE_F_NONBLOCK` (<fcntl.h>): never wait on the pipe; ``fill(waitingUpTo:)`` polls first.
    private static let spliceNonBlocking: UInt32 = 2
}
