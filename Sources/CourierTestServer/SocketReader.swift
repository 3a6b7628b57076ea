/// Buffered reading from one connection. Bytes read past the current request stay buffered
/// for the next one (pipelining).
struct SocketReader {
    let socket: Socket
    private var storage: [UInt8] = []
    private var start = 0
    private var scratch = [UInt8](repeating: 0, count: 64 * 1024)

    init(socket: Socket) {
        self.socket = socket
    }

    /// Bytes buffered but not yet consumed.
    var bufferedCount: Int { storage.count - start }

    /// Reads more bytes from the socket into the buffer. Returns `false` at end of stream or on error.
    private mutating func fill() -> Bool {
        if start > 0 && start == storage.count {
            storage.removeAll(keepingCapacity: true)
            start = 0
        } else if start > 64 * 1024 && start * 2 > storage.count {
            storage.removeSubrange(0..<start)
            start = 0
        }
        let count = scratch.withUnsafeMutableBytes { socket.receive(into: $0) }
        guard count > 0 else { return false }
        storage.append(contentsOf: scratch[0..<count])
        return true
    }

    /// The outcome of reading a head.
    enum HeadResult {
        /// The head, including its final empty line.
        case head(ArraySlice<UInt8>)
        /// The peer closed (or errored) before sending anything: a normal end of a keep-alive connection.
        case endOfStream
        /// The peer closed in the middle of a head.
        case truncated
        /// No end of head within `limit` bytes.
        case tooLarge
    }

    /// Reads up to and including the empty line that ends a head. Empty lines before a request
    /// line are skipped, as RFC 9112 asks of servers.
    mutating func readHead(limit: Int) -> HeadResult {
        var scanned = 0
        while true {
            while start < storage.count,
                storage[start] == UInt8(ascii: "\n")
                    || (storage[start] == UInt8(ascii: "\r") && start + 1 < storage.count && storage[start + 1] == UInt8(ascii: "\n"))
            {
                start += storage[start] == UInt8(ascii: "\n") ? 1 : 2
                scanned = 0
            }
            if let end = findTerminator(from: start + max(0, scanned - 3)) {
                guard end - start <= limit else { return .tooLarge }
                let head = storage[start..<end]
                start = end
                return .head(head)
            }
            scanned = storage.count - start
            if scanned > limit { return .tooLarge }
            if !fill() { return scanned == 0 ? .endOfStream : .truncated }
        }
    }

    /// The index just past the first CRLFCRLF at or after `from`.
    private func findTerminator(from: Int) -> Int? {
        var index = max(from, start)
        while index + 3 < storage.count {
            if storage[index] == 13, storage[index + 1] == 10, storage[index + 2] == 13, storage[index + 3] == 10 {
                return index + 4
            }
            index += 1
        }
        return nil
    }

    /// The outcome of reading a line.
    enum LineResult {
        case line(ArraySlice<UInt8>)
        case endOfStream
        case tooLong
    }

    /// Reads one CRLF-terminated line (returned without the CRLF).
    mutating func readLine(limit: Int) -> LineResult {
        var scanFrom = start
        while true {
            var index = scanFrom
            while index + 1 < storage.count {
                if storage[index] == 13 && storage[index + 1] == 10 {
                    let line = storage[start..<index]
                    start = index + 2
                    return .line(line)
                }
                index += 1
            }
            if storage.count - start > limit { return .tooLong }
            scanFrom = max(start, storage.count - 1)
            let offset = scanFrom - start
            if !fill() { return .endOfStream }
            scanFrom = start + offset
        }
    }

    /// Consumes exactly `count` bytes, handing them to `body` piece by piece without keeping
    /// them. Returns `false` if the stream ended first.
    mutating func consume(_ count: Int, _ body: (UnsafeRawBufferPointer) -> Void) -> Bool {
        var remaining = count
        while remaining > 0 {
            if start < storage.count {
                let take = min(remaining, storage.count - start)
                storage[start..<(start + take)].withUnsafeBytes(body)
                start += take
                remaining -= take
                continue
            }
            // Nothing buffered: receive straight into the scratch buffer, so a huge discarded
            // body never grows `storage`.
            let want = min(remaining, scratch.count)
            let received = scratch.withUnsafeMutableBytes { socket.receive(into: UnsafeMutableRawBufferPointer(rebasing: $0[0..<want])) }
            guard received > 0 else { return false }
            scratch[0..<received].withUnsafeBytes(body)
            remaining -= received
        }
        return true
    }

    /// Reads and drops whatever the peer sends until it closes, for at most `timeoutMilliseconds`
    /// in total (or until `stopSignal` fires). Used before closing so unread input does not turn
    /// our FIN into an RST that could destroy the response in flight.
    mutating func drain(timeoutMilliseconds: Int, stopSignal: StopSignal) {
        storage.removeAll()
        start = 0
        let deadline = ContinuousClock.now + .milliseconds(timeoutMilliseconds)
        while ContinuousClock.now < deadline {
            let left = deadline - ContinuousClock.now
            let milliseconds = Int(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)
            guard stopSignal.waitReadable(socket.fd, timeoutMilliseconds: max(1, milliseconds)) == .readable else { return }
            let received = scratch.withUnsafeMutableBytes { socket.receive(into: $0) }
            if received <= 0 { return }
        }
    }
}
