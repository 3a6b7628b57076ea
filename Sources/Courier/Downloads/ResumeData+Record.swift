import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension ResumeData {
    /// The largest resume record read: a record is a few hundred bytes, so anything larger was
    /// not written by Courier.
    static let maximumRecordSize = 1 << 20

    /// Reads the resume record Courier keeps beside `partialFile` (at
    /// ``DownloadPolicy/recordFile(for:)``): the one way to read it, used by ``SessionManager``
    /// before continuing a download, by ``DownloadQueue`` when an item's URL changed, and by the
    /// `courier` command line to say how much a stopped download kept.
    ///
    /// The record is read as Courier reads every side file: never through a symlink, never
    /// blocking on a FIFO planted at the name, and only from a private regular file (one link,
    /// owned by this user). Reading changes nothing on disk; whether the record can be continued
    /// with a given request (the partial file still holds the bytes, the URL matches) is decided
    /// when a download resumes from it.
    ///
    /// - Parameter partialFile: The partial file, as ``DownloadPolicy/partialFile`` or
    ///   ``DownloadPolicy/defaultPartialFile(for:)`` names it.
    /// - Returns: The record, or `nil` when there is none.
    /// - Throws: ``CourierError/Code-swift.struct/invalidResumeData`` when something is at the
    ///   record's name but cannot be used: a symlink, a FIFO or another user's file, a file over
    ///   1 MiB, a damaged or altered record, or a record of another partial file;
    ///   ``CourierError/Code-swift.struct/fileSystem`` when the directory cannot be searched.
    public static func record(beside partialFile: URL) throws(CourierError) -> ResumeData? {
        let recordFile = DownloadPolicy.recordFile(for: partialFile)
        func unusable(_ why: String) -> CourierError {
            CourierError(code: .invalidResumeData, message: "the resume record \(recordFile.path) is unusable: \(why)", url: recordFile)
        }
        var info = stat()
        guard lstat(recordFile.path, &info) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw CourierError.fileSystem("cannot read the resume record \(recordFile.path)", url: recordFile, errno: errno)
        }
        guard let bytes = SideFile.contents(of: recordFile, limit: maximumRecordSize) else {
            throw unusable("not a private regular file of at most 1 MiB (a link, a FIFO, another user's file, or too large)")
        }
        let record: ResumeData
        do {
            record = try ResumeData(data: bytes)
        } catch {
            throw CourierError(code: .invalidResumeData, message: "\(recordFile.path): \(error.message)", url: recordFile)
        }
        guard record.partialFile.standardizedFileURL.path == partialFile.standardizedFileURL.path else {
            throw unusable("it describes another partial file, \(record.partialFile.path)")
        }
        return record
    }
}
