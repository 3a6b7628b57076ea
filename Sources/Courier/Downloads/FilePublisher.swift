import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Publishes a complete staging file at its destination in one step, so the destination never
/// holds a partial file: `rename(2)` when replacing is allowed, `link(2)` (which fails rather than
/// overwrite) when it is not. Across file systems the file is first copied next to the
/// destination, then published the same way.
enum FilePublisher {
    /// Publishes `staged`; `handle`, when given, is the writer's descriptor on it (see the body).
    static func publish(
        _ staged: URL, to destination: URL, options: DownloadDestination.Options, requestURL: URL?,
        handle: SideFile.Handle? = nil
    ) throws(CourierError) {
        func failure(_ message: String, _ code: Int32? = nil) -> CourierError {
            let detail = code.map { ": " + String(cString: strerror($0)) } ?? ""
            return CourierError(
                code: .destinationFailed, message: message + detail, url: requestURL,
                underlyingError: code.map { POSIXError(POSIXErrorCode(rawValue: $0) ?? .EIO) })
        }
        let directory = destination.deletingLastPathComponent()
        var isDirectory: ObjCBool = false
        if !FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory) {
            guard options.contains(.createIntermediateDirectories) else {
                throw failure("the destination directory \(directory.path) does not exist (pass .createIntermediateDirectories)")
            }
            do {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            } catch {
                throw failure("cannot create the destination directory \(directory.path)")
            }
        } else if !isDirectory.boolValue {
            throw failure("\(directory.path) is not a directory")
        }
        var info = stat()
        if lstat(destination.path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
            throw failure("the destination \(destination.path) is a directory")
        }

        // Through the writer's own descriptor, never the path: the name must still be the file
        // written (not a link put there since), and its mode is changed on that file only.
        if let handle, !SideFile.names(staged, handle.descriptor) {
            throw failure("the staged file \(staged.path) was replaced before it could be published")
        }
        let opened = handle ?? SideFile.Handle.opening(staged)
        // The staging file is 0600 so a partial download is never readable by others; the
        // published file gets what a newly created file gets (0666 minus the umask).
        let mode = 0o666 & ~processUmask()
        if let opened { fchmod(opened.descriptor, mode) }
        var source = staged
        var copied: SideFile.Handle?
        defer { if let copied { unlink(copied.url.path) } }
        for attempt in 0..<2 {
            let result =
                options.contains(.removePreviousFile)
                ? rename(source.path, destination.path) : link(source.path, destination.path)
            if result == 0 {
                if !options.contains(.removePreviousFile) { unlink(source.path) }
                if source != staged { unlink(staged.path); copied = nil }
                return
            }
            let code = errno
            switch code {
            case EEXIST:
                throw failure("a file already exists at \(destination.path) (pass .removePreviousFile to replace it)")
            case EXDEV where attempt == 0:
                // Another file system: copy next to the destination (a new private file, named and
                // locked like a staging file: a copy cut short by a crash is swept like one), then publish it.
                guard let opened else { throw failure("cannot read the download to copy it into \(directory.path)") }
                let sibling = StagingFile.randomURL(in: directory)
                do {
                    let copy = try SideFile.copy(opened.descriptor, to: sibling)
                    fchmod(copy.descriptor, mode)
                    copied = copy
                } catch {
                    throw failure("cannot copy the download into \(directory.path)")
                }
                source = sibling
            default:
                throw failure("cannot move the download to \(destination.path)", code)
            }
        }
        throw failure("cannot move the download to \(destination.path)")
    }

    /// Why publishing at `destination` would fail for a file already there, found before the body
    /// is fetched: nothing downloaded is ever thrown away for want of a name.
    static func existingFileProblem(
        at destination: URL, options: DownloadDestination.Options, requestURL: URL?
    ) -> CourierError? {
        var info = stat()
        guard lstat(destination.path, &info) == 0 else { return nil }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            return CourierError(
                code: .destinationFailed, message: "the destination \(destination.path) is a directory", url: requestURL)
        }
        guard !options.contains(.removePreviousFile) else { return nil }
        return CourierError(
            code: .destinationFailed,
            message: "a file already exists at \(destination.path) (pass .removePreviousFile to replace it)", url: requestURL)
    }

    /// The process's umask, read without changing it (`umask(2)` can only be read by setting it,
    /// which would race with other threads creating files).
    static func processUmask() -> mode_t {
        if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Umask:") }),
            let mask = mode_t(line.dropFirst(6).trimmingCharacters(in: .whitespaces), radix: 8)
        {
            return mask
        }
        return 0o022
    }

    /// The first bytes of a staged file, to attach to an error as the error page's body.
    static func prefix(of file: URL, limit: Int = 64 * 1024) -> Data? {
        guard let handle = try? FileHandle(forReadingFrom: file) else { return nil }
        defer { try? handle.close() }
        return try? handle.read(upToCount: limit)
    }
}
