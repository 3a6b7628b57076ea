// A transfer that waits keeps a core busy: FoundationNetworking keeps a write source that libcurl
// no longer asks for (URLSession._MultiHandle.register(socket:for:what:socketSourcePtr:) and
// _SocketSources.createSources(with:handle:socket:queue:handler:) only ever add sources).
//
// Run: swiftc -O stale-write-source.swift -o /tmp/stale && /tmp/stale
//
// It starts a small HTTP/1.1 server on 127.0.0.1 (a port the kernel picks), makes four requests
// with a plain URLSession, one after the other, and prints the wall time and the process's CPU
// time (getrusage, user + system) for each. Every reply is held back for about 3 s.
//
//   1. GET, head after 3 s, new connection         libcurl asked OUT (connect), then IN
//   2. GET, head after 3 s, same connection reused  libcurl asked IN only
//   3. POST of 1 MB, head after 3 s, reused         libcurl asked OUT (body), then IN
//   4. GET, head at once, 10 body bytes over 3 s, new connection
//
// Expected: each wait costs next to no CPU. On 6.3.1, 1, 3 and 4 cost most of a core.

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Glibc

setvbuf(stdout, nil, _IONBF, 0)

// MARK: - The server

/// Listens on 127.0.0.1, port 0; runs `serve` on a new thread for each connection.
func startServer(_ serve: @escaping (Int32, Int) -> Void) -> UInt16 {
    let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    precondition(listener >= 0, "socket")
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
            precondition(bind(listener, raw, length) == 0, "bind")
            precondition(getsockname(listener, raw, &length) == 0, "getsockname")
        }
    }
    precondition(listen(listener, 16) == 0, "listen")
    Thread {
        var count = 0
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { continue }
            count += 1
            let number = count
            Thread { serve(connection, number) }.start()
        }
    }.start()
    return UInt16(bigEndian: address.sin_port)
}

/// Reads one request, its body included (Content-Length only). Returns the head, or nil at EOF.
func readRequest(_ fd: Int32) -> String? {
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    let blankLine: [UInt8] = [13, 10, 13, 10]
    while true {
        if bytes.count >= 4, let end = (0...(bytes.count - 4)).first(where: { Array(bytes[$0..<($0 + 4)]) == blankLine }) {
            let head = String(decoding: bytes[..<end], as: UTF8.self)
            let lengthLine = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
            let bodyLength = lengthLine.flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
            var received = bytes.count - (end + 4)
            while received < bodyLength {
                let count = read(fd, &chunk, chunk.count)
                if count <= 0 { return nil }
                received += count
            }
            return head
        }
        let count = read(fd, &chunk, chunk.count)
        if count <= 0 { return nil }
        bytes += chunk[..<count]
    }
}

func send(_ fd: Int32, _ text: String) {
    let bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
        let count = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, bytes.count - offset) }
        if count <= 0 { return }
        offset += count
    }
}

/// `/delay/MS`: the whole reply after MS ms. `/drip/MS`: the head at once, then 10 body bytes
/// spread over MS ms. `?close`: close the connection after the reply; otherwise keep it open.
let port = startServer { fd, connection in
    while let head = readRequest(fd) {
        let target = head.split(separator: " ")[1]
        let path = target.split(separator: "?")[0].split(separator: "/")
        let milliseconds = path.count == 2 ? Int(path[1]) ?? 0 : 0
        let close = target.hasSuffix("?close")
        let fields = "X-Connection: \(connection)\r\n" + (close ? "Connection: close\r\n" : "")
        if path.first == "drip" {
            send(fd, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\(fields)\r\n")
            for _ in 0..<10 {
                usleep(useconds_t(milliseconds * 100))
                send(fd, "x")
            }
        } else {
            usleep(useconds_t(milliseconds * 1000))
            send(fd, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\(fields)\r\nok")
        }
        if close { break }
    }
    close(fd)
}

// MARK: - The client

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
}

let session = URLSession(configuration: .ephemeral)

/// Written by the completion handler before it signals, read after the wait.
final class Outcome: @unchecked Sendable {
    var text = ""
}

func measure(_ label: String, _ target: String, body: Int = 0) {
    var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(target)")!)
    if body > 0 {
        request.httpMethod = "POST"
        request.httpBody = Data(count: body)
    }
    let done = DispatchSemaphore(value: 0)
    let outcome = Outcome()
    let cpuBefore = cpuSeconds()
    let start = Date()
    session.dataTask(with: request) { data, response, error in
        if let response = response as? HTTPURLResponse {
            let connection = response.value(forHTTPHeaderField: "X-Connection") ?? "?"
            outcome.text = "status \(response.statusCode), \(data?.count ?? 0) body bytes, server connection \(connection)"
        } else {
            outcome.text = "error \(error.map { "\($0)" } ?? "none")"
        }
        done.signal()
    }.resume()
    done.wait()
    let wall = Date().timeIntervalSince(start)
    let cpu = cpuSeconds() - cpuBefore
    print(label)
    print(String(format: "   wall %.2f s, CPU %.2f s (%.2f of a core); %@", wall, cpu, cpu / wall, outcome.text))
}

print("FoundationNetworking on this machine; server on 127.0.0.1:\(port)")
measure("1. GET, head after 3 s, new connection", "/delay/3000")
measure("2. GET, head after 3 s, same connection reused", "/delay/3000")
measure("3. POST 1 MB, head after 3 s, same connection reused", "/delay/3000?close", body: 1_000_000)
measure("4. GET, head at once, 10 body bytes over 3 s, new connection", "/drip/3000")
