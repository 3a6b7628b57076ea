import Foundation

/// Splits a byte stream, fed in chunks of any size, into lines for `ByteStream.lines` and
/// `jsonLines`.
///
/// A line ends at LF, CRLF or a lone CR; a CR at the end of one chunk and an LF at the start of
/// the next are one line end. Lines come back without their terminator, and empty lines are
/// returned too. No text decoding happens here: the bytes are handed back as they came.
///
/// Memory is bounded: no more than `maximumLineLength` bytes of an unfinished line are held.
struct LineSplitter: Sendable {
    private var scanner: LineScanner

    /// Creates a splitter.
    /// - Parameter maximumLineLength: The longest line accepted, in bytes, without its
    ///   terminator; a longer one makes ``feed(_:)`` throw. Negative values count as 0.
    init(maximumLineLength: Int) {
        scanner = LineScanner(maximumLineLength: maximumLineLength)
    }

    /// The longest line accepted, in bytes, without its terminator.
    var maximumLineLength: Int { scanner.maximumLineLength }

    /// How many bytes of an unfinished line are held (never more than ``maximumLineLength``).
    var bufferedByteCount: Int { scanner.pendingCount }

    /// Takes the next chunk of the stream and returns the lines it completes, in order.
    ///
    /// - Throws: ``CourierError/Code-swift.struct/responseTooLarge`` as soon as a line is known
    ///   to be longer than ``maximumLineLength`` (without waiting for its end). The partial
    ///   line is then dropped; the lines this chunk completed before it are lost with the stream.
    mutating func feed(_ chunk: Data) throws(CourierError) -> [Data] {
        var lines: [Data] = []
        do {
            try LineScanner.withBytes(of: chunk) { raw throws(CourierError) in
                try scanner.scan(raw) { line in lines.append(Data(line)) }
            }
        } catch {
            scanner.reset()
            throw error
        }
        return lines
    }

    /// Ends the stream: returns the last line if the stream stopped without a terminator after
    /// it, or `nil` when nothing is pending. The splitter is then ready for a new stream.
    mutating func finish() -> Data? {
        let last = scanner.pendingCount > 0 ? scanner.withPendingBytes { Data($0) } : nil
        scanner.reset()
        return last
    }
}

/// The line framing shared by ``LineSplitter`` and ``ServerSentEventParser``: finds LF, CRLF and
/// lone-CR line ends in bulk and keeps the start of a line that a chunk boundary cut.
///
/// Lines are handed to a closure as byte buffers that are valid only during the call; a line
/// wholly inside one chunk is handed over without being copied.
struct LineScanner: Sendable {
    private static let lf: UInt8 = 0x0A
    private static let cr: UInt8 = 0x0D
    /// Above this, a pending-line buffer is released rather than kept for the next line, so one
    /// long line does not pin its memory for the rest of the stream.
    private static let retainedCapacity = 64 * 1024

    /// The longest line accepted, in bytes, without its terminator.
    let maximumLineLength: Int
    /// The start of a line that the end of the previous chunk cut.
    private var pending: [UInt8] = []
    /// The previous chunk ended with a CR: an LF starting this one completes the same line end.
    private var skipsLeadingLF = false

    /// Creates a scanner.
    /// - Parameter maximumLineLength: The longest line accepted, in bytes (negative counts as 0).
    init(maximumLineLength: Int) {
        self.maximumLineLength = max(0, maximumLineLength)
    }

    /// The number of bytes held for an unfinished line.
    var pendingCount: Int { pending.count }

    /// Calls `body` with the bytes held for an unfinished line.
    func withPendingBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        pending.withUnsafeBytes(body)
    }

    /// Forgets the unfinished line and any CR awaiting its LF: a new stream starts.
    mutating func reset() {
        pending.removeAll(keepingCapacity: pending.capacity <= Self.retainedCapacity)
        skipsLeadingLF = false
    }

    /// Frames the lines `bytes` completes and hands each to `onLine`, in order; keeps the
    /// unfinished tail for the next call.
    ///
    /// - Throws: ``CourierError/Code-swift.struct/responseTooLarge`` when a line is longer than
    ///   ``maximumLineLength``, or whatever `onLine` throws. The scanner's state is then
    ///   unspecified until ``reset()``.
    mutating func scan(
        _ bytes: UnsafeRawBufferPointer, onLine: (UnsafeRawBufferPointer) throws(CourierError) -> Void
    ) throws(CourierError) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        let count = bytes.count
        var start = 0
        if skipsLeadingLF {
            skipsLeadingLF = false
            if bytes[0] == Self.lf { start = 1 }
        }
        // The next LF and CR at or after `start` (`count` when there is none). Each is searched
        // again only once `start` has passed it, so a chunk is scanned in linear time whatever
        // mix of terminators it uses.
        var nextLF = -1
        var nextCR = -1
        while start < count {
            if nextLF < start { nextLF = Self.find(Self.lf, in: base, from: start, to: count) }
            if nextCR < start { nextCR = Self.find(Self.cr, in: base, from: start, to: count) }
            let end = min(nextLF, nextCR)
            let length = end - start
            guard pending.count + length <= maximumLineLength else {
                throw Self.lineTooLong(maximumLineLength)
            }
            if end == count {
                // No line end left in this chunk: keep the start of the line for the next one.
                pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
                return
            }
            if pending.isEmpty {
                try onLine(UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
            } else {
                pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
                try Self.withBytes(of: pending, onLine)
                pending.removeAll(keepingCapacity: pending.capacity <= Self.retainedCapacity)
            }
            start = end + 1
            if end == nextCR {
                // CRLF is one line end, even when the chunk ends between the two.
                if start == count {
                    skipsLeadingLF = true
                } else if bytes[start] == Self.lf {
                    start += 1
                }
            }
        }
    }

    /// The offset of the first `byte` in `base[from..<to]`, or `to`.
    @inline(__always)
    private static func find(_ byte: UInt8, in base: UnsafeRawPointer, from: Int, to: Int) -> Int {
        guard let hit = memchr(base + from, Int32(byte), to - from) else { return to }
        return base.distance(to: UnsafeRawPointer(hit))
    }

    /// Calls `body` with the bytes of `bytes`, keeping `body`'s typed error: `withUnsafeBytes` is
    /// `rethrows`, which would widen it to `any Error`.
    @inline(__always)
    static func withBytes<Bytes: ContiguousBytes>(
        of bytes: Bytes, _ body: (UnsafeRawBufferPointer) throws(CourierError) -> Void
    ) throws(CourierError) {
        let outcome: Result<Void, CourierError> = bytes.withUnsafeBytes { raw in
            do throws(CourierError) {
                try body(raw)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try outcome.get()
    }

    /// The error for a line over the limit.
    static func lineTooLong(_ limit: Int) -> CourierError {
        CourierError(
            code: .responseTooLarge,
            message: "the stream has a line longer than the maximum line length of \(limit) bytes; reading stopped")
    }
}
