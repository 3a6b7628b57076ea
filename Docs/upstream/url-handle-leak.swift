// Every transfer leaks the parsed parts of its URL (about 53 bytes in 4 blocks a request).
//
// Run under valgrind:
//   swiftc -O url-handle-leak.swift -o /tmp/leak && valgrind --leak-check=full /tmp/leak
//
// _EasyHandle.set(url:) checks the URL's host with CFURLSessionCurlHostIsEqual, which makes a
// libcurl URL handle with curl_url(), parses the URL into it with curl_url_set(), and releases it
// with curl_free() instead of curl_url_cleanup(). The handle's parts (scheme, host, path, query)
// are never freed.
//
// Expected: "definitely lost: 0 bytes". On 6.3.1 the loss grows with the number of requests, all
// of it under curl_url_set called from CFURLSessionCurlHostIsEqual.

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Glibc

setvbuf(stdout, nil, _IONBF, 0)

/// Listens on 127.0.0.1, port 0; runs `serve` on its own thread for each connection.
func startServer(_ serve: @escaping (Int32) -> Void) -> UInt16 {
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
        while true {
            let connection = accept(listener, nil, nil)
            if connection >= 0 { serve(connection) }
        }
    }.start()
    return UInt16(bigEndian: address.sin_port)
}

/// Reads until the blank line that ends the request head (a GET has no body). All of the request
/// is read before the reply, so closing sends FIN, not RST.
func readRequestHead(_ fd: Int32) {
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while !bytes.suffix(4).elementsEqual([13, 10, 13, 10]) {
        let count = read(fd, &chunk, chunk.count)
        if count <= 0 { return }
        bytes += chunk[..<count]
    }
}

let reply = Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".utf8)
let port = startServer { fd in
    // One request per connection, then close: enough for the leak, which is per transfer.
    readRequestHead(fd)
    _ = reply.withUnsafeBytes { write(fd, $0.baseAddress!, $0.count) }
    close(fd)
}

let requests = Int(CommandLine.arguments.dropFirst().first ?? "") ?? 300
let session = URLSession(configuration: .ephemeral)
for index in 0..<requests {
    let done = DispatchSemaphore(value: 0)
    let url = URL(string: "http://127.0.0.1:\(port)/item/\(index)?page=\(index)")!
    session.dataTask(with: url) { _, _, error in
        if let error { print("request \(index): \(error)") }
        done.signal()
    }.resume()
    done.wait()
}
session.finishTasksAndInvalidate()
print("\(requests) requests done; read valgrind's \"definitely lost\" line")
