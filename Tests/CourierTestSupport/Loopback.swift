import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Plain TCP on 127.0.0.1 for the helpers that start a server the tests do not own (`openssl
/// s_server`, nginx), which cannot be told to listen on port 0 and report it: a port the system
/// just gave out, and a blocking connection.
public enum Loopback {
    /// A socket call that failed, with its `errno`.
    public struct Failure: Error, CustomStringConvertible {
        /// What failed.
        public let description: String
    }

    /// A port nothing listens on right now, from the system (another process may take it before
    /// the caller does: callers try again on a clash).
    public static func freePort() throws(Failure) -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket failed: errno \(errno)") }
        defer { close(descriptor) }
        var address = address(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
            }
        }
        guard bound else { throw Failure(description: "bind failed: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// A blocking TCP connection to 127.0.0.1:`port`; the caller closes it.
    public static func connect(to port: Int) throws(Failure) -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket failed: errno \(errno)") }
        var address = address(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            let code = errno
            close(descriptor)
            throw Failure(description: "cannot connect to 127.0.0.1:\(port): errno \(code)")
        }
        return descriptor
    }

    private static func address(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}
