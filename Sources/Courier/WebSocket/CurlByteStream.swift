import Foundation
internal import CCourierPlatformFixes
internal import CourierSupport

/// The connection a `wss://` WebSocket runs over: libcurl (the system's, the one
/// FoundationNetworking uses) connects — TCP, a proxy tunnel, the TLS handshake with the URL's
/// TLS policy — and then hands the connection over (`CURLOPT_CONNECT_ONLY`); `curl_easy_recv` and
/// `curl_easy_send` move the bytes, never blocking (Docs/WebSocket.md, "wss:// on the system
/// libcurl"). Made by ``open(url:tls:timeout:)``.
///
/// Thread-safe: a libcurl handle must not be used by two threads at once, so every call on it is
/// made under the one lock (each call returns at once: the socket is non-blocking).
final class CurlByteStream: WebSocketByteStream {
    /// The connection's socket, for readiness. Closed by ``close()``: wait on it only while the
    /// stream is open.
    let descriptor: Int32
    /// The URL the stream was opened for, for errors.
    let url: URL
    /// The server and its TLS policy, for TLS errors.
    let tls: TLSContext?

    private struct State {
        /// `nil` once closed.
        var stream: OpaquePointer?
    }
    private let state: Locked<State>

    init(stream: OpaquePointer, descriptor: Int32, url: URL, tls: TLSContext?) {
        self.descriptor = descriptor
        self.url = url
        self.tls = tls
        state = Locked(State(stream: stream))
    }

    deinit { close() }

    /// What one libcurl call gave, decided under the lock and turned into an error outside it.
    private enum Outcome {
        case done(Int)
        case wouldBlock
        case closed
        case failed(code: Int32, text: String)
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws(CourierError) -> Int {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return 0 }
        return try finish(write: state.withLock { Self.send(base, bytes.count, on: $0) })
    }

    /// 0 without calling libcurl when a read on the driver's queue holds the handle: the sender
    /// does not wait behind it (the queue writes the frame after its read).
    func writeWithoutWaiting(_ bytes: UnsafeRawBufferPointer) throws(CourierError) -> Int {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return 0 }
        guard let outcome = state.withLockIfAvailable({ Self.send(base, bytes.count, on: $0) }) else { return 0 }
        return try finish(write: outcome)
    }

    /// One `courier_stream_send`, under the lock.
    private static func send(_ base: UnsafeRawPointer, _ count: Int, on state: State) -> Outcome {
        guard let stream = state.stream else { return .closed }
        var taken = 0
        let code = courier_stream_send(stream, base, count, &taken)
        switch code {
        case Int32(COURIER_STREAM_OK): return .done(taken)
        case Int32(COURIER_STREAM_AGAIN): return .wouldBlock
        default: return .failed(code: code, text: String(cString: courier_stream_error(stream)))
        }
    }

    /// A write's outcome as bytes taken, or its error (outside the lock).
    private func finish(write outcome: Outcome) throws(CourierError) -> Int {
        switch outcome {
        case .done(let taken): return taken
        case .wouldBlock: return 0
        case .closed:
            throw CourierError(code: .connectionLost, message: "the WebSocket connection was already closed", url: url)
        case .failed(code: -1, _):
            throw CourierError(
                code: .invalidRequest,
                message: "a write after one the socket blocked must start with the same bytes (OpenSSL holds them in a record)",
                url: url)
        case .failed(let code, let text):
            throw Self.error(curlCode: code, text: text, url: url, tls: tls)
        }
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws(CourierError) -> ByteStreamRead {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return .wouldBlock }
        let outcome = state.withLock { state -> Outcome in
            guard let stream = state.stream else { return .closed }
            var received = 0
            let code = courier_stream_recv(stream, base, buffer.count, &received)
            switch code {
            case Int32(COURIER_STREAM_OK): return received == 0 ? .closed : .done(received)
            case Int32(COURIER_STREAM_AGAIN): return .wouldBlock
            default: return .failed(code: code, text: String(cString: courier_stream_error(stream)))
            }
        }
        switch outcome {
        case .done(let count): return .bytes(count)
        case .wouldBlock: return .wouldBlock
        case .closed: return .closed
        case .failed(let code, let text): throw Self.error(curlCode: code, text: text, url: url, tls: tls)
        }
    }

    /// After a short read, whether OpenSSL holds nothing more (`SSL_has_pending`): libcurl hands a
    /// `CONNECT_ONLY` read straight to OpenSSL, which reads the socket itself (a record's header,
    /// then its body), so what comes next is in the socket. One `recv` less per message than
    /// reading on to `EAGAIN`. `false` (read on) where OpenSSL cannot be asked.
    var shortReadDrains: Bool {
        state.withLock { state in
            guard let stream = state.stream else { return false }
            return courier_stream_tls_drained(stream) != 0
        }
    }

    func close() {
        // Taken out under the lock, freed outside it: a second close finds nothing.
        let stream = state.withLock { state -> OpaquePointer? in
            defer { state.stream = nil }
            return state.stream
        }
        if let stream { courier_stream_free(stream) }
    }
}
