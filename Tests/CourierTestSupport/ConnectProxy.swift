import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// An HTTP proxy that only tunnels (`CONNECT host:port` to 127.0.0.1:port), one connection at a
/// time, on a thread of its own; it records each request line it reads.
public final class ConnectProxy: Sendable {
    /// The port it listens on, on 127.0.0.1.
    public let port: Int
    private let listener: Int32
    private let lines = Box<String>()

    /// Starts listening on a port the system gives; throws when it cannot.
    public init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 4) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        guard listener >= 0, bound else { throw POSIXError(.EADDRINUSE) }
        self.listener = listener
        port = Int(UInt16(bigEndian: address.sin_port))
        let lines = lines
        Thread.detachNewThread {
            while true {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }
                Self.serve(client, lines)
            }
        }
    }

    /// Names this proxy in the process's environment as `variable` (`https_proxy`, `http_proxy`),
    /// as libcurl reads it, with the other proxy variables and `no_proxy` cleared (a test runner's
    /// `no_proxy` names 127.0.0.1). Returns what puts the environment back.
    public func useFromEnvironment(as variable: String) -> @Sendable () -> Void {
        var saved: [(String, String?)] = []
        for name in ["http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"] {
            saved.append((name, ProcessInfo.processInfo.environment[name]))
            unsetenv(name)
        }
        setenv(variable, "http://127.0.0.1:\(port)", 1)
        let restore = saved
        return {
            for (name, value) in restore {
                if let value { setenv(name, value, 1) } else { unsetenv(name) }
            }
        }
    }

    /// The request line of each connection, in order.
    public var requestLines: [String] { lines.all }

    /// Ends the accept loop (a shut-down listener makes `accept` fail) and closes the listener.
    public func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private static func serve(_ client: Int32, _ lines: Box<String>) {
        defer { close(client) }
        var head: [UInt8] = []
        var byte: UInt8 = 0
        while !head.suffix(4).elementsEqual(Array("\r\n\r\n".utf8)), recv(client, &byte, 1, 0) == 1 { head.append(byte) }
        let line = String(decoding: head, as: UTF8.self).components(separatedBy: "\r\n").first ?? ""
        lines.append(line)
        let parts = line.split(separator: " ")
        guard parts.count == 3, parts[0] == "CONNECT", let port = parts[1].split(separator: ":").last.flatMap({ UInt16($0) }) else {
            _ = send(client, "HTTP/1.1 405 Only CONNECT\r\nContent-Length: 0\r\n\r\n", 45, Int32(MSG_NOSIGNAL))
            return
        }
        let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(upstream) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else { return }
        let established = Array("HTTP/1.1 200 Connection established\r\nProxy-Agent: courier-tests\r\n\r\n".utf8)
        _ = send(client, established, established.count, Int32(MSG_NOSIGNAL))
        // Relay both ways until either side closes.
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        var descriptors = [pollfd(fd: client, events: Int16(POLLIN), revents: 0), pollfd(fd: upstream, events: Int16(POLLIN), revents: 0)]
        while poll(&descriptors, 2, 10_000) > 0 {
            for (index, descriptor) in descriptors.enumerated() where descriptor.revents != 0 {
                let count = recv(descriptor.fd, &buffer, buffer.count, 0)
                guard count > 0 else { return }
                let other = descriptors[1 - index].fd
                var sent = 0
                while sent < count {
                    let written = buffer[sent..<count].withUnsafeBytes { send(other, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    guard written > 0 else { return }
                    sent += written
                }
            }
        }
    }
}
