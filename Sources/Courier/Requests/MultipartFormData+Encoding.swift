import Foundation
#if canImport(Glibc)
import Glibc
#endif
internal import CourierSupport

extension MultipartFormData {
    /// The size of the one buffer ``write(to:)`` encodes through.
    static let fileBufferSize = 1 << 20
    private static let crlf = Data("\r\n".utf8)

    /// The exact encoded length, or a typed error if a file part is missing/unreadable/a directory.
    ///
    /// Checks everything encoding checks before reading contents (the boundary, every part's
    /// headers, data parts against the boundary), so it fails with the same errors. File parts
    /// are opened to learn their size and closed again; stream factories are not called.
    public func contentLength() throws(CourierError) -> Int64 {
        let plan = try makePlan()
        var length = Int64(plan.closing.count)
        for (part, head) in zip(parts, plan.heads) {
            length += Int64(head.count + Self.crlf.count)
            switch part.content {
            case .data(let data):
                length += Int64(data.count)
            case .file(let url):
                let (descriptor, size) = try Self.openFilePart(url)
                close(descriptor)
                length += size
            case .stream(let streamLength, _):
                length += streamLength
            }
        }
        return length
    }

    /// The whole body in memory (for small bodies).
    ///
    /// Fails with ``CourierError/Code-swift.struct/uploadSourceFailed`` when a file or stream part
    /// cannot be read (or a stream's length is wrong), and with
    /// ``CourierError/Code-swift.struct/invalidRequest`` for an invalid boundary or header, or a
    /// boundary that occurs in a part.
    public func encoded() throws(CourierError) -> Data {
        let plan = try makePlan()
        var body = Data()
        let output = Output(capacity: 64 * 1024) { bytes in
            if let base = bytes.baseAddress { body.append(base.assumingMemoryBound(to: UInt8.self), count: bytes.count) }
        }
        try encode(plan, into: output)
        return body
    }

    /// Streams the body into a new private file at `url` (created O_EXCL|O_NOFOLLOW, mode 0600)
    /// with bounded memory (a fixed buffer, e.g. 1 MiB), never loading a part whole; removes the
    /// partial file if anything fails.
    ///
    /// Memory use is one 1 MiB buffer whatever the size of the parts. An existing file or symlink
    /// at `url` is never replaced or followed: that fails with
    /// ``CourierError/Code-swift.struct/fileSystem``, as does any failure to write. Reading parts
    /// fails as ``encoded()`` does, and then no file is left at `url`.
    public func write(to url: URL) throws(CourierError) {
        let descriptor = try writeNewFile(at: url, locked: false)
        guard close(descriptor) == 0 else {
            // Some file systems (NFS) report write errors only here.
            let code = errno
            unlink(url.path)
            throw CourierError.fileSystem("cannot write the multipart body file \(url.path)", url: url, errno: code)
        }
    }

    /// ``write(to:)`` for an upload's own temporary body: the file stays locked (`flock`) for as
    /// long as the returned handle lives, so that the sweep of abandoned side files
    /// (``SideFile/Sweeper``), in this process or another, leaves it alone while the upload runs.
    func writeLocked(to url: URL) throws(CourierError) -> SideFile.Handle {
        let descriptor = try writeNewFile(at: url, locked: true)
        // The lock belongs to the open file description, which the duplicate keeps open; closing
        // the original still reports a late write error (NFS flushes on every close).
        let holder = dup(descriptor)
        guard holder >= 0, close(descriptor) == 0 else {
            let code = errno
            if holder >= 0 { close(holder) } else { close(descriptor) }
            unlink(url.path)
            throw CourierError.fileSystem("cannot write the multipart body file \(url.path)", url: url, errno: code)
        }
        return SideFile.Handle(url: url, descriptor: holder)
    }

    /// Creates `url` (``SideFile/create(_:access:failure:)``: never through a link, mode 0600),
    /// optionally locks it, and encodes the body into it; returns the open descriptor.
    private func writeNewFile(at url: URL, locked: Bool) throws(CourierError) -> Int32 {
        // Everything checkable is checked before the file exists, so that most mistakes leave
        // nothing to clean up.
        let plan = try makePlan()
        let descriptor = try SideFile.create(url, failure: "cannot create the multipart body file \(url.path)")
        do throws(CourierError) {
            // Only a sweep could hold the lock of a file this new, and it then removes the name.
            guard !locked || (SideFile.lock(descriptor) && SideFile.names(url, descriptor)) else {
                throw CourierError.fileSystem("the multipart body file \(url.path) was removed while it was created", url: url)
            }
            let output = Output(capacity: Self.fileBufferSize) { bytes throws(CourierError) in
                let code = SideFile.writeAll(bytes, to: descriptor)
                guard code == 0 else {
                    throw CourierError.fileSystem("cannot write the multipart body file \(url.path)", url: url, errno: code)
                }
            }
            try encode(plan, into: output)
        } catch {
            close(descriptor)
            unlink(url.path)
            throw error
        }
        return descriptor
    }

    // MARK: - Encoding

