#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A thin wrapper over a TCP socket file descriptor.
///
/// The wrapper does not own the descriptor: whoever created it decides when `close()` is
/// called. That keeps it a plain copyable value that can cross threads (it is just an `Int32`).
struct Socket: Sendable {
    /// The underlying file descriptor.
    let fd: Int32

    /// Creates a TCP socket bound to `host`:`port` and listening with `backlog`.
    /// Returns the socket together with the port actually bound (read back with `getsockname`).
    static func listen(host: String, port: UInt16, backlog: Int32) throws -> (socket: Socket, port: UInt16) {
        guard let address = SocketAddress(host: host, port: port) else {
            throw TestServerError(message: "cannot use '\(host)' as a listening address (IPv4/IPv6 literal or localhost)", code: EINVAL)
        }
        let fd = Glibc.socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestServerError.posix("socket", errno) }
        let socket = Socket(fd: fd)
        do {
            socket.setOption(SOL_SOCKET, SO_REUSEADDR, 1)
            try address.withSockAddr { pointer, length in
                guard bind(fd, pointer, length) == 0 else { throw TestServerError.posix("bind", errno) }
            }
            guard Glibc.listen(fd, backlog) == 0 else { throw TestServerError.posix("listen", errno) }
            return (socket, try socket.localPort())
        } catch {
            socket.close()
            throw error
        }
    }

    /// The local port, read back with `getsockname`.
    func localPort() throws -> UInt16 {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let rc = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard rc == 0 else { throw TestServerError.posix("getsockname", errno) }
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
            }
        case AF_INET6:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) }
            }
        default:
            throw TestServerError(message: "getsockname returned an unknown address family", code: EAFNOSUPPORT)
        }
    }

    /// The result of one `accept` call.
    enum AcceptResult {
        case accepted(Socket)
        /// A transient failure (aborted handshake, descriptor exhaustion): try again.
        case retry
        /// The listener is unusable (closed or shut down).
        case failed
    }

    /// Accepts one connection (blocking); the new descriptor is made close-on-exec.
    /// (`accept4` is a GNU extension the Glibc module does not import.)
    func accept() -> AcceptResult {
        let client = Glibc.accept(fd, nil, nil)
        if client >= 0 {
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            return .accepted(Socket(fd: client))
        }
        switch errno {
        case EINTR, ECONNABORTED, EAGAIN, EMFILE, ENFILE, ENOBUFS, ENOMEM, EPROTO, EPERM:
            return .retry
        default:
            return .failed
        }
    }

    /// Receives up to `buffer.count` bytes. Returns the count, 0 at end of stream, -1 on error.
    func receive(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        while true {
            let n = recv(fd, base, buffer.count, 0)
            if n < 0 && errno == EINTR { continue }
            return n
        }
    }

    /// Sends every byte, retrying partial writes. `MSG_NOSIGNAL` turns a peer that hung up into
    /// an `EPIPE` error instead of a process-killing SIGPIPE.
    @discardableResult
    func sendAll(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        var offset = 0
        while offset < bytes.count {
            let n = send(fd, base + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            if n > 0 {
                offset += n
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                return false
            }
        }
        return true
    }

    /// Sends all of `data`.
    @discardableResult
    func sendAll(_ data: Data) -> Bool {
        data.withUnsafeBytes { sendAll($0) }
    }

    /// Sends the UTF-8 bytes of `string`.
    @discardableResult
    func sendAll(_ string: String) -> Bool {
        var copy = string
        return copy.withUTF8 { sendAll(UnsafeRawBufferPointer($0)) }
    }

    /// Whether the peer has closed or reset the connection, without waiting and without taking
    /// any bytes it sent (a pipelined request stays for the reader).
    func peerHasHungUp() -> Bool {
        var byte: UInt8 = 0
        while true {
            let n = recv(fd, &byte, 1, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT))
            if n < 0 && errno == EINTR { continue }
            if n > 0 { return false }
            return n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)
        }
    }

    /// Sets an integer socket option; failures are ignored (all uses are best-effort tuning).
    func setOption(_ level: Int32, _ name: Int32, _ value: Int32) {
        var value = value
        _ = setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Disables Nagle so a head and a small body written separately do not wait for a delayed ACK.
    func setNoDelay() {
        setOption(Int32(IPPROTO_TCP), TCP_NODELAY, 1)
    }

    /// Makes the next `close()` abort the connection with an RST instead of a FIN.
    func setAbortiveClose() {
        var value = linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &value, socklen_t(MemoryLayout<linger>.size))
    }

    /// Shuts down both directions, waking any thread blocked in `recv`/`send` on this socket.
    /// Whether the peer's FIN (or a reset) has arrived, without waiting or reading.
    var peerHasClosed: Bool {
        // POLLRDHUP (0x2000, Linux) is declared only with _GNU_SOURCE, which Swift's Glibc lacks.
        let readHangUp: Int16 = 0x2000
        var descriptor = pollfd(fd: fd, events: readHangUp, revents: 0)
        guard poll(&descriptor, 1, 0) == 1 else { return false }
        return descriptor.revents & (readHangUp | Int16(POLLHUP) | Int16(POLLERR)) != 0
    }

    func shutdownBoth() {
        _ = Glibc.shutdown(fd, Int32(SHUT_RDWR))
    }

    /// Shuts down the sending direction (sends FIN) while still allowing reads.
    func shutdownWrite() {
        _ = Glibc.shutdown(fd, Int32(SHUT_WR))
    }

    /// Closes the descriptor.
    func close() {
        _ = Glibc.close(fd)
    }
}

/// An IPv4 or IPv6 socket address parsed from a numeric host (or `localhost`).
enum SocketAddress {
    case v4(sockaddr_in)
    case v6(sockaddr_in6)

    /// Parses `host` (`localhost`, an IPv4 literal, or an IPv6 literal with or without brackets).
    init?(host: String, port: UInt16) {
        var name = host
        if name == "localhost" { name = "127.0.0.1" }
        if name.hasPrefix("[") && name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        var v4 = in_addr()
        if inet_pton(AF_INET, name, &v4) == 1 {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr = v4
            self = .v4(address)
            return
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, name, &v6) == 1 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            address.sin6_addr = v6
            self = .v6(address)
            return
        }
        return nil
    }

    /// The address family (`AF_INET` or `AF_INET6`).
    var family: Int32 {
        switch self {
        case .v4: return AF_INET
        case .v6: return AF_INET6
        }
    }

    /// Calls `body` with a `sockaddr` pointer and its length.
    func withSockAddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws -> R) rethrows -> R {
        switch self {
        case .v4(var address):
            return try withUnsafePointer(to: &address) {
                try $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    try body($0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        case .v6(var address):
            return try withUnsafePointer(to: &address) {
                try $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    try body($0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        }
    }
}
