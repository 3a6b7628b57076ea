import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension MultipartFormData {
    /// Opens the file of a file part for reading and returns its descriptor and size; the caller
    /// closes it. Fails with `.uploadSourceFailed` naming the path when the file is missing,
    /// unreadable, a directory or anything else that is not a regular file.
    static func openFilePart(_ url: URL) throws(CourierError) -> (descriptor: Int32, size: Int64) {
        guard url.isFileURL else { throw fileFailure(url, "is not a file URL") }
        // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever. It
        // is rejected just below, and reads of a regular file ignore the flag.
        let descriptor = open(url.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            switch code {
            case ENOENT, ENOTDIR: throw fileFailure(url, "does not exist", errno: code)
            case EACCES, EPERM: throw fileFailure(url, "is not readable", errno: code)
            default: throw fileFailure(url, "cannot be opened", errno: code)
            }
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let code = errno
            close(descriptor)
            throw fileFailure(url, "cannot be examined", errno: code)
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            close(descriptor)
            throw fileFailure(url, (info.st_mode & S_IFMT) == S_IFDIR ? "is a directory" : "is not a regular file")
        }
        return (descriptor, Int64(info.st_size))
    }

    /// Copies the file at `url` into `output` in chunks, watching for the delimiter. Exactly the
    /// size seen when opening is copied: a file that shrinks meanwhile is an error, bytes added
    /// meanwhile are left out.
    static func copyFile(at url: URL, into output: Output, delimiter: [UInt8]) throws(CourierError) {
        let (descriptor, size) = try openFilePart(url)
        defer { close(descriptor) }
        var scanner = BoundaryScanner(delimiter: delimiter)
        var remaining = size
        while remaining > 0 {
            let chunk = try output.fill(upTo: Int(clamping: remaining)) { space throws(CourierError) in
                while true {
                    let count = read(descriptor, space.baseAddress, space.count)
                    if count >= 0 { return count }
                    if errno != EINTR { throw fileFailure(url, "could not be read", errno: errno) }
                }
            }
            guard !chunk.isEmpty else {
                throw fileFailure(url, "ended after \(size - remaining) of \(size) bytes (it shrank while being encoded)")
            }
            if scanner.scan(chunk) { throw boundaryFound(inPartFrom: url.path) }
            remaining -= Int64(chunk.count)
        }
    }

    /// Copies a stream part into `output` in chunks, watching for the delimiter; the stream must
    /// yield exactly `length` bytes. The stream is closed on every path.
    static func copyStream(
        _ makeStream: @Sendable () throws -> InputStream, length: Int64, name: String, into output: Output,
        delimiter: [UInt8]
    ) throws(CourierError) {
        let stream: InputStream
        do {
            stream = try makeStream()
        } catch {
            throw CourierError(
                code: .uploadSourceFailed, message: "the stream of part \"\(name)\" could not be created: \(error)",
                underlyingError: error)
        }
        stream.open()
        defer { stream.close() }
        if stream.streamStatus == .error { throw streamFailure(stream, name: name, "could not be opened") }

        var scanner = BoundaryScanner(delimiter: delimiter)
        var copied: Int64 = 0
        while copied < length {
            let chunk = try output.fill(upTo: Int(clamping: length - copied)) { space throws(CourierError) in
                let count = stream.read(space.baseAddress!.assumingMemoryBound(to: UInt8.self), maxLength: space.count)
                if count < 0 || count > space.count || stream.streamStatus == .error {
                    throw streamFailure(stream, name: name, "could not be read")
                }
                return count
            }
            guard !chunk.isEmpty else {
                throw CourierError(
                    code: .uploadSourceFailed,
                    message: "the stream of part \"\(name)\" ended after \(copied) of its declared \(length) bytes")
            }
            if scanner.scan(chunk) { throw boundaryFound(inPartFrom: "the stream of part \"\(name)\"") }
            copied += Int64(chunk.count)
        }
        // One more read tells a stream that ends here from one that has more to give.
        var extra: UInt8 = 0
        let count = stream.read(&extra, maxLength: 1)
        if count < 0 || stream.streamStatus == .error { throw streamFailure(stream, name: name, "could not be read") }
        if count > 0 {
            throw CourierError(
                code: .uploadSourceFailed,
                message: "the stream of part \"\(name)\" yields more than its declared \(length) bytes")
        }
    }

    private static func fileFailure(_ url: URL, _ problem: String, errno code: Int32? = nil) -> CourierError {
        // The file-system factory words the errno; the code says whose fault it is.
        let described = CourierError.fileSystem("the multipart file part \(url.path) \(problem)", url: url, errno: code)
        return CourierError(
            code: .uploadSourceFailed, message: described.message, url: url, underlyingError: described.underlyingError)
    }

    private static func streamFailure(_ stream: InputStream, name: String, _ problem: String) -> CourierError {
        // Only ask for `streamError` when the status says there is one: on Linux the getter traps
        // when there is none (Docs/Platform.md §6), and a `read` of -1 does not guarantee one.
        let underlying = stream.streamStatus == .error ? stream.streamError : nil
        let detail = underlying.map { ": \($0.localizedDescription)" } ?? ""
        return CourierError(
            code: .uploadSourceFailed, message: "the stream of part \"\(name)\" \(problem)\(detail)",
            underlyingError: underlying)
    }

    static func boundaryFound(inPartFrom source: String) -> CourierError {
        CourierError(
            code: .invalidRequest,
            message: "\(source) contains the multipart boundary; build the body again with another boundary")
    }
}
