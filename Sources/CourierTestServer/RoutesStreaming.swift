/// Streaming routes: `/sse` (Server-Sent Events) and `/ndjson`. The slow drip is `/drip`
/// (RoutesTiming.swift).
extension Router {
    /// The most records (events, lines) a streaming route serves.
    static let maxStreamRecords = 10_000_000
    /// The longest `retry:` announcement, one day.
    static let maxRetryMilliseconds = 86_400_000

    /// `/sse`: events with ids 1…`count` as `text/event-stream`, resuming after the request's
    /// `Last-Event-ID`; 204 once every event has been sent. Parameters: see Docs/TestServer.md.
    func sse(_ request: HTTPRequest) throws(RouteError) -> HTTPResponse {
        let count = try intParameter(request, "count", default: 10, in: 0...Self.maxStreamRecords)
        let retry = try optionalIntParameter(request, "retry", in: 0...Self.maxRetryMilliseconds)
        let comments = try flagParameter(request, "comments")
        let dataLines = try intParameter(request, "data_lines", default: 1, in: 1...100)
        let bom = try flagParameter(request, "bom")
        // `ids=0`: no `id:` lines, as LLM APIs send; a client then has no Last-Event-ID to resume with.
        var ids = true
        if request.query("ids") != nil { ids = try flagParameter(request, "ids") }
        // `done=1`: a last event `data: [DONE]`, as OpenAI-style APIs end their answer.
        let done = try flagParameter(request, "done")
        let eol = try lineEnding(request)
        let event = request.query("event")
        if let event, HTTPResponseWriter.isUnsafe(event) {
            // A CR or LF would end the `event:` line early and inject fields of its own.
            throw RouteError("event contains control characters")
        }
        var stream = try RecordStream(request, router: self)
        var first = 1
        // An empty Last-Event-ID is what a client sends after an event reset its id: start over.
        if let lastID = request.header("Last-Event-ID"), !lastID.isEmpty {
            first = try integer(lastID, name: "Last-Event-ID", in: 0...(Int.max - 1)) + 1
        }
        // 204 is how an event stream tells the client not to reconnect.
        guard first <= count else { return HTTPResponse(status: 204) }
        stream.records = (first, count)

        if bom { stream.prologue += [0xEF, 0xBB, 0xBF] }
        if let retry {
            stream.prologue += Array("retry: ".utf8)
            RecordStream.appendDecimal(retry, to: &stream.prologue)
            stream.prologue += eol + eol
        }
        let comment = comments ? Array(": keep-alive".utf8) + eol : []
        let eventLine = event.map { Array("event: \($0)".utf8) + eol } ?? []
        let idPrefix = Array("id: ".utf8)
        let dataPrefix = Array("data: ".utf8)
        let value = Array("event ".utf8)
        let linePrefix = Array(" line ".utf8)
        let padding = [UInt8](repeating: UInt8(ascii: "x"), count: stream.padding)
        stream.record = { id, buffer in
            let start = buffer.count
            buffer += comment
            if ids {
                buffer += idPrefix
                RecordStream.appendDecimal(id, to: &buffer)
                buffer += eol
            }
            buffer += eventLine
            var cut = 0
            for line in 1...dataLines {
                buffer += dataPrefix
                let valueStart = buffer.count
                buffer += value
                RecordStream.appendDecimal(id, to: &buffer)
                if dataLines > 1 {
                    buffer += linePrefix
                    RecordStream.appendDecimal(line, to: &buffer)
                }
                if line == dataLines { buffer += padding }
                // A mid-event drop cuts the first data line in half, before its terminator.
                if line == 1 { cut = valueStart + (buffer.count - valueStart) / 2 - start }
                buffer += eol
            }
            buffer += eol
            if done, id == count { buffer += dataPrefix + Array("[DONE]".utf8) + eol + eol }
            return cut
        }
        var response = HTTPResponse(status: 200, headers: [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache")])
        response.stream = stream.makeStream()
        return response
    }

    /// `/ndjson`: lines `{"index":i,"text":"item i"}` for i in 1…`count` as
    /// `application/x-ndjson`. Parameters: see Docs/TestServer.md.
    func ndjson(_ request: HTTPRequest) throws(RouteError) -> HTTPResponse {
        let count = try intParameter(request, "count", default: 10, in: 0...Self.maxStreamRecords)
        let badLine = try optionalIntParameter(request, "bad_line", in: 1...Int.max)
        var stream = try RecordStream(request, router: self)
        stream.records = (1, count)
        let indexPrefix = Array(#"{"index":"#.utf8)
        let textPrefix = Array(#""text":"item "#.utf8)
        let pad =
            stream.padding > 0
            ? Array(#","pad":""#.utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: stream.padding) + [UInt8(ascii: "\"")] : []
        stream.record = { index, buffer in
            let start = buffer.count
            buffer += indexPrefix
            RecordStream.appendDecimal(index, to: &buffer)
            buffer.append(UInt8(ascii: ","))
            // The bad line stops after the comma: a truncated object no JSON parser accepts.
            if index != badLine {
                buffer += textPrefix
                RecordStream.appendDecimal(index, to: &buffer)
                buffer.append(UInt8(ascii: "\""))
                buffer += pad
                buffer.append(UInt8(ascii: "}"))
            }
            buffer.append(UInt8(ascii: "\n"))
            return max(1, (buffer.count - start - 1) / 2)
        }
        var response = HTTPResponse(status: 200, headers: [("Content-Type", "application/x-ndjson")])
        response.stream = stream.makeStream()
        return response
    }

    /// `line_ending=lf|crlf|cr` (default `lf`) as bytes.
    private func lineEnding(_ request: HTTPRequest) throws(RouteError) -> [UInt8] {
        switch request.query("line_ending")?.lowercased() {
        case nil, "lf": return [10]
        case "crlf": return [13, 10]
        case "cr": return [13]
        case let other?: throw RouteError("invalid line_ending '\(other)': expected lf, crlf or cr")
        }
    }
}

/// Numbered records (SSE events, NDJSON lines) written as a ``ResponseStream``: a prologue,
/// then the records, paced or batched, maybe dropped part-way.
struct RecordStream {
    /// Unpaced records are gathered into writes of at least this size: one write per record
    /// would cap the rate at one syscall per record, and these routes measure records per second.
    static let batchSize = 64 * 1024

    /// Bytes before the first record (BOM, `retry:`).
    var prologue: [UInt8] = []
    /// The first and last record number; none when first > last.
    var records = (first: 1, last: 0)
    /// `interval_ms`: the pause between records; 0 batches them.
    let intervalMilliseconds: Int
    /// `pad`: how many filler bytes the route adds to each record.
    let padding: Int
    /// `drop_after`: records sent on this connection before it is dropped.
    let dropAfter: Int?
    /// `drop_mid`: the drop cuts the next record in two instead of falling between records.
    let dropMid: Bool
    /// Appends record `n` to the buffer and returns where in it (counted from the record's
    /// first byte) a mid-record drop cuts.
    var record: (Int, inout [UInt8]) -> Int = { _, _ in 0 }

    /// Reads the parameters the streaming routes share; 400 for invalid values.
    init(_ request: HTTPRequest, router: Router) throws(RouteError) {
        intervalMilliseconds = try router.intParameter(request, "interval_ms", default: 0, in: 0...60_000)
        padding = try router.intParameter(request, "pad", default: 0, in: 0...(1 << 20))
        dropAfter = try router.optionalIntParameter(request, "drop_after", in: 0...Int.max)
        dropMid = try router.flagParameter(request, "drop_mid")
    }

    /// The stream; each run starts from the first record.
    func makeStream() -> ResponseStream {
        ResponseStream { output in run(output) }
    }

    /// Writes the prologue and the records; see ``ResponseStream/Ending``.
    private func run(_ output: StreamOutput) -> ResponseStream.Ending {
        var buffer = prologue
        buffer.reserveCapacity(Self.batchSize + 2 * padding + 4096)
        func flush() -> Bool {
            defer { buffer.removeAll(keepingCapacity: true) }
            return output.send(buffer)
        }
        var sent = 0
        var number = records.first
        while number <= records.last {
            if let dropAfter, sent == dropAfter {
                if dropMid {
                    // Paced records were flushed one by one, so only the pause is left to do.
                    if sent > 0, intervalMilliseconds > 0, !output.pause(milliseconds: intervalMilliseconds) { return .aborted }
                    let start = buffer.count
                    let cut = record(number, &buffer)
                    buffer.removeSubrange((start + cut)...)
                }
                return flush() ? .dropped : .aborted
            }
            if sent > 0, intervalMilliseconds > 0, !output.pause(milliseconds: intervalMilliseconds) { return .aborted }
            _ = record(number, &buffer)
            sent += 1
            number += 1
            if intervalMilliseconds > 0 || buffer.count >= Self.batchSize {
                guard flush() else { return .aborted }
            }
        }
        return flush() ? .complete : .aborted
    }

    /// Appends the decimal digits of `value` (≥ 0) without building a String: this runs once or
    /// twice per record.
    static func appendDecimal(_ value: Int, to buffer: inout [UInt8]) {
        var divisor = 1
        while divisor <= value / 10 { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            buffer.append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }
}
