/// What a read from a byte stream gave.
enum ByteStreamRead: Sendable, Equatable { case bytes(Int), wouldBlock, closed }

/// A connected, non-blocking, two-way byte stream a WebSocket runs over: plain TCP (`TCPByteStream`) or libcurl's
/// TLS connection (`CurlByteStream`). Readiness: wait on `descriptor` (read/write), then call `read`/`write` until
/// `.wouldBlock`/0 — a TLS stream may hold decrypted bytes the descriptor does not show, so after readiness the
/// caller always reads until `.wouldBlock`.
protocol WebSocketByteStream: AnyObject, Sendable {
    var descriptor: Int32 { get }
    /// Bytes taken from `bytes` (0 when the stream would block).
    func write(_ bytes: UnsafeRawBufferPointer) throws(CourierError) -> Int
    /// As `write`, but 0 at once, writing nothing, where the stream would first wait for another
    /// thread's call on it (a `send` on its own thread then leaves the frame to the driver's queue).
    func writeWithoutWaiting(_ bytes: UnsafeRawBufferPointer) throws(CourierError) -> Int
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(CourierError) -> ByteStreamRead
    /// Asked right after a read that filled less than its buffer: whether it took all there was
    /// (a plain socket; a TLS stream whose library holds nothing more), so the reader can wait for
    /// readiness without another read to see `.wouldBlock`.
    var shortReadDrains: Bool { get }
    /// Closes the connection; idempotent.
    func close()
}

extension WebSocketByteStream {
    /// Read again until `.wouldBlock`: the safe answer for a stream that buffers.
    var shortReadDrains: Bool { false }

    /// A stream whose calls never wait for one another (a TCP socket) just writes.
    func writeWithoutWaiting(_ bytes: UnsafeRawBufferPointer) throws(CourierError) -> Int {
        try write(bytes)
    }
}
