import Dispatch
import Foundation
import CourierSupport

/// Writes responses to a connection, honouring framing, pacing and fault injection.
struct HTTPResponseWriter {
    let socket: Socket
    let stopSignal: StopSignal

    /// What the connection should do after a response.
    enum Outcome {
        /// Read the next request.
        case keepAlive
        /// Close gracefully (FIN).
        case close
        /// Abort with an RST.
        case reset
        /// The peer is gone or the server is stopping: just close.
        case abort
    }

    /// Bodies up to this size are sent in the same `send` as the head.
    private static let coalesceLimit = 64 * 1024
    /// Unpaced, unchunked bodies are written in pieces of this size.
    private static let pieceSize = 64 * 1024

    /// Whether a header name or value holds a control character other than tab.
    static func isUnsafe(_ text: String) -> Bool {
        text.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F }
    }

    /// Sends `HTTP/1.1 100 Continue`.
    func writeContinue() -> Bool {
        socket.sendAll("HTTP/1.1 100 Continue\r\n\r\n")
    }

    /// Writes `response`. `isHead` suppresses the body; `closeRequested` means the request asked
    /// to close (or was HTTP/1.0).
    func write(_ response: HTTPResponse, isHead: Bool, closeRequested: Bool) -> Outcome {
        // However the response ends, it is no longer in flight.
        defer { response.delivery.flow?.finish() }
        // The last line of defence for routes that reflect request input into headers: a field
        // with a line break would split into header lines the client never asked for.
        let unsafe = response.headers.contains { Self.isUnsafe($0.name) || Self.isUnsafe($0.value) }
        if unsafe {
            var refusal = HTTPResponse.text("Internal Server Error: a header value holds control characters", status: 500)
            refusal.delivery.closeConnection = true
            return write(refusal, isHead: isHead, closeRequested: true)
        }
        let delivery = response.delivery
        let noBody = HTTPStatus.forbidsBody(response.status)
        // A 1xx sent as a final answer leaves the client waiting for another, so hang up after it.
        let closing = closeRequested || delivery.closeConnection || delivery.isFaulty || (100..<200).contains(response.status)
        if delivery.initialDelayMilliseconds > 0, !stopSignal.sleep(milliseconds: delivery.initialDelayMilliseconds) {
            return .abort
        }
        if delivery.resetBeforeHead { return .reset }

        var head = "HTTP/1.1 \(response.status) \(HTTPStatus.reason(response.status))\r\n"
        for (name, value) in response.headers { head += "\(name): \(value)\r\n" }
        var chunkSize: Int?
        if !noBody {
            // A stream's length is unknown until it ends, so it is always chunked (its producer
            // picks the chunk sizes; the size here is unused).
            switch response.stream == nil ? response.framing : .chunked(chunkSize: Self.pieceSize) {
            case .contentLength: head += "Content-Length: \(delivery.declaredLength ?? response.body.count)\r\n"
            case .chunked(let size):
                head += "Transfer-Encoding: chunked\r\n"
                chunkSize = max(1, size)
            }
        }
        head += "Date: \(HTTPDate.format(Date()))\r\n"
        head += "Server: CourierTestServer\r\n"
        // Fault responses imitate a broken server, which would not announce the close.
        if closing && !delivery.isFaulty { head += "Connection: close\r\n" }
        head += "\r\n"

        let after: Outcome = delivery.resetAfter != nil ? .reset : (closing ? .close : .keepAlive)
        if isHead || noBody {
            return socket.sendAll(head) ? after : .abort
        }
        if let stream = response.stream {
            guard socket.sendAll(head) else { return .abort }
            switch stream.run(StreamOutput(socket: socket, stopSignal: stopSignal)) {
            case .complete: return socket.sendAll("0\r\n\r\n") ? after : .abort
            // A FIN rather than an RST: the client must get every byte sent before the cut.
            case .dropped: return .close
            case .aborted: return .abort
            }
        }
        let body = response.body
        if chunkSize == nil, case .none = delivery.pacing, !delivery.isFaulty, body.count <= Self.coalesceLimit {
            var bytes = Data(head.utf8)
            bytes.append(body.allBytes)
            guard socket.sendAll(bytes) else { return .abort }
            _ = delivery.flow?.served(body.count)
            return after
        }
        guard socket.sendAll(head) else { return .abort }
        let written = writeBody(body, pacing: delivery.pacing, chunkSize: chunkSize, cut: cutOff(delivery), flow: delivery.flow)
        return written ? after : .abort
    }

    /// Sleeps between paced writes; `false` when the server stops or the client hangs up first.
    /// Watching the socket ends a response as soon as its client leaves, rather than at the next
    /// write, so `max_conns` and the in-flight counts see a closed connection at once.
    private func pause(milliseconds: Int) -> Bool {
        let start = DispatchTime.now().uptimeNanoseconds
        switch stopSignal.waitReadable(socket.fd, timeoutMilliseconds: milliseconds) {
        case .timedOut: return true
        case .stopped: return false
        case .readable:
            if socket.peerHasHungUp() { return false }
            // A pipelined request waits for the reader; sleep out the rest.
            let elapsed = Int((DispatchTime.now().uptimeNanoseconds - start) / 1_000_000)
            return stopSignal.sleep(milliseconds: max(0, milliseconds - elapsed))
        }
    }

    /// Where fault injection stops the body, if anywhere.
    private func cutOff(_ delivery: ResponseDelivery) -> Int? {
        switch (delivery.closeAfter, delivery.resetAfter) {
        case let (close?, reset?): return min(close, reset)
        case let (close?, nil): return close
        case let (nil, reset?): return reset
        case (nil, nil): return nil
        }
    }

    /// Writes the body in paced "writes", each split further into wire pieces (chunks when
    /// chunked). Stops after `cut` payload bytes. Reports the payload bytes of each completed
    /// write to `flow`. Returns `false` if the peer went away or the server is stopping.
    private func writeBody(_ body: ResponseBody, pacing: Pacing, chunkSize: Int?, cut: Int?, flow: ResponseFlow?) -> Bool {
        let total = body.count
        let end = min(total, cut ?? total)
        let started = DispatchTime.now().uptimeNanoseconds
        var unitIndex = 0
        var offset = 0
        var pacer: RatePacer?
        if case .rate(let rate, _) = pacing { pacer = RatePacer(bytesPerSecond: rate) }
        var rateDivisor = 1
        while offset < total {
            // Bounds of the current paced write, and the pause before it.
            let unitEnd: Int
            switch pacing {
            case .none:
                unitEnd = total
            case .writes(let size, let delay):
                unitEnd = min(total, offset + max(1, size))
                // Watching the socket, as `rate` does: a client gone is seen now, not at the next write.
                if unitIndex > 0, delay > 0, !pause(milliseconds: delay) { return false }
            case .spread(let pieces, let duration):
                unitEnd = unitIndex + 1 >= pieces ? total : total / pieces * (unitIndex + 1) + min(unitIndex + 1, total % pieces)
                if unitIndex > 0 {
                    let due = duration * unitIndex / pieces
                    let elapsed = Int((DispatchTime.now().uptimeNanoseconds - started) / 1_000_000)
                    if due > elapsed, !stopSignal.sleep(milliseconds: due - elapsed) { return false }
                }
            case .rate(_, let size):
                unitEnd = min(total, offset + max(1, size))
                // Sleep (never spin) until the write's last byte is due; rounding up to whole
                // milliseconds means a write is never early.
                let due = pacer?.schedule(max(0, min(unitEnd, end) - offset), divisor: rateDivisor) ?? 0
                let elapsed = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
                if due > elapsed, !pause(milliseconds: Int(((due - elapsed) * 1000).rounded(.up))) { return false }
            }
            unitIndex += 1
            while offset < unitEnd {
                if offset >= end { return true }
                var pieceEnd = min(unitEnd, offset + Self.pieceSize)
                if let chunkSize { pieceEnd = min(unitEnd, (offset / chunkSize + 1) * chunkSize) }
                let data = body.bytes(in: offset..<pieceEnd)
                let sendCount = min(pieceEnd, end) - offset
                var wire = Data()
                if chunkSize != nil { wire.append(contentsOf: "\(String(pieceEnd - offset, radix: 16))\r\n".utf8) }
                wire.append(data.prefix(sendCount))
                if chunkSize != nil && sendCount == data.count { wire.append(contentsOf: "\r\n".utf8) }
                guard socket.sendAll(wire) else { return false }
                if let flow { rateDivisor = flow.served(sendCount) }
                offset = pieceEnd
            }
        }
        if chunkSize != nil, end == total { return socket.sendAll("0\r\n\r\n") }
        return true
    }
}

/// Where a ``ResponseStream`` writes: each `send` becomes one chunk on the wire, and pauses end
/// early when the server stops.
struct StreamOutput {
    let socket: Socket
    let stopSignal: StopSignal

    /// Sends `bytes` as one chunk (nothing for an empty array, which would end the body).
    /// Returns `false` if the peer went away or the server is stopping.
    func send(_ bytes: [UInt8]) -> Bool {
        guard !bytes.isEmpty else { return true }
        // One send per chunk: size line, payload and CRLF together.
        var wire = Array("\(String(bytes.count, radix: 16))\r\n".utf8)
        wire.reserveCapacity(wire.count + bytes.count + 2)
        wire.append(contentsOf: bytes)
        wire.append(contentsOf: [13, 10])
        return wire.withUnsafeBytes { socket.sendAll($0) }
    }

    /// Sleeps `milliseconds`; `false` if the server stopped first.
    func pause(milliseconds: Int) -> Bool {
        stopSignal.sleep(milliseconds: milliseconds)
    }
}
