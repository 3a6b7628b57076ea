import Foundation

/// Turns a `text/event-stream` body, fed in chunks of any size, into ``ServerSentEvent``s,
/// following the WHATWG HTML standard's event stream interpretation (§9.2.6).
///
/// - One leading UTF-8 byte order mark is dropped at the start of a connection, even when it
///   arrives split across chunks; a second one stays (and spoils the first line's field name).
/// - Lines end at LF, CRLF or a lone CR (also when a chunk boundary falls inside CRLF).
/// - An empty line dispatches the block; a block without `data:` dispatches nothing.
/// - A line starting with `:` is a comment. Otherwise the field name runs to the first `:` and
///   one space after it is dropped from the value; a line without `:` is a field with an empty
///   value. `event`, `data`, `id` and `retry` are read, other fields are ignored.
/// - Bytes that are not valid UTF-8 decode to U+FFFD.
///
/// Text is decoded once per field that needs it (and once per event for its data), never per
/// byte; lines are found with `memchr`, and a line inside one chunk is not copied. Memory is
/// bounded by `maximumLineLength` (the unfinished line) and `maximumEventSize` (the data).
struct ServerSentEventParser: Sendable {
    private static let lf: UInt8 = 0x0A
    private static let colon: UInt8 = 0x3A
    private static let space: UInt8 = 0x20
    private static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]
    /// Above this, an event buffer is released after dispatch rather than kept for the next
    /// event, so one large event does not pin its memory for the rest of the stream.
    private static let retainedCapacity = 64 * 1024

    /// The longest line accepted, in bytes, without its terminator.
    var maximumLineLength: Int { scanner.maximumLineLength }
    /// The largest event data accepted, in UTF-8 bytes: the `data:` values with the `"\n"`s that
    /// join them.
    let maximumEventSize: Int

    /// The stream's last event ID, as a reconnecting client sends it in `Last-Event-ID`: the
    /// value of the most recent valid `id:` field once its block has ended (with an empty line,
    /// whether or not the block had data). An empty `id:` sets it to `""`.
    ///
    /// Setting it (to seed a reconnection) also replaces what an `id:` field of the block under
    /// way had set. It survives ``reset()``: the standard gives each connection a new "last event
    /// ID buffer", but then an event without `id:` on the new connection would forget the ID the
    /// client just reconnected with, so the buffer starts from this value instead, as browsers do.
    var lastEventID: String {
        get { committedLastEventID }
        set {
            committedLastEventID = newValue
            lastEventIDBuffer = newValue
        }
    }

    /// The reconnection time from the last valid `retry:` field (all ASCII digits, in
    /// milliseconds), or `nil` if there was none. It takes effect as soon as the field is read,
    /// even if its block is never dispatched, and survives ``reset()``.
    ///
    /// A value too large for `Int` is clamped to `Int.max` milliseconds rather than ignored: the
    /// standard calls every all-digit value valid, and the server's intent ("wait a very long
    /// time") is kept. An empty value is ignored (it has no digits).
    var reconnectionTime: Duration?

    private var scanner: LineScanner
    private var committedLastEventID = ""
    /// The standard's "last event ID buffer": set by `id:`, copied to ``lastEventID`` on dispatch.
    private var lastEventIDBuffer = ""
    /// The standard's "data buffer" as UTF-8: each `data:` value followed by an LF.
    private var dataBuffer: [UInt8] = []
    /// The standard's "event type buffer" as UTF-8.
    private var eventTypeBuffer: [UInt8] = []
    /// The valid `id:` and `retry:` fields of the block under way, for the event's own fields.
    private var blockID: String?
    private var blockRetry: Duration?
    /// How many bytes of the byte order mark the connection has started with so far; `nil` once
    /// the first bytes have been judged (stripped or kept).
    private var byteOrderMarkMatched: Int? = 0

    /// Creates a parser for one stream (and, after ``reset()``, its reconnections).
    /// - Parameters:
    ///   - maximumLineLength: The longest line accepted, in bytes without its terminator; a
    ///     longer one makes ``feed(_:)`` throw. Negative values count as 0.
    ///   - maximumEventSize: The largest event data accepted, in bytes; more makes ``feed(_:)``
    ///     throw. Negative values count as 0.
    init(maximumLineLength: Int, maximumEventSize: Int) {
        scanner = LineScanner(maximumLineLength: maximumLineLength)
        self.maximumEventSize = max(0, maximumEventSize)
    }

    /// How many bytes are held for the unfinished line and event (the memory the limits bound).
    var bufferedByteCount: Int {
        scanner.pendingCount + dataBuffer.count + eventTypeBuffer.count + (byteOrderMarkMatched ?? 0)
    }

    /// Takes the next chunk of the stream and returns the events it completes, in order.
    ///
    /// - Throws: ``CourierError/Code-swift.struct/responseTooLarge`` as soon as a line is known
    ///   to be longer than ``maximumLineLength``, or an event's data would grow past
    ///   ``maximumEventSize``. The partial line and event are then dropped (as by ``reset()``);
    ///   events this chunk completed before are lost with the stream.
    mutating func feed(_ chunk: Data) throws(CourierError) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        // The scanner is moved out while it runs, so the per-line closure may mutate the rest of
        // `self` without overlapping access (a swap, not a copy: no copy-on-write).
        var scanner = LineScanner(maximumLineLength: 0)
        swap(&scanner, &self.scanner)
        var failure: CourierError?
        do {
            try LineScanner.withBytes(of: chunk) { raw throws(CourierError) in
                let body = try skipByteOrderMark(raw, prefix: &scanner, events: &events)
                try scanner.scan(body) { line throws(CourierError) in try processLine(line, into: &events) }
            }
        } catch {
            failure = error
        }
        swap(&scanner, &self.scanner)
        if let failure {
            reset()
            throw failure
        }
        return events
    }

    /// Ends the stream. The standard discards an unfinished event at the end of the stream (a
    /// block is only dispatched by an empty line), so this returns no events and drops the
    /// partial line and event; ``lastEventID`` and ``reconnectionTime`` are kept.
    mutating func finish() -> [ServerSentEvent] {
        reset()
        return []
    }

    /// Prepares for a new connection: drops the partial line and event and expects a byte order
    /// mark again; keeps ``lastEventID`` and ``reconnectionTime``.
    mutating func reset() {
        scanner.reset()
        dataBuffer.removeAll(keepingCapacity: dataBuffer.capacity <= Self.retainedCapacity)
        eventTypeBuffer.removeAll(keepingCapacity: true)
        blockID = nil
        blockRetry = nil
        lastEventIDBuffer = committedLastEventID
        byteOrderMarkMatched = 0
    }

    // MARK: - Byte order mark

    /// Returns the part of `raw` after a leading byte order mark, while the connection's first
    /// bytes are still being judged. Bytes that matched the mark's start in earlier chunks but
    /// turn out not to be one are scanned first, as the text they are.
    private mutating func skipByteOrderMark(
        _ raw: UnsafeRawBufferPointer, prefix scanner: inout LineScanner, events: inout [ServerSentEvent]
    ) throws(CourierError) -> UnsafeRawBufferPointer {
        guard var matched = byteOrderMarkMatched else { return raw }
        var index = 0
        while matched < 3, index < raw.count, raw[index] == Self.byteOrderMark[matched] {
            matched += 1
            index += 1
        }
        if matched == 3 {
            byteOrderMarkMatched = nil
            return UnsafeRawBufferPointer(rebasing: raw[index...])
        }
        if index == raw.count {
            // Still a possible mark, split across chunks: wait for more bytes.
            byteOrderMarkMatched = matched
            return UnsafeRawBufferPointer(rebasing: raw[index...])
        }
        byteOrderMarkMatched = nil
        // Not a mark: everything matched so far (possibly in earlier chunks) is text. `index`
        // bytes of it are in `raw`, so scan the mark's prefix and resume after them.
        try LineScanner.withBytes(of: Self.byteOrderMark) { mark throws(CourierError) in
            try scanner.scan(UnsafeRawBufferPointer(rebasing: mark[..<matched])) { line throws(CourierError) in
                try processLine(line, into: &events)
            }
        }
        return UnsafeRawBufferPointer(rebasing: raw[index...])
    }

    // MARK: - Lines and fields

    /// Interprets one line (without its terminator).
    private mutating func processLine(
        _ line: UnsafeRawBufferPointer, into events: inout [ServerSentEvent]
    ) throws(CourierError) {
        guard let base = line.baseAddress, line.count > 0 else {
            dispatch(into: &events)
            return
        }
        if line[0] == Self.colon { return }  // a comment
        let field: UnsafeRawBufferPointer
        let value: UnsafeRawBufferPointer
        if let hit = memchr(base, Int32(Self.colon), line.count) {
            let colonIndex = base.distance(to: UnsafeRawPointer(hit))
            var valueStart = colonIndex + 1
            if valueStart < line.count, line[valueStart] == Self.space { valueStart += 1 }
            field = UnsafeRawBufferPointer(rebasing: line[..<colonIndex])
            value = UnsafeRawBufferPointer(rebasing: line[valueStart...])
        } else {
            field = line
            value = UnsafeRawBufferPointer(start: nil, count: 0)
        }
        // Field names compare as bytes: no String is built for them.
        if Self.field(field, is: "data") {
            // The event's data would be what is buffered (each earlier value and the LF that will
            // join it to this one) plus this value.
            guard dataBuffer.count + value.count <= maximumEventSize else {
                throw CourierError(
                    code: .responseTooLarge,
                    message: "the stream sent an event larger than the maximum event size of \(maximumEventSize) bytes; reading stopped")
            }
            dataBuffer.append(contentsOf: value)
            dataBuffer.append(Self.lf)
        } else if Self.field(field, is: "event") {
            eventTypeBuffer.removeAll(keepingCapacity: true)
            eventTypeBuffer.append(contentsOf: value)
        } else if Self.field(field, is: "id") {
            // An ID with NULL is ignored: it could not be sent back in a Last-Event-ID header.
            guard value.isEmpty || memchr(value.baseAddress!, 0, value.count) == nil else { return }
            let id = String(decoding: value, as: UTF8.self)
            lastEventIDBuffer = id
            blockID = id
        } else if Self.field(field, is: "retry") {
            guard let milliseconds = Self.milliseconds(value) else { return }
            let time = Duration.milliseconds(milliseconds)
            reconnectionTime = time
            blockRetry = time
        }
    }

    /// Ends the block at an empty line: dispatches it if it has data, then starts a new one.
    private mutating func dispatch(into events: inout [ServerSentEvent]) {
        committedLastEventID = lastEventIDBuffer
        defer {
            dataBuffer.removeAll(keepingCapacity: dataBuffer.capacity <= Self.retainedCapacity)
            eventTypeBuffer.removeAll(keepingCapacity: true)
            blockID = nil
            blockRetry = nil
        }
        guard !dataBuffer.isEmpty else { return }
        // The buffer always ends with the LF appended after the last value; it is not part of
        // the data.
        let data = dataBuffer.withUnsafeBytes { String(decoding: UnsafeRawBufferPointer(rebasing: $0.dropLast()), as: UTF8.self) }
        let type = eventTypeBuffer.isEmpty ? "message" : String(decoding: eventTypeBuffer, as: UTF8.self)
        events.append(
            ServerSentEvent(
                event: type, data: data, id: blockID, lastEventID: committedLastEventID, retry: blockRetry))
    }

    /// Whether a field name's bytes spell `name` (ASCII).
    @inline(__always)
    private static func field(_ field: UnsafeRawBufferPointer, is name: StaticString) -> Bool {
        field.count == name.utf8CodeUnitCount
            && memcmp(field.baseAddress!, name.utf8Start, field.count) == 0
    }

    /// A `retry:` value as milliseconds: `nil` unless it is one or more ASCII digits; clamped to
    /// `Int.max` when larger.
    static func milliseconds(_ value: UnsafeRawBufferPointer) -> Int? {
        guard !value.isEmpty else { return nil }
        var result = 0
        var overflowed = false
        for byte in value {
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            guard !overflowed else { continue }  // still check that the rest are digits
            let (shifted, o1) = result.multipliedReportingOverflow(by: 10)
            let (sum, o2) = shifted.addingReportingOverflow(Int(byte &- 0x30))
            if o1 || o2 {
                overflowed = true
                result = Int.max
            } else {
                result = sum
            }
        }
        return result
    }
}
