import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension Journal {
    /// Reads a journal file front to back at open, checking its header and every record, and
    /// repairs the end of the file (see "Replay" in ``Journal``). Streams through a window of
    /// ``chunk`` bytes, or one record when a record is larger.
    struct Replay {
        /// How much is read at a time.
        static let chunk = 64 << 10

        let descriptor: Int32
        let directory: URL
        /// What was found.
        private(set) var report = Report()
        /// The file's size once replay is done: the end of the last whole record.
        private(set) var size: Int64 = 0

        /// The bytes of the file from `windowStart` on: the first `windowCount` of `window`. The
        /// array only grows (to the largest record seen), so refills do not allocate.
        private var window: [UInt8] = []
        private var windowCount = 0
        private var windowStart: Int64 = 0
        private var fileSize: Int64 = 0

        init(descriptor: Int32, directory: URL) {
            self.descriptor = descriptor
            self.directory = directory
        }

        private var url: URL { directory.appendingPathComponent("journal") }

        /// Checks the header (writing it to an empty file), replays every record, cuts off a torn
        /// tail or unframeable rest; returns the good records in order.
        mutating func run() throws(CourierError) -> [Data] {
            var status = stat()
            guard fstat(descriptor, &status) == 0 else { throw failure("cannot read", errno) }
            fileSize = Int64(status.st_size)
            guard try checkHeader() else { return [] }
            var records: [Data] = []
            var position = Int64(headerSize)
            // The offset of a record just skipped for its checksum: if no plausible header follows
            // it, its length was the damaged field and the framing is lost from there.
            var mismatch: Int64?
            while position < fileSize {
                guard try load(position, frameHeaderSize) == frameHeaderSize else {
                    try cutTail(at: position, orUnframeableFrom: mismatch)
                    break
                }
                let length = bigEndian32(at: position)
                let stored = bigEndian32(at: position + 4)
                // No real record has both zero (the CRC-32C of four zero bytes is 0x48674BC7): zeros
                // to the end are a file extended before its data reached the disk.
                if length == 0, stored == 0, try zeros(from: position) {
                    try cutTail(at: position)
                    break
                }
                guard length <= maximumRecordSize else {
                    try cutUnframeable(
                        at: mismatch ?? position, "record length \(length) is over the maximum of \(maximumRecordSize) bytes")
                    break
                }
                let total = frameHeaderSize + Int(length)
                guard try load(position, total) == total else {
                    try cutTail(at: position, orUnframeableFrom: mismatch)
                    break
                }
                let start = Int(position - windowStart)
                let computed = window.withUnsafeBytes { bytes in
                    CRC32C.checksum(
                        UnsafeRawBufferPointer(rebasing: bytes[start + frameHeaderSize..<start + total]),
                        continuing: CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[start..<start + 4])))
                }
                if computed == stored {
                    records.append(window.withUnsafeBytes { Data(bytes: $0.baseAddress! + start + frameHeaderSize, count: Int(length)) })
                    report.records += 1
                    mismatch = nil
                } else {
                    report.skipped.append(
                        Report.Skipped(
                            offset: position,
                            reason: "checksum mismatch in a record of \(length) bytes (stored \(hex(stored)), computed \(hex(computed)))"))
                    mismatch = position
                }
                position += Int64(total)
            }
            size = min(position, fileSize)
            return records
        }

        // MARK: - Header

        /// Checks the header; writes one to a file that is empty or holds a header cut short by a
        /// crash at creation (then returns `false`: there are no records).
        private mutating func checkHeader() throws(CourierError) -> Bool {
            let count = try load(0, headerSize)
            let found = Array(window[0..<count])  // 16 bytes at most
            let expected = Journal.header
            if count < headerSize {
                guard found == Array(expected[0..<count]) else {
                    throw notOurs(found.starts(with: magic) ? "its header is cut short at \(count) bytes" : nil)
                }
                if count > 0 {
                    guard ftruncate(descriptor, 0) == 0 else { throw failure("cannot repair", errno) }
                    report.truncatedTailBytes = count
                }
                // The descriptor is O_APPEND: this lands at offset 0 of the now empty file.
                let code = expected.withUnsafeBytes { SideFile.writeAll($0, to: descriptor) }
                guard code == 0 else { throw failure("cannot write", code) }
                guard fsync(descriptor) == 0 else { throw failure("cannot sync", errno) }
                size = Int64(headerSize)
                return false
            }
            guard found.starts(with: magic) else { throw notOurs(nil) }
            let version = UInt16(found[4]) << 8 | UInt16(found[5])
            guard version <= formatVersion else {
                throw CourierError(
                    code: .fileSystem,
                    message: "the journal \(url.path) is format \(version), newer than this Courier reads (\(formatVersion)); "
                        + "open it with a newer Courier (it was left untouched)",
                    url: url)
            }
            guard version > 0 else { throw notOurs("it claims format 0, which no Courier writes") }
            return true
        }

        /// The error for a file that is not a Courier journal, which is never written to.
        private func notOurs(_ detail: String?) -> CourierError {
            let why = detail ?? "it does not start with CRJ\\0"
            return CourierError(
                code: .fileSystem,
                message:
                    "the file \(url.path) is not a Courier journal (\(why)); it was left untouched: move it away or use another directory",
                url: url)
        }

        // MARK: - Repairs

        /// Cuts the file at `position`, the end of the last whole record: what follows is a record
        /// a crash interrupted. Unless a record whose checksum failed comes just before
        /// (`mismatch`): then the "record" running past the end is more likely the misreading of a
        /// damaged length, and the rest is handled as unframeable from the damaged record on.
        private mutating func cutTail(at position: Int64, orUnframeableFrom mismatch: Int64? = nil) throws(CourierError) {
            if let mismatch {
                return try cutUnframeable(
                    at: mismatch, "no whole record follows a record whose checksum failed, so its length is likely damaged")
            }
            report.truncatedTailBytes += Int(fileSize - position)
            try truncate(at: position)
        }

        /// Keeps a copy of the file, reports everything from `position` on as skipped (replacing
        /// the checksum report of a record there), and cuts the file there: there is no way to
        /// find the next record.
        private mutating func cutUnframeable(at position: Int64, _ why: String) throws(CourierError) {
            let copy = try keepCopy()
            if report.skipped.last?.offset == position { report.skipped.removeLast() }
            report.skipped.append(
                Report.Skipped(
                    offset: position,
                    reason: "\(why): the remaining \(fileSize - position) bytes cannot be framed; a copy of the journal was kept as \(copy)"
                ))
            try truncate(at: position)
        }

        /// Copies the whole file to a new `journal.corrupt-<unix time>` (synced, so the evidence
        /// survives the truncation that follows); returns its name.
        private func keepCopy() throws(CourierError) -> String {
            let stamp = time(nil)
            var name = "journal.corrupt-\(stamp)"
            var attempt = 1
            // The directory is locked, so nobody else picks a name meanwhile.
            while access(directory.appendingPathComponent(name).path, F_OK) == 0 {
                attempt += 1
                name = "journal.corrupt-\(stamp)-\(attempt)"
            }
            let handle = try SideFile.copy(descriptor, to: directory.appendingPathComponent(name))
            guard fsync(handle.descriptor) == 0 else { throw failure("cannot copy", errno) }
            try syncDirectory(directory)
            return name
        }

        /// Truncates the file at `position` and syncs it.
        private mutating func truncate(at position: Int64) throws(CourierError) {
            guard ftruncate(descriptor, off_t(position)) == 0 else { throw failure("cannot repair", errno) }
            guard fsync(descriptor) == 0 else { throw failure("cannot sync", errno) }
            fileSize = position
        }

        // MARK: - Reading

        /// Makes the window hold the bytes at `offset ..< offset + count`, or as many as the file
        /// has; returns how many it holds.
        private mutating func load(_ offset: Int64, _ count: Int) throws(CourierError) -> Int {
            let available = Int(max(0, min(Int64(count), fileSize - offset)))
            let end = windowStart + Int64(windowCount)
            if offset >= windowStart, offset + Int64(available) <= end { return available }
            let wanted = Int(min(Int64(max(available, Self.chunk)), fileSize - offset))
            if window.count < wanted { window = [UInt8](repeating: 0, count: wanted) }
            windowStart = offset
            windowCount = 0
            var filled = 0
            while filled < wanted {
                let read = window.withUnsafeMutableBytes {
                    pread(descriptor, $0.baseAddress! + filled, wanted - filled, off_t(offset) + off_t(filled))
                }
                if read < 0, errno == EINTR { continue }
                guard read >= 0 else { throw failure("cannot read", errno) }
                if read == 0 { break }
                filled += read
            }
            windowCount = filled
            return min(available, filled)
        }

        /// Whether every byte from `position` to the end of the file is zero.
        private mutating func zeros(from position: Int64) throws(CourierError) -> Bool {
            var offset = position
            while offset < fileSize {
                let count = try load(offset, Self.chunk)
                guard count > 0 else { return true }
                let start = Int(offset - windowStart)
                let allZero = window.withUnsafeBytes { bytes in
                    var index = start
                    while index < start + count, bytes[index] == 0 { index += 1 }
                    return index == start + count
                }
                guard allZero else { return false }
                offset += Int64(count)
            }
            return true
        }

        /// The big-endian `UInt32` at `offset`, which the window holds.
        private func bigEndian32(at offset: Int64) -> UInt32 {
            let start = Int(offset - windowStart)
            return UInt32(window[start]) << 24 | UInt32(window[start + 1]) << 16 | UInt32(window[start + 2]) << 8
                | UInt32(window[start + 3])
        }

        private func hex(_ value: UInt32) -> String {
            "0x" + String(value, radix: 16, uppercase: true)
        }

        private func failure(_ what: String, _ code: Int32) -> CourierError {
            CourierError.fileSystem("\(what) the journal \(url.path)", url: url, errno: code)
        }
    }
}
