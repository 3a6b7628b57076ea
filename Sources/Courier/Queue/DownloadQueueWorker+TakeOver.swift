import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An item taken over from another worker continues from that worker's bytes when this worker
/// can read them (shared storage), and from zero otherwise (Docs/DownloadQueue.md, "Where the
/// bytes live"). The previous holder's partial file is never written nor continued in place: it
/// may still be written by its holder if that one was only paused. Its recorded prefix is
/// copied into this worker's own partial file, with a record naming the copy, and the download
/// continues from there with `If-Range` as any resumed download does (ResumableDownloads.md).
extension DownloadQueueWorker {
    /// Where a lease's download starts from.
    enum PartialStart: Equatable {
        /// This worker's own partial file and its record (an item it held before).
        case own
        /// A copy of the first `bytesOnDisk` bytes of the record's partial file (another worker's).
        case copy(ResumeData)
        /// Nothing to continue: from zero.
        case zero
    }

    /// Decides where a lease starts, pure: `own` is the record beside this worker's partial file
    /// (`ownPartial`), `recorded` the lease's resume record, and `readableSize` the size of a file
    /// this worker can read at a path (`nil` when it cannot: another machine's disk).
    ///
    /// The longer of the two continues: this worker's own bytes, or a readable copy of the
    /// recorded ones. A split record (segments) is never copied: its bytes are not one prefix, so
    /// a split item taken over from another worker starts from zero (its own record continues).
    static func partialStart(
        own: ResumeData?, recorded: ResumeData?, ownPartial: URL, readableSize: (URL) -> Int64?
    ) -> PartialStart {
        let fallback: PartialStart = own == nil ? .zero : .own
        guard let recorded, recorded.bytesOnDisk > 0, recorded.segments == nil,
            recorded.partialFile.standardizedFileURL.path != ownPartial.standardizedFileURL.path
        else { return fallback }
        if let own, own.bytesOnDisk >= recorded.bytesOnDisk { return .own }
        guard let size = readableSize(recorded.partialFile), size >= recorded.bytesOnDisk else { return fallback }
        return .copy(recorded)
    }

    /// Prepares the lease's partial file as ``partialStart(own:recorded:ownPartial:readableSize:)``
    /// decides; returns the bytes a copy adopted (0 when nothing was copied). A copy that fails
    /// leaves nothing behind, and the download starts from its own record or from zero.
    func adoptRecordedPartial(of lease: DownloadQueue.Lease) -> Int64 {
        let ownPartial = partialFile(for: lease.item.id)
        let recorded = lease.resumeRecord.flatMap { try? ResumeData(data: $0) }
        let own = try? ResumeData.record(beside: ownPartial)
        let start = Self.partialStart(own: own, recorded: recorded, ownPartial: ownPartial) { url in
            guard let (descriptor, status) = SideFile.openExisting(url, access: O_RDONLY) else { return nil }
            close(descriptor)
            return (status.st_mode & S_IFMT) == S_IFREG ? Int64(status.st_size) : nil
        }
        guard case .copy(let record) = start else { return 0 }
        return Self.copy(record, to: ownPartial) ? record.bytesOnDisk : 0
    }

    /// Copies the first `record.bytesOnDisk` bytes of `record.partialFile` into a new private file
    /// renamed to `partial`, then writes beside it the record naming it. `false` when anything fails.
    static func copy(_ record: ResumeData, to partial: URL) -> Bool {
        let recordFile = DownloadPolicy.recordFile(for: partial)
        // The old record goes first: it must never describe the bytes being replaced.
        unlink(recordFile.path)
        guard let (source, status) = SideFile.openExisting(record.partialFile, access: O_RDONLY) else { return false }
        defer { close(source) }
        guard (status.st_mode & S_IFMT) == S_IFREG, Int64(status.st_size) >= record.bytesOnDisk else { return false }
        let temporary = AtomicFile.temporaryFile(for: partial)
        guard let target = try? SideFile.replace(temporary, failure: "cannot create \(temporary.path)") else { return false }
        var copied = Int64(0)
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while copied < record.bytesOnDisk {
            let wanted = Int(min(Int64(buffer.count), record.bytesOnDisk - copied))
            let read = buffer.withUnsafeMutableBytes { pread(source, $0.baseAddress!, wanted, off_t(copied)) }
            if read < 0, errno == EINTR { continue }
            guard read > 0, buffer.withUnsafeBytes({ SideFile.writeAll(UnsafeRawBufferPointer(rebasing: $0[0..<read]), to: target) }) == 0
            else { break }
            copied += Int64(read)
        }
        let written = copied == record.bytesOnDisk && fsync(target) == 0
        close(target)
        guard written, rename(temporary.path, partial.path) == 0 else {
            unlink(temporary.path)
            return false
        }
        var mine = record
        mine.partialFile = partial
        do {
            try AtomicFile.write(mine.encoded(), to: recordFile)
        } catch {
            unlink(partial.path)
            return false
        }
        return true
    }
}
