#if canImport(Glibc)
import Glibc
#endif
import Foundation
internal import CourierSupport

/// The byte stream of a `ws://` WebSocket: a plain TCP socket, non-blocking, with `TCP_NODELAY`
/// (a WebSocket message is small and waits for no more data: Nagle would hold it for a delayed ACK).
///
/// Writes use `MSG_NOSIGNAL`: a peer that closed must not raise `SIGPIPE` and end the process.
final class TCPByteStream: WebSocketByteStream {
    /// The socket; readiness is waited on it by the driver's dispatch sources.
    let descriptor: Int32
    /// Whether ``close()`` ran: the descriptor is closed once, whatever calls it.
    private let isClosed = Locked(false)

    private init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit { close() }

    /// Resolves `host`, then connects to its addresses in order until one answers, all within
    /// `timeout`. Throws ``CourierError/Code-swift.struct/dnsFailed``,
    /// ``CourierError/Code-swift.struct/connectionRefused``, ``CourierError/Code-swift.struct/timedOut``
    /// or ``CourierError/Code-swift.struct/network``.
    ///
    /// `getaddrinfo` blocks, and so does the wait for the connect (`poll` on the one socket, no
    /// timer that wakes up to look): both run on a thread of their own rather than on a thread of
    /// the dispatch pool, which is only as wide as the CPUs.
    static func open(host: String, port: Int, timeout: Duration) async throws(CourierError) -> TCPByteStream {
        let deadline = ContinuousClock.now + timeout
        // The result crosses threads through a lock, not through the continuation: the lock
        // orders everything the connecting thread did (the stream's creation) before the reader,
        // in a way ThreadSanitizer sees (the Swift runtime's executor is not instrumented).
        let handoff = Locked<Result<TCPByteStream, CourierError>?>(nil)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let thread = Thread {
                let result = connect(host: host, port: port, deadline: deadline)
                handoff.set(result)
                continuation.resume()
            }
            thread.name = "courier websocket connect"
            thread.start()
        }
        guard let result = handoff.withLock({ $0 }) else {
            throw CourierError(code: .network, message: "connecting to \(host):\(port) ended without a result")
        }
        return try result.get()
    }

    private static func connect(host: String, port: Int, deadline: ContinuousClock.Instant) -> Result<TCPByteStream, CourierError> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_protocol = Int32(IPPROTO_TCP)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            let text = String(cString: gai_strerror(status))
            return .failure(CourierError(code: .dnsFailed, message: "the host name \(host) could not be resolved (\(text))"))
        }
        defer { freeaddrinfo(first) }
        var failure = CourierError(code: .network, message: "\(host) has no address to connect to")
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let info = cursor {
            cursor = info.pointee.ai_next
            let fd = socket(
                info.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else {
                failure = error(errno, "cannot make a socket", host: host, port: port)
                continue
            }
            var one: Int32 = 1
            _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            if Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) != 0 {
                let code = errno
                // EINTR: the connect goes on in the background, as with EINPROGRESS.
                guard code == EINPROGRESS || code == EINTR else {
                    Glibc.close(fd)
                    failure = error(code, "cannot connect", host: host, port: port)
                    continue
                }
                guard waitWritable(fd, until: deadline) else {
                    Glibc.close(fd)
                    return .failure(CourierError(code: .timedOut, message: "connecting to \(host):\(port) timed out"))
                }
                var pending: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                _ = getsockopt(fd, SOL_SOCKET, SO_ERROR, &pending, &length)
                if pending != 0 {
                    Glibc.close(fd)
                    failure = error(pending, "cannot connect", host: host, port: port)
                    continue
                }
            }
            return .success(TCPByteStream(descriptor: fd))
        }
        return .failure(failure)
    }

    /// Waits until `fd` is writable (the connect ended, well or not) or `deadline` passes.
    private static func waitWritable(_ fd: Int32, until deadline: ContinuousClock.Instant) -> Bool {
        while true {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return false }
            let milliseconds = Int32(clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1)
            var entry = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            let ready = poll(&entry, 1, milliseconds)
            if ready > 0 { return true }
            if ready < 0 && errno != EINTR { return true }  // SO_ERROR tells what went wrong.
        }
    }

    private static func error(_ code: Int32, _ what: String, host: String, port: Int) -> CourierError {
        let text = String(cString: strerror(code))
        let kind: CourierError.Code =
            switch code {
            case ECONNREFUSED: .connectionRefused
            case ENETUNREACH, EHOSTUNREACH: .networkUnreachable
            case ETIMEDOUT: .timedOut
            default: .network
            }
        return CourierError(
            code: kind, message: "\(what) to \(host):\(port) (\(text))", underlyingError: POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
        )
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws(CourierError) -> Int {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return 0 }
        while true {
            let sent = send(descriptor, base, bytes.count, Int32(MSG_NOSIGNAL))
            if sent >= 0 { return sent }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return 0
            case let code: throw lost(code, "writing")
            }
        }
    }

    /// A short `recv` emptied the socket's receive buffer: readiness shows anything that comes next.
    var shortReadDrains: Bool { true }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws(CourierError) -> ByteStreamRead {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return .wouldBlock }
        while true {
            let received = recv(descriptor, base, buffer.count, 0)
            if received > 0 { return .bytes(received) }
            if received == 0 { return .closed }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            case let code: throw lost(code, "reading")
            }
        }
    }

    private func lost(_ code: Int32, _ what: String) -> CourierError {
        CourierError(
            code: .connectionLost, message: "the WebSocket connection failed while \(what) (\(String(cString: strerror(code))))",
            underlyingError: POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO))
    }

    func close() {
        let first = isClosed.withLock { closed -> Bool in
            defer { closed = true }
            return !closed
        }
        if first { _ = Glibc.close(descriptor) }
    }
}
