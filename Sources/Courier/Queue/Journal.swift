import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An append-only, checksummed, fsync'ed log of opaque records in a directory the caller owns:
/// the write-ahead log under ``DownloadQueue``.
///
/// ## Files
/// The directory (created 0700 when missing; its parent must exist) holds:
/// - `journal` (0600): the log.
/// - `lock` (0600): held with `flock(LOCK_EX | LOCK_NB)` for the journal's life, and holding the
///   owner's PID (text and a newline) so a second opener can say who has it. It is never removed:
///   removing a lock file lets two processes lock two different files.
/// - `.journal.tmp`: a compaction's snapshot before its rename; removed when found at open.
/// - `journal.corrupt-<unix time>`: a copy kept when replay met bytes it could not frame.
///
/// Every file is opened `O_NOFOLLOW | O_CLOEXEC` and used only when its descriptor shows a regular
/// file of this user with one link (``SideFile/isPrivate(_:)``): a symlink or a hard link planted
/// at `journal` or `lock` is refused, never written through.
///
/// ## Format (version 1)
/// All integers are big-endian.
/// - Header, 16 bytes: the magic `CRJ\0` (`43 52 4A 00`), the format version (`UInt16`, 1), ten
///   reserved zero bytes. A file with another magic is not ours and is never written; a newer
///   version is refused with a message naming it, so an older Courier never damages a newer log.
/// - Then records, back to back: the payload length (`UInt32`, at most ``maximumRecordSize``),
///   the CRC-32C (``CRC32C``) of the four length bytes followed by the payload (`UInt32`), the
///   payload. The checksum covers the length so a damaged length is caught like damaged data.
///
/// ## Replay (at ``open(directory:)``)
/// The file is read front to back through a bounded buffer (one record at most in memory besides
/// the records returned):
/// - A record header or payload cut off by the end of the file is a torn tail — a write a crash
///   interrupted, never acknowledged by ``append(_:)`` — and so is a run of zero bytes to the end
///   (file systems may extend a file before its data lands). The file is truncated to the last
///   whole record and synced; ``Report/truncatedTailBytes`` says how much went.
/// - A checksum mismatch under a plausible length skips that record (``Report/skipped``) and
///   replay continues after it: the framing still holds.
/// - A length over the maximum means the rest cannot be framed: the file is copied to
///   `journal.corrupt-<unix time>` (0600, synced), the remaining bytes are reported skipped, and
///   the journal is truncated there. The same holds when a record whose checksum failed is
///   followed by no plausible header (an over-long length, or one running past the end): the
///   checksum also covers the length, so the damaged field was most likely the length, and
///   reading on would be reading at the wrong offsets — the cut is made at that record.
/// No corrupt payload is ever returned, and no damage crashes the process.
///
/// ## Durability and group commit
/// ``append(_:)`` returns only after its bytes are on disk (`fdatasync`). Appenders write their
/// frames under the state lock (one `write(2)`, so frames never interleave), then leave it to
/// wait for a sync: the first one finding no sync running becomes the leader, syncs outside the
/// lock, and on its return every record written before the sync started is durable; the others
/// sleep on the condition meanwhile, and whoever still needs a sync leads the next one. Under
/// load one `fdatasync` covers many appends, and the lock is never held across one. A failed
/// write is cut off again (`ftruncate`) so the framing stays whole; a failed sync poisons the
/// journal — the kernel may have dropped the unwritten pages, so no later append can be
/// promised — and every later call throws until the directory is opened again.
///
/// ## Test hook (test-only)
/// `COURIER_JOURNAL_KILL_AT="<n>:<phase>"` (``KillPoint``), read once at open, makes the process
/// `kill(getpid(), SIGKILL)` itself at the n-th append (or compaction) of this ``Journal`` at
/// that point — crash tests run a child with it. Phases: `before-write`, `mid-write` (half the
/// frames written), `after-write`, `after-sync` (durable, before returning), and for
/// ``compact(to:)``: `compact-written` (snapshot synced, before the rename) and `compact-renamed`
/// (after the rename, before the directory sync). Unset, it costs one `nil` check.
package final class Journal: Sendable {
    /// What ``open(directory:)`` found while replaying.
    package struct Report: Sendable, Equatable {
        /// Good records replayed (and returned).
        package var records: Int
        /// Corrupt records detected and skipped, in file order.
        package var skipped: [Skipped]
        /// Bytes of a torn final record (a crash mid-write) cut off the end of the file.
        package var truncatedTailBytes: Int

        /// One stretch of the file that was not returned: where it starts, and why.
        package struct Skipped: Sendable, Equatable {
            package var offset: Int64
            package var reason: String

            package init(offset: Int64, reason: String) {
                self.offset = offset
                self.reason = reason
            }
        }

        package init(records: Int = 0, skipped: [Skipped] = [], truncatedTailBytes: Int = 0) {
            self.records = records
            self.skipped = skipped
            self.truncatedTailBytes = truncatedTailBytes
        }
    }

    /// The largest payload a record may have: 1 MiB. Larger appends are refused; on replay a
    /// larger length is corruption.
    package static let maximumRecordSize = 1 << 20
    /// The format this Courier writes and the newest it reads.
    static let formatVersion: UInt16 = 1
    /// `CRJ\0`.
    static let magic: [UInt8] = [0x43, 0x52, 0x4A, 0x00]
    /// The file header's size.
    static let headerSize = 16
    /// A record's length and checksum, before its payload.
    static let frameHeaderSize = 8

    /// Everything that changes, behind the one lock (whose condition the group commit waits on).
    struct State {
        /// The journal file, opened `O_RDWR | O_APPEND`; replaced by a compaction.
        var descriptor: Int32
        /// The file's size: the end of the last whole record.
        var size: Int64
        /// Appends written so far; each append's sequence number is the value after its write.
        var written: UInt64 = 0
        /// Every append with a sequence number up to this one is on disk.
        var synced: UInt64 = 0
        /// A leader is in `fdatasync` (outside the lock), so `descriptor` must stay open.
        var syncing = false
        /// A compaction owns the file: appends wait, and `descriptor` must stay open.
        var compacting = false
        var closed = false
        /// Set by a failed sync (or a failed cleanup after a failed write): every later call throws.
        var failure: CourierError?
        /// Appends and compactions begun, counted for the kill test hook.
        var appends = 0
        var compactions = 0
        /// `fdatasync` calls made by appends: fewer than appends when group commit works.
        var syncs = 0
    }

    /// The directory the journal lives in.
    package let directory: URL
    let state: LockedCondition<State>
    let lockDescriptor: Int32
    let killPoint: KillPoint?

    init(directory: URL, descriptor: Int32, size: Int64, lockDescriptor: Int32, killPoint: KillPoint?) {
        self.directory = directory
        self.state = LockedCondition(State(descriptor: descriptor, size: size))
        self.lockDescriptor = lockDescriptor
        self.killPoint = killPoint
    }

    deinit {
        close()
    }

    /// The `journal` file in the directory.
    var journalURL: URL { directory.appendingPathComponent("journal") }

    /// Compactions begun since the journal was opened (tests count them).
    package var compactionCount: Int {
        state.withLock { $0.compactions }
    }

    /// The journal file's current size in bytes, header included: the queue compacts when it grows.
    package var byteCount: Int64 {
        state.withLock { $0.size }
    }

    /// How many `fdatasync` calls appends have made so far (tests and measurements: group commit
    /// shows as fewer syncs than appends).
    package var syncCount: Int {
        state.withLock { $0.syncs }
    }

    /// Appends one record durably: returns only after its bytes are on disk. Concurrent appenders
    /// share syncs (see "Durability and group commit" above). Throws for a record over
    /// ``maximumRecordSize``, a closed or poisoned journal, or a failed write or sync.
    package func append(_ record: Data) throws(CourierError) {
        try append(contentsOf: [record])
    }

    /// Appends `records` in order with one write and one sync: after a crash, a prefix of them
    /// (possibly none) is in the journal, never a record without those before it.
    package func append(contentsOf records: [Data]) throws(CourierError) {
        guard !records.isEmpty else { return }
        // Framing and checksums outside the lock: the only work under it is the write itself.
        let frames = try Self.frames(of: records)
        let (sequence, ordinal) = try write(frames)
        try waitUntilSynced(sequence)
        if let killPoint, killPoint.matches(ordinal, .afterSync) { killPoint.fire() }
    }

    /// Releases the lock and closes the files, after any appends already written are synced.
    /// Later calls throw; closing twice does nothing. Also done when the journal is released.
    package func close() {
        state.withLock(when: { !$0.syncing && !$0.compacting && ($0.synced >= $0.written || $0.failure != nil) }) {
            state in
            guard !state.closed else { return }
            state.closed = true
            Glibc.close(state.descriptor)
            // Closing the descriptor releases the flock: the next opener may start.
            Glibc.close(lockDescriptor)
        }
    }

    // MARK: - Appending

    /// The length · CRC-32C · payload frames of `records`, back to back.
    static func frames(of records: [Data]) throws(CourierError) -> [UInt8] {
        var frames: [UInt8] = []
        frames.reserveCapacity(records.reduce(0) { $0 + frameHeaderSize + $1.count })
        for record in records {
            guard record.count <= maximumRecordSize else {
                throw CourierError(
                    code: .fileSystem,
                    message: "a journal record is at most \(maximumRecordSize) bytes; this one is \(record.count)")
            }
            appendFrame(of: record, to: &frames)
        }
        return frames
    }

    /// Appends the frame of `record` to `frames`.
    static func appendFrame(of record: Data, to frames: inout [UInt8]) {
        let length = UInt32(record.count)
        let lengthBytes = [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
        let crc = record.withUnsafeBytes { CRC32C.checksum($0, continuing: CRC32C.checksum(lengthBytes)) }
        frames += lengthBytes
        frames += [UInt8(crc >> 24), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc & 0xFF)]
        // Through the raw buffer: one copy, where appending `Data` as a sequence goes byte by byte.
        record.withUnsafeBytes { frames.append(contentsOf: $0) }
    }

    /// Writes `frames` at the end of the journal under the lock; returns the append's sequence
    /// number (for the sync) and its ordinal (for the test hook).
    private func write(_ frames: [UInt8]) throws(CourierError) -> (sequence: UInt64, ordinal: Int) {
        try state.withLock(when: { !$0.compacting }) { (state: inout State) throws(CourierError) -> (UInt64, Int) in
            try Self.checkUsable(state, directory)
            state.appends += 1
            let ordinal = state.appends
            if let killPoint {
                if killPoint.matches(ordinal, .beforeWrite) { killPoint.fire() }
                if killPoint.matches(ordinal, .midWrite) {
                    _ = frames.withUnsafeBytes {
                        SideFile.writeAll(UnsafeRawBufferPointer(rebasing: $0[0..<frames.count / 2]), to: state.descriptor)
                    }
                    killPoint.fire()
                }
            }
            let code = frames.withUnsafeBytes { SideFile.writeAll($0, to: state.descriptor) }
            guard code == 0 else {
                // Cut off what part of the frames did land, or the next append would be framed
                // behind half a record. If even that fails, the file can no longer be trusted.
                let error = CourierError.fileSystem("cannot append to the journal in \(directory.path)", url: journalURL, errno: code)
                if ftruncate(state.descriptor, off_t(state.size)) != 0 { state.failure = error }
                throw error
            }
            if let killPoint, killPoint.matches(ordinal, .afterWrite) { killPoint.fire() }
            state.size += Int64(frames.count)
            state.written += 1
            return (state.written, ordinal)
        }
    }

    /// What each turn of ``waitUntilSynced(_:)`` found.
    private enum SyncStep {
        case durable
        case failed(CourierError)
        case lead(descriptor: Int32, upTo: UInt64)
    }

    /// Returns once append `sequence` is on disk: as a follower of a sync already running, or as
    /// the leader of the next one.
    private func waitUntilSynced(_ sequence: UInt64) throws(CourierError) {
        while true {
            let step = state.withLock(when: { $0.synced >= sequence || $0.failure != nil || (!$0.syncing && !$0.compacting) }) {
                state -> SyncStep in
                if state.synced >= sequence { return .durable }
                if let failure = state.failure { return .failed(failure) }
                // Lead: this sync covers every append written so far, not only this one.
                state.syncing = true
                return .lead(descriptor: state.descriptor, upTo: state.written)
            }
            switch step {
            case .durable:
                return
            case .failed(let error):
                throw error
            case .lead(let descriptor, let target):
                // Outside the lock: appenders keep writing (and will be covered by the next sync).
                let code = Self.dataSync(descriptor)
                state.withLock { state in
                    state.syncing = false
                    state.syncs += 1
                    if code == 0 {
                        state.synced = max(state.synced, target)
                    } else {
                        state.failure = CourierError.fileSystem(
                            "cannot sync the journal in \(directory.path); reopen it", url: journalURL, errno: code)
                    }
                }
            }
        }
    }

    /// Throws when the journal is closed or poisoned.
    static func checkUsable(_ state: State, _ directory: URL) throws(CourierError) {
        if state.closed { throw CourierError(code: .fileSystem, message: "the journal in \(directory.path) is closed") }
        if let failure = state.failure { throw failure }
    }

    /// `fdatasync(2)`, retried on `EINTR`; 0 or the `errno`.
    static func dataSync(_ descriptor: Int32) -> Int32 {
        while fdatasync(descriptor) != 0 {
            if errno != EINTR { return errno }
        }
        return 0
    }
}
