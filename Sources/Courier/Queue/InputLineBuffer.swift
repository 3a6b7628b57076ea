/// Cuts an ``InputSpool``'s input (`courier get -i`'s) into lines as its bytes arrive, holding at most one line and
/// one chunk: the one place that decides what a line is and how long it may be.
///
/// A line ends at `\n`; a `\r` just before it is dropped (files written on Windows). The last
/// line may lack its `\n`. A line longer than ``lineLimit`` (``maximumLineBytes`` unless given) is
/// refused as soon as that many bytes have come without a newline, so a producer that never sends
/// one cannot make the command hold more.
public struct InputLineBuffer: Sendable {
    /// The longest line accepted, in bytes, its `\n` (and a `\r` before it) not counted: 64 KiB.
    /// Far above any URL a server takes (most refuse a request line over 8 KiB) with its
    /// `sha256=` and `out=`; a longer line is a mistake, not a download.
    public static let maximumLineBytes = 64 * 1024

    /// A line over ``maximumLineBytes``.
    public struct LineTooLong: Error, Equatable {
        /// Its number (1-based).
        public let line: Int
    }

    /// One line, without its end.
    public struct Line: Equatable, Sendable {
        /// 1-based.
        public let number: Int
        /// The line's bytes, without its end.
        public let bytes: ArraySlice<UInt8>
    }

    /// The longest line this buffer accepts, in bytes (its end not counted).
    public let lineLimit: Int

    /// An empty buffer refusing lines over ``maximumLineBytes``.
    public init() { lineLimit = Self.maximumLineBytes }

    /// An empty buffer refusing lines over `lineLimit` bytes (at least 1): `courier ws` cuts
    /// messages out of stdin with its `--max-message` as the limit.
    public init(lineLimit: Int) { self.lineLimit = max(1, lineLimit) }

    /// Bytes from `start` on are not yet returned as lines.
    private var pending: [UInt8] = []
    private var start = 0
    /// Where the search for the next `\n` resumes (bytes before it have none).
    private var scanned = 0
    /// Lines returned so far.
    public private(set) var count = 0

    /// Bytes held that are not yet part of a returned line.
    public var heldBytes: Int { pending.count - start }

    /// Adds the next bytes of the input.
    public mutating func append(_ bytes: some Collection<UInt8>) {
        // Drop what was returned before growing, so the buffer stays about one line and one chunk.
        if start > 0, start >= pending.count / 2 {
            pending.removeFirst(start)
            scanned -= start
            start = 0
        }
        pending.append(contentsOf: bytes)
    }

    /// The next whole line, or `nil` when more bytes are needed. With `atEnd` (the input has no
    /// more bytes), what is left is the last line, and `nil` means there is none.
    public mutating func next(atEnd: Bool = false) throws(LineTooLong) -> Line? {
        let end: Int
        let resume: Int
        if let newline = pending[scanned...].firstIndex(of: UInt8(ascii: "\n")) {
            end = newline
            resume = newline + 1
        } else {
            scanned = pending.count
            let held = pending.count - start
            // A byte over the maximum may yet be the `\r` before the newline of a line of exactly it.
            let carriageReturnLast = pending.last == UInt8(ascii: "\r")
            guard held <= lineLimit || (held == lineLimit + 1 && carriageReturnLast) else {
                throw LineTooLong(line: count + 1)
            }
            guard atEnd, start < pending.count else { return nil }
            end = pending.count
            resume = pending.count
        }
        var last = end
        if last > start, pending[last - 1] == UInt8(ascii: "\r") { last -= 1 }
        guard last - start <= lineLimit else { throw LineTooLong(line: count + 1) }
        count += 1
        let line = Line(number: count, bytes: pending[start..<last])
        start = resume
        scanned = resume
        return line
    }
}
