import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension Journal {
    /// Replaces the journal with exactly `records` (a snapshot of what the caller still needs):
    /// written to `.journal.tmp`, synced, renamed over `journal`, and the directory synced. A
    /// crash at any point leaves the old journal or the new one, whole.
    ///
    /// Appends wait while it runs. Appends that were written before it are synced into the old
    /// journal first, so their callers' promise holds until the rename; the snapshot is then the
    /// caller's statement of everything those records meant. A failure before the rename leaves
    /// the old journal in use; a failure after it (the directory sync) poisons the journal,
    /// since it is then unknown which file a crash would leave.
    package func compact(to records: [Data]) throws(CourierError) {
        for record in records where record.count > Self.maximumRecordSize {
            throw CourierError(
                code: .fileSystem, message: "a journal record is at most \(Self.maximumRecordSize) bytes; this one is \(record.count)")
        }
        let (oldDescriptor, pending, ordinal) = try state.withLock(when: { !$0.syncing && !$0.compacting }) {
            (state: inout State) throws(CourierError) -> (Int32, UInt64?, Int) in
            try Self.checkUsable(state, directory)
            state.compacting = true
            state.compactions += 1
            return (state.descriptor, state.written > state.synced ? state.written : nil, state.compactions)
        }
        // Set where a failure leaves the file in doubt: a failed sync (like a failed sync in
        // `append`), or a rename that may not survive a crash.
        var poison = false
        var replacement: (descriptor: Int32, size: Int64)?
        var failure: CourierError?
        do throws(CourierError) {
            if let pending {
                let code = Self.dataSync(oldDescriptor)
                guard code == 0 else {
                    poison = true
                    throw CourierError.fileSystem("cannot sync the journal in \(directory.path); reopen it", url: journalURL, errno: code)
                }
                // Their appends may return now rather than after the whole snapshot is written.
                state.withLock { $0.synced = max($0.synced, pending) }
            }
            replacement = try writeSnapshot(records, ordinal: ordinal)
            if let killPoint, killPoint.matches(ordinal, .compactRenamed) { killPoint.fire() }
            // The rename is durable only once the directory is; until then a crash may bring the
            // old journal back.
            poison = true
            try Self.syncDirectory(directory)
            poison = false
        } catch {
            failure = error
        }
        state.withLock { state in
            if let replacement {
                // The new file has the name now: it is the one to use (and to close).
                Glibc.close(state.descriptor)
                state.descriptor = replacement.descriptor
                state.size = replacement.size
                state.synced = state.written
            }
            state.compacting = false
            if poison, let failure { state.failure = failure }
        }
        if let failure { throw failure }
    }

    /// Writes `records` with a header to `.journal.tmp`, syncs it and renames it over the
    /// journal; returns the new file's descriptor and size. On failure the old journal keeps its
    /// name and the temporary is removed. Runs outside the lock while `compacting` keeps everyone
    /// else off the file.
    private func writeSnapshot(_ records: [Data], ordinal: Int) throws(CourierError) -> (Int32, Int64) {
        let temporary = AtomicFile.temporaryFile(for: journalURL)
        // Replaced, never reopened: a link planted at the name is unlinked, not written through.
        let descriptor = try SideFile.replace(
            temporary, access: O_RDWR | O_APPEND, failure: "cannot write a snapshot of the journal in \(directory.path)")
        var size = Int64(0)
        do throws(CourierError) {
            // Framed in slices of about a megabyte: a snapshot of 10,000 items is never held twice.
            var buffer = Journal.header
            for (index, record) in records.enumerated() {
                Self.appendFrame(of: record, to: &buffer)
                guard buffer.count >= 1 << 20 || index == records.count - 1 else { continue }
                try writeAll(buffer, to: descriptor, temporary)
                size += Int64(buffer.count)
                buffer.removeAll(keepingCapacity: true)
            }
            if !buffer.isEmpty {
                try writeAll(buffer, to: descriptor, temporary)
                size += Int64(buffer.count)
            }
            // Before the rename: after a crash the name holds the old file or this one, complete.
            guard fsync(descriptor) == 0 else {
                throw CourierError.fileSystem("cannot sync a snapshot of the journal in \(directory.path)", url: temporary, errno: errno)
            }
            if let killPoint, killPoint.matches(ordinal, .compactWritten) { killPoint.fire() }
            guard rename(temporary.path, journalURL.path) == 0 else {
                throw CourierError.fileSystem("cannot replace the journal in \(directory.path)", url: journalURL, errno: errno)
            }
        } catch {
            Glibc.close(descriptor)
            unlink(temporary.path)
            throw error
        }
        return (descriptor, size)
    }

    private func writeAll(_ bytes: [UInt8], to descriptor: Int32, _ url: URL) throws(CourierError) {
        let code = bytes.withUnsafeBytes { SideFile.writeAll($0, to: descriptor) }
        guard code == 0 else {
            throw CourierError.fileSystem("cannot write a snapshot of the journal in \(directory.path)", url: url, errno: code)
        }
    }
}
