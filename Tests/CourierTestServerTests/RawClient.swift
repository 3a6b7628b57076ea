#if canImport(Glibc)
import Glibc
#endif
import Foundation
import XCTest

/// A failure of the raw test client (connect error, timeout, malformed response).
struct RawClientError: Error, CustomStringConvertible {
    let description: String
}

/// A response as read off the wire by ``RawClient``.
struct RawResponse {
    /// The status code, e.g. 200.
    let status: Int
    /// The status line, e.g. `HTTP/1.1 200 OK`.
    let statusLine: String
    /// Header fields in order.
    let headers: [(name: String, value: String)]
    /// The body (de-chunked when the response was chunked).
    let body: Data
    /// Whether the connection closed before the declared Content-Length (or the final chunk) arrived.
    let truncated: Bool
    /// Whether the body used chunked transfer coding.
    let wasChunked: Bool

    /// The first header named `name`, case-insensitively.
    func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// Every header named `name`, case-insensitively.
    func headerValues(_ name: String) -> [String] {
        headers.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
    }

    /// The body as UTF-8 text.
    var text: String { String(decoding: body, as: UTF8.self) }

    /// The body parsed as a JSON object.
    func json(file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed])
        return try XCTUnwrap(object as? [String: Any], "body is not a JSON object: \(text)", file: file, line: line)
    }
}

/// A tiny blocking HTTP/1.1 client over a raw loopback socket. Every read has a receive
/// timeout, so a misbehaving server fails the test instead of hanging it.
final class RawClient {
    let port: UInt16
    private var fd: Int32
    private var buffer: [UInt8] = []
    /// Whether the connection ended with a reset (RST) rather than an orderly close.
    private(set) var sawReset = false

    /// Connects to 127.0.0.1:`port` with a receive timeout of `timeout` seconds.
    init(port: UInt16, timeout: TimeInterval = 10) throws {
        self.port = port
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RawClientError(description: "socket failed: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else {
            let code = errno
            Glibc.close(fd)
            throw RawClientError(description: "connect failed: errno \(code)")
        }
        setTimeout(timeout)
    }

    deinit { close() }