    /// What encoding needs besides the parts' contents, made after checking everything that can
    /// be checked without reading files and streams.
    struct Plan {
        /// `--` and the boundary: what must not occur in any part.
        let delimiter: [UInt8]
        /// Each part's delimiter line and header fields, up to and including the blank line.
        let heads: [Data]
        /// The closing delimiter line.
        let closing: Data
    }

    func makePlan() throws(CourierError) -> Plan {
        guard Self.isValidBoundary(boundary) else {
            throw CourierError(
                code: .invalidRequest,
                message: "the multipart boundary \"\(boundary)\" is not 1 to 70 characters from RFC 2046's set")
        }
        let delimiter = Self.delimiter(for: boundary)
        let delimiterLine = Data(delimiter) + Self.crlf
        var heads: [Data] = []
        heads.reserveCapacity(parts.count)
        for part in parts {
            let fields = try part.headerFields()
            if BoundaryScanner.occurs(delimiter, in: fields) {
                throw Self.boundaryFound(inPartFrom: "the headers of part \"\(part.name)\"")
            }
            switch part.content {
            case .data(let data) where BoundaryScanner.occurs(delimiter, in: data):
                throw Self.boundaryFound(inPartFrom: "part \"\(part.name)\"")
            case .stream(let length, _) where length < 0:
                throw CourierError(
                    code: .invalidRequest, message: "the stream of part \"\(part.name)\" has a negative length (\(length))")
            default:
                break
            }
            heads.append(delimiterLine + fields)
        }
        return Plan(delimiter: delimiter, heads: heads, closing: Data(delimiter) + Data("--\r\n".utf8))
    }

    private func encode(_ plan: Plan, into output: Output) throws(CourierError) {
        for (part, head) in zip(parts, plan.heads) {
            try output.append(head)
            switch part.content {
            case .data(let data):
                try output.append(data)
            case .file(let url):
                try Self.copyFile(at: url, into: output, delimiter: plan.delimiter)
            case .stream(let length, let makeStream):
                try Self.copyStream(makeStream, length: length, name: part.name, into: output, delimiter: plan.delimiter)
            }
            try output.append(Self.crlf)
        }
        try output.append(plan.closing)
        try output.flush()
    }

    /// RFC 2046 §5.1.1: 1 to 70 `bchars`, the last one not a space.
    private static func isValidBoundary(_ boundary: String) -> Bool {
        let scalars = boundary.unicodeScalars
        guard (1...70).contains(scalars.count), scalars.last != " " else { return false }
        return scalars.allSatisfy { scalar in
            switch scalar {
            case "a"..."z", "A"..."Z", "0"..."9": return true
            default: return "'()+_,-./:=? ".unicodeScalars.contains(scalar)
            }
        }
    }
}

extension MultipartFormData.Part {
    /// The part's header fields and the blank line that ends them.
    func headerFields() throws(CourierError) -> Data {
        var head = Array("Content-Disposition: form-data; name=\"".utf8) + Self.escaped(name) + [UInt8(ascii: "\"")]
        if let fileName {
            head += Array("; filename=\"".utf8) + Self.escaped(fileName) + [UInt8(ascii: "\"")]
        }
        head += Array("\r\n".utf8)
        if let mimeType {
            try check(value: mimeType, of: "Content-Type")
            head += Array("Content-Type: \(mimeType)\r\n".utf8)
        }
        // Sorted, so that the same form always encodes to the same bytes.
        for (field, value) in headers.sorted(by: { ($0.key.lowercased(), $0.key) < ($1.key.lowercased(), $1.key) }) {
            try check(field: field)
            try check(value: value, of: field)
            head += Array("\(field): \(value)\r\n".utf8)
        }
        head += Array("\r\n".utf8)
        return Data(head)
    }

    /// The HTML form-submission rule that RFC 7578 §4.2 points to: `"`, CR and LF become `%22`,
    /// `%0D` and `%0A`; everything else, non-ASCII included, stays raw UTF-8 (RFC 7578 §4.2
    /// rules out `filename*`).
    static func escaped(_ value: String) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(value.utf8.count)
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes += Array("%22".utf8)
            case UInt8(ascii: "\r"): bytes += Array("%0D".utf8)
            case UInt8(ascii: "\n"): bytes += Array("%0A".utf8)
            default: bytes.append(byte)
            }
        }
        return bytes
    }

    private func check(field: String) throws(CourierError) {
        guard !field.isEmpty, field.unicodeScalars.allSatisfy(HTTPToken.isCharacter) else {
            throw CourierError(code: .invalidRequest, message: "part \"\(name)\" has an invalid header name \"\(field)\"")
        }
        // The encoder writes these two itself; a second copy would leave servers guessing.
        let lowercased = field.lowercased()
        guard lowercased != "content-disposition", lowercased != "content-type" else {
            throw CourierError(
                code: .invalidRequest,
                message: "part \"\(name)\" sets \(field) as a custom header; use the name, fileName and mimeType parameters")
        }
    }

    private func check(value: String, of field: String) throws(CourierError) {
        // CR or LF would end the header early and let the value inject headers or content.
        guard !value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) else {
            throw CourierError(
                code: .invalidRequest, message: "the \(field) header of part \"\(name)\" contains CR, LF or NUL")
        }
    }
}
