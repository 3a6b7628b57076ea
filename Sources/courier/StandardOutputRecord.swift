import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// How far a streaming `courier get -o -` has got on stdout, kept in the supervisor's private
/// staging directory (``GetCommand/stagingVariable``) so that a child killed by a trap can be
/// followed by one that continues exactly after the bytes already written — or by a clear
/// failure when that cannot be proven.
///
/// A pipe cannot be asked what it received, so the child says it before and after every write:
/// ``writing`` holds the size of a write under way, ``written`` what is certainly out. A child
/// that dies between the two leaves `writing > 0`: somewhere between `written` and
/// `written + writing` bytes reached stdout, and no restart can continue exactly.
struct StandardOutputRecord: Equatable, Sendable {
    /// Bytes certainly written to stdout.
    var written: Int64 = 0
    /// The size of the write under way, 0 between writes.
    var writing: Int64 = 0
    /// The response's strong validator (a strong `ETag`, else `Last-Modified`, of an unencoded
    /// body): what proves that a later response has the same bytes. `nil` when there was none.
    var validator: String?
    /// The body's announced length (`Content-Length` of an unencoded body), if any.
    var length: Int64?

    /// The record's place in a staging directory.
    static func file(in staging: URL) -> URL {
        staging.appendingPathComponent("stdout.record")
    }

    // MARK: - Format

    /// The first line has a fixed width, so each update is one `pwrite` over the same bytes:
    /// a child that dies leaves either the old line or the new one, never a mix of lengths.
    static func progressLine(written: Int64, writing: Int64) -> String {
        "written \(digits(written)) writing \(digits(writing))\n"
    }

    private static func digits(_ value: Int64) -> String {
        let text = String(max(value, 0))
        return String(repeating: "0", count: max(0, 19 - text.count)) + text
    }

    /// The whole record: the progress line, then the facts about the response, which do not
    /// change while the file lives (a restarted child checks that the new response matches them).
    var text: String {
        var text = Self.progressLine(written: written, writing: writing)
        text += "length " + (length.map(String.init) ?? "-") + "\n"
        if let validator { text += "validator " + validator + "\n" }
        return text
    }

    /// Parses ``text``; `nil` when it is not a record.
    init?(text: String) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard lines.count >= 2 else { return nil }
        let progress = lines[0].split(separator: " ")
        guard progress.count == 4, progress[0] == "written", progress[2] == "writing",
            let written = Int64(progress[1]), let writing = Int64(progress[3]), written >= 0, writing >= 0,
            lines[1].hasPrefix("length ")
        else { return nil }
        self.written = written
        self.writing = writing
        let length = lines[1].dropFirst("length ".count)
        if length != "-" {
            guard let value = Int64(length), value >= 0 else { return nil }
            self.length = value
        }
        if lines.count > 2, lines[2].hasPrefix("validator ") { validator = String(lines[2].dropFirst("validator ".count)) }
    }

    init(written: Int64 = 0, writing: Int64 = 0, validator: String?, length: Int64?) {
        self.written = written
        self.writing = writing
        self.validator = validator
        self.length = length
    }

    // MARK: - Reading

    /// The record in `staging`, if there is a readable one. Read as the library reads its side
    /// files: never through a link, never blocking on a FIFO, never a large file.
    static func read(in staging: URL) -> StandardOutputRecord? {
        let descriptor = open(file(in: staging).path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_size <= 64 * 1024,
            let data = try? handle.readToEnd(), let text = String(data: data, encoding: .utf8)
        else { return nil }
        return StandardOutputRecord(text: text)
    }

    /// What the stderr lines say about stdout after a failure: `; nothing was written to stdout`,
    /// or how much was and that it is incomplete.
    var incompleteSuffix: String {
        if writing > 0 {
            return "; the output is incomplete: between \(Self.amount(written)) and \(Self.amount(written + writing)) "
                + "were written to stdout"
        }
        return GetCommand.incompleteSuffix(written: written)
    }

    /// `97.7 KiB (100000 bytes)`: the exact count, for `tail -c` and friends, and the readable one.
    static func amount(_ bytes: Int64) -> String {
        bytes == 1 ? "1 byte" : bytes < 1024 ? "\(bytes) bytes" : "\(ProgressFormat.bytes(bytes)) (\(bytes) bytes)"
    }
}

/// Keeps a ``StandardOutputRecord`` up to date in the staging directory while the body is written.
/// Used by the one task that writes stdout, never concurrently.
final class StandardOutputRecorder {
    private let descriptor: Int32

    /// Creates the record for a response whose head just arrived (or takes over an earlier
    /// child's, continuing from it): written whole in a temporary file and renamed into place, so
    /// the supervisor never reads half of one.
    init(in staging: URL, _ record: StandardOutputRecord) throws(GetFailure) {
        let file = StandardOutputRecord.file(in: staging)
        let temporary = staging.appendingPathComponent("stdout.record.new")
        let data = Data(record.text.utf8)
        do {
            try data.write(to: temporary)
        } catch {
            throw GetFailure(ExitCode.fileSystem, "cannot write \(temporary.path): \(error.localizedDescription)")
        }
        guard rename(temporary.path, file.path) == 0 else {
            throw GetFailure(ExitCode.fileSystem, "cannot write \(file.path): \(String(cString: strerror(errno)))")
        }
        descriptor = open(file.path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw GetFailure(ExitCode.fileSystem, "cannot write \(file.path): \(String(cString: strerror(errno)))")
        }
    }

    deinit { close(descriptor) }

    /// Records the progress line. Failing to is fatal to the command: a record that lags behind
    /// stdout would make a restart write bytes twice.
    func update(written: Int64, writing: Int64) throws(GetFailure) {
        let line = Array(StandardOutputRecord.progressLine(written: written, writing: writing).utf8)
        let count = line.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        guard count == line.count else {
            let reason = count < 0 ? String(cString: strerror(errno)) : "a short write"
            throw GetFailure(ExitCode.fileSystem, "cannot keep the record of what was written to stdout (\(reason))")
        }
    }
}