    /// Changes the receive timeout.
    func setTimeout(_ seconds: TimeInterval) {
        var value = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - seconds.rounded(.down)) * 1_000_000))
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Closes the socket (idempotent).
    func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    /// Half-closes the connection: no more data will be sent.
    func shutdownWrite() {
        _ = shutdown(fd, Int32(SHUT_WR))
    }

    /// Sends raw bytes.
    func send(_ data: Data) throws {
        try data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            var offset = 0
            while offset < bytes.count {
                let n = Glibc.send(fd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
                guard n > 0 else { throw RawClientError(description: "send failed: errno \(errno)") }
                offset += n
            }
        }
    }

    /// Sends a string as UTF-8.
    func send(_ text: String) throws {
        try send(Data(text.utf8))
    }

    /// Sends a request built from parts; adds Host and, when there is a body, Content-Length.
    func sendRequest(_ method: String = "GET", _ target: String, headers: [(String, String)] = [], body: Data? = nil) throws {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let body { head += "Content-Length: \(body.count)\r\n" }
        var data = Data((head + "\r\n").utf8)
        if let body { data.append(body) }
        try send(data)
    }

    /// Sends a request and reads its response.
    func request(_ method: String = "GET", _ target: String, headers: [(String, String)] = [], body: Data? = nil) throws -> RawResponse {
        try sendRequest(method, target, headers: headers, body: body)
        return try readResponse(isHead: method == "HEAD")
    }

    /// Receives more bytes into the buffer; returns false at end of stream. Throws on timeout.
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n > 0 {
            buffer.append(contentsOf: chunk[0..<n])
            return true
        }
        if n == 0 { return false }
        if errno == ECONNRESET {
            sawReset = true
            return false
        }
        throw RawClientError(description: errno == EAGAIN ? "timed out waiting for the server" : "recv failed: errno \(errno)")
    }

    /// Reads through the next CRLF (or CRLFCRLF when `terminator` says so); nil if the stream ends first.
    private func readUntil(_ terminator: [UInt8]) throws -> [UInt8]? {
        var searchFrom = 0
        while true {
            if buffer.count >= terminator.count {
                for index in searchFrom...(buffer.count - terminator.count)
                where buffer[index..<(index + terminator.count)].elementsEqual(terminator) {
                    let result = Array(buffer[0..<(index + terminator.count)])
                    buffer.removeFirst(index + terminator.count)
                    return result
                }
                searchFrom = buffer.count - terminator.count + 1
            }
            guard try fill() else { return nil }
        }
    }

    /// Reads `count` bytes, or fewer if the stream ends.
    private func read(count: Int) throws -> [UInt8] {
        while buffer.count < count {
            guard try fill() else { break }
        }
        let take = min(count, buffer.count)
        defer { buffer.removeFirst(take) }
        return Array(buffer[0..<take])
    }

    /// Reads one response. `isHead` means the response has no body whatever its headers say.
    func readResponse(isHead: Bool = false) throws -> RawResponse {
        guard let headBytes = try readUntil(Array("\r\n\r\n".utf8)) else {
            throw RawClientError(description: "connection closed before a response head (buffered: \(buffer.count) bytes)")
        }
        let lines = String(decoding: headBytes, as: UTF8.self).components(separatedBy: "\r\n").filter { !$0.isEmpty }
        guard let statusLine = lines.first, statusLine.hasPrefix("HTTP/1."),
            let status = Int(statusLine.split(separator: " ")[1])
        else {
            throw RawClientError(description: "bad status line in \(lines)")
        }
        let headers: [(name: String, value: String)] = lines.dropFirst().map { line in
            let colon = line.firstIndex(of: ":") ?? line.endIndex
            return (String(line[..<colon]), line[colon...].dropFirst().trimmingCharacters(in: .whitespaces))
        }
        func header(_ name: String) -> String? {
            headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
        }
        if isHead || (100..<200).contains(status) || status == 204 || status == 304 {
            return RawResponse(status: status, statusLine: statusLine, headers: headers, body: Data(), truncated: false, wasChunked: false)
        }
        if header("Transfer-Encoding")?.lowercased() == "chunked" {
            var body = Data()
            while true {
                guard let sizeLine = try readUntil([13, 10]),
                    let size = Int(String(decoding: sizeLine.dropLast(2), as: UTF8.self).split(separator: ";")[0], radix: 16)
                else {
                    return RawResponse(
                        status: status, statusLine: statusLine, headers: headers, body: body, truncated: true, wasChunked: true)
                }
                let data = try read(count: size + 2)
                body.append(contentsOf: data.prefix(size))
                if data.count < size + 2 {
                    return RawResponse(
                        status: status, statusLine: statusLine, headers: headers, body: body, truncated: true, wasChunked: true)
                }
                if size == 0 {
                    return RawResponse(
                        status: status, statusLine: statusLine, headers: headers, body: body, truncated: false, wasChunked: true)
                }
            }
        }
        if let lengthText = header("Content-Length"), let length = Int(lengthText) {
            let body = try read(count: length)
            return RawResponse(
                status: status, statusLine: statusLine, headers: headers, body: Data(body),
                truncated: body.count < length, wasChunked: false)
        }
        return RawResponse(
            status: status, statusLine: statusLine, headers: headers, body: try readToEnd(), truncated: false, wasChunked: false)
    }

    /// Reads everything until the server closes.
    func readToEnd() throws -> Data {
        while try fill() {}
        defer { buffer.removeAll() }
        return Data(buffer)
    }

    /// Whether the server has closed the connection (end of stream, or reset) within `timeout`
    /// seconds, with no further bytes arriving.
    func serverClosed(within timeout: TimeInterval) -> Bool {
        setTimeout(timeout)
        defer { setTimeout(10) }
        guard buffer.isEmpty else { return false }
        return (try? fill()) == false
    }
}
