// A response head cut short kills the process: "Transfer completed, but there's no response."
//
// Run: swiftc -O head-cut-short.swift -o /tmp/head && /tmp/head; echo "exit status $?"
//
// The server reads the request, sends the status line `HTTP/1.1 200 OK\r\n` and closes the
// connection (FIN). libcurl ends the transfer with CURLE_OK. FoundationNetworking builds its
// response only at the blank line that ends the head, so
// _NativeProtocol.transferCompleted(withError:) finds no response and calls fatalError.
//
// Expected: the completion handler gets an error. On 6.3.1 the process dies (SIGILL on x86_64)
// and the last line printed is the one before the request.

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

let reply = Array("HTTP/1.1 200 OK\r\n".utf8)
let port = startServer { fd in
    readRequestHead(fd)
    _ = reply.withUnsafeBytes { write(fd, $0.baseAddress!, $0.count) }
    close(fd)
}

let url = URL(string: "http://127.0.0.1:\(port)/")!
print("server on 127.0.0.1:\(port) answers `HTTP/1.1 200 OK\\r\\n` and closes")
print("GET / with a plain URLSession; if nothing follows this line, the process died")
let done = DispatchSemaphore(value: 0)
URLSession(configuration: .ephemeral).dataTask(with: url) { data, response, error in
    if let error = error as NSError? {
        print("completion: error \(error.domain) \(error.code): \(error.localizedDescription)")
    } else {
        print("completion: response \(String(describing: response)), \(data?.count ?? 0) bytes")
    }
    done.signal()
}.resume()
done.wait()
print("the process survived")
