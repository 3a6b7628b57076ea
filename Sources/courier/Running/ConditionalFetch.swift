import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier
import CourierSupport

/// curl's `-z`, `--etag-compare`, `--etag-save` (Docs/CommandLine.md, "Conditional downloads"): the
/// rules are the library's `ConditionalRequest`; this reads the files once and writes `--etag-save`.
struct ConditionalFetch: Equatable {
    /// The conditions the request carries (the library's rules: headers, the check at the head,
    /// what counts as "not modified").
    var request = ConditionalRequest()
    /// `--etag-save`: where the response's ETag goes once the file is saved.
    var etagSaveFile: String?

    // MARK: - Reading the options (the only file access before the request)

    /// The conditions `options` ask for, and the warnings to print (curl's: an unreadable date
    /// that names no file drops the time condition; a missing `--etag-compare` file is an empty
    /// ETag). Creates the `--etag-save` file, empty, when it does not exist, as curl does; a file
    /// that cannot be created is an error (exit 6) rather than curl's skipped transfer.
    static func resolve(_ options: GetCommand.Options) throws(GetFailure) -> (ConditionalFetch, warnings: [String]) {
        var fetch = ConditionalFetch()
        var warnings: [String] = []
        if let text = options.timeCondition {
            let (condition, warning) = timeCondition(text, fileTime: modificationTime(of:))
            fetch.request.time = condition
            if let warning { warnings.append(warning) }
        }
        if let path = options.etagCompare {
            let contents: String?
            if let data = FileManager.default.contents(atPath: path) {
                contents = String(decoding: data, as: UTF8.self)
            } else {
                contents = nil
                warnings.append("cannot read the --etag-compare file \(path); sending an empty ETag (If-None-Match: \"\")")
            }
            fetch.request.ifNoneMatch = ConditionalRequest.entityTag(fromFile: contents)
        }
        if let path = options.etagSave {
            // Opened for appending, as curl does: an existing file keeps its ETag until a new one comes.
            let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else {
                throw GetFailure(
                    ExitCode.fileSystem,
                    "cannot create the --etag-save file \(path): \(String(cString: strerror(errno))); nothing was downloaded")
            }
            close(descriptor)
            fetch.etagSaveFile = path
        }
        return (fetch, warnings)
    }

    /// A file's modification time, or `nil` when it cannot be read.
    static func modificationTime(of path: String) -> Date? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Date(timeIntervalSince1970: Double(info.st_mtim.tv_sec))
    }

    /// `-z`'s argument read curl's way: a leading `-` asks for `If-Unmodified-Since` (a leading
    /// `+` is the default, `If-Modified-Since`); the rest is a date, else a file whose
    /// modification time is taken. Neither: no condition, and a warning.
    static func timeCondition(
        _ text: String, fileTime: (String) -> Date?
    ) -> (ConditionalRequest.TimeCondition?, warning: String?) {
        var rest = Substring(text)
        var unmodified = false
        if rest.first == "-" {
            unmodified = true
            rest = rest.dropFirst()
        } else if rest.first == "+" {
            rest = rest.dropFirst()
        }
        guard let date = ConditionalRequest.date(String(rest)) ?? fileTime(String(rest)) else {
            return (nil, "-z '\(text)' is neither a date nor an existing file; downloading without a time condition")
        }
        return (unmodified ? .unmodifiedSince(date) : .modifiedSince(date), nil)
    }

    /// Writes the ETag of `response` into the `--etag-save` file (replacing what it held), if
    /// there is one to write. Called only once the body is saved, or for a 304: an ETag saved for
    /// a body that never arrived would make the next `--etag-compare` skip it for good.
    func saveETag(from response: HTTPURLResponse?) throws(GetFailure) {
        guard let path = etagSaveFile, let line = ConditionalRequest.entityTagLine(from: response) else { return }
        do {
            try Data(line.utf8).write(to: URL(fileURLWithPath: path))
        } catch {
            throw GetFailure(ExitCode.fileSystem, "cannot write the --etag-save file \(path): \(error.localizedDescription)")
        }
    }
}
