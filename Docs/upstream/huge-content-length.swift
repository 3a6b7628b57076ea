// A Content-Length from 2^63 - 512 up to 2^63 - 1 kills the process.
//
// Run: swiftc -O huge-content-length.swift -o /tmp/length && /tmp/length; echo "exit status $?"
//
// The header callback that _EasyHandle.setupCallbacks() installs reads the announced length
// with CURLINFO_CONTENT_LENGTH_DOWNLOAD, a Double, and _EasyHandle.didReceive(headerData:size:
// nmemb:contentLength:) converts it with Int64(contentLength). Every length from 2^63 - 512 up
// rounds to the Double 2^63, which Int64(_:) cannot hold, so it traps.
//
// The program makes two requests with a plain URLSession. The first announces 2^63 - 513, whose
// Double is 2^63 - 1024: nothing traps, and the transfer fails in the ordinary way when the
// server closes. The second announces 2^63 - 1.
//
// Expected: both end with an error in the completion handler. On 6.3.1 the process dies during
// the second (SIGILL on x86_64), before any delegate or completion call.

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

/// Reads the request head up to its blank line and returns it (a GET has no body).
func readRequestHead(_ fd: Int32) -> String {
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while !bytes.suffix(4).elementsEqual([13, 10, 13, 10]) {
        let count = read(fd, &chunk, chunk.count)
        if count <= 0 { break }
        bytes += chunk[..<count]
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// GET /LENGTH: a head announcing LENGTH body bytes, three of them, then close.
let port = startServer { fd in
    let head = readRequestHead(fd)
    let length = head.split(separator: " ").dropFirst().first?.dropFirst() ?? "0"
    let reply = Array("HTTP/1.1 200 OK\r\nContent-Length: \(length)\r\n\r\nabc".utf8)
    _ = reply.withUnsafeBytes { write(fd, $0.baseAddress!, $0.count) }
    close(fd)
}

/// Prints the response's expectedContentLength and the task's error.
final class Delegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    let done = DispatchSemaphore(value: 0)

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        print("  response: status \((response as? HTTPURLResponse)?.statusCode ?? -1), expectedContentLength \(response.expectedContentLength)")
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        if let error = error as NSError? {
            print("  completed: error \(error.domain) \(error.code): \(error.localizedDescription)")
        } else {
            print("  completed without error")
        }
        done.signal()
    }
}

let delegate = Delegate()
let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
print("server on 127.0.0.1:\(port)")
for length in ["9223372036854775295", "9223372036854775807"] {
    print("Content-Length: \(length) (as a Double: \(UInt64(Double(length)!))); if nothing follows, the process died")
    session.dataTask(with: URL(string: "http://127.0.0.1:\(port)/\(length)")!).resume()
    delegate.done.wait()
}
print("the process survived")
