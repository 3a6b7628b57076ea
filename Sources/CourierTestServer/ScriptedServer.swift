import Foundation
#if canImport(Glibc)
import Glibc
#endif
import CourierSupport

/// A raw-socket HTTP responder for hostile-server tests: every byte of every answer is the
/// script's, so a test can send what no well-behaved server would (a status line and nothing
/// else, a `Content-Length` of `0x5`, a 206 that lies about its range, a body that trickles).
///
/// It binds `127.0.0.1` port 0 and serves one request per connection: it reads the request head,
/// records it, asks the script for a ``Reply`` and performs its steps, then closes the
/// connection. Request bodies are not read (hostile cases are GETs) unless the server was made
/// with `readingBodies` (a body framed by `Content-Length` or chunked, up to 16 MiB, recorded in
/// ``RecordedRequest/body``; `courier-bench cache-proxy` answers PUTs and POSTs with it).
///
/// ```swift
/// let server = try ScriptedServer { request, index in
///     index == 0 ? .bytes("HTTP/1.1 200 OK\r\n") : .response(status: 200, headers: [("Content-Length", "2")], body: Data("ok".utf8))
/// }
/// ```
public final class ScriptedServer: Sendable {
    /// What to do with one connection, step by step, after its request head arrived.
    public struct Reply: Sendable {
        /// One step of a reply.
        public enum Step: Sendable {
            /// Write these bytes.
            case send(Data)
            /// Wait this long (ends early when the server stops).
            case pause(milliseconds: Int)
        }

        /// How the connection ends once the steps are done.
        public enum Ending: Sendable {
            /// Close with a FIN (after a short linger, so the client sees every byte).
            case close
            /// Abort with an RST.
            case reset
            /// Keep the connection open, sending nothing, until the client closes or the server stops.
            case hang
        }

        /// The steps, in order.
        public var steps: [Step]
        /// How the connection ends.
        public var ending: Ending

        /// A reply of `steps` ending with `ending`.
        public init(_ steps: [Step], ending: Ending = .close) {
            self.steps = steps
            self.ending = ending
        }

        /// Sends `raw` as it is, then closes.
        public static func bytes(_ raw: String, ending: Ending = .close) -> Reply {
            Reply([.send(Data(raw.utf8))], ending: ending)
        }

        /// A response whose header fields are exactly `headers` (no `Content-Length` is added;
        /// `Connection: close` is, unless the headers name `Connection`), followed by `body`.
        /// With `sendingOnly`, only the first that many body bytes are sent before the ending.
        public static func response(
            status: Int, reason: String = "OK", headers: [(String, String)], body: Data = Data(),
            sendingOnly limit: Int? = nil, ending: Ending = .close
        ) -> Reply {
            Reply(
                [.send(head(status: status, reason: reason, headers: headers) + body.prefix(limit ?? body.count))],
                ending: ending)
        }

        /// The bytes of a status line and header block, `Connection: close` added unless present.
        public static func head(status: Int, reason: String = "OK", headers: [(String, String)]) -> Data {
            var text = "HTTP/1.1 \(status) \(reason)\r\n"
            for (name, value) in headers { text += "\(name): \(value)\r\n" }
            if !headers.contains(where: { $0.0.caseInsensitiveCompare("Connection") == .orderedSame }) {
                text += "Connection: close\r\n"
            }
            return Data((text + "\r\n").utf8)
        }
    }

    /// `data` as a valid gzip stream (stored deflate blocks), for encoded-body cases.
    public static func gzip(_ data: Data) -> Data {
        Gzip.compress(data)
    }

    /// Decides the reply to the request `request`, the `index`th (0, 1, 2…) this server received.
    public typealias Script = @Sendable (_ request: RecordedRequest, _ index: Int) -> Reply

    /// The port bound on `127.0.0.1`.
    public let port: UInt16

    private let listener: Socket
    private let script: Script
    private let stopSignal: StopSignal
    private let registry = ConnectionRegistry()
    private let log = RequestLog()
    private let counter = Locked(0)
    private let threads = DispatchGroup()
    private let readsBodies: Bool
    /// The largest request body kept with `readingBodies`; a larger one closes the connection.
    static let bodyLimit = 16 << 20

    /// Binds `127.0.0.1` on an ephemeral port and starts serving with `script`. With
    /// `readingBodies`, each request's body is read (and recorded) before `script` sees it.
    public init(readingBodies: Bool = false, script: @escaping Script) throws {
        readsBodies = readingBodies
        let (listener, port, stopSignal) = try AcceptLoop.listen(host: "127.0.0.1", port: 0, backlog: 128)
        self.stopSignal = stopSignal
        self.listener = listener
        self.port = port
        self.script = script
        threads.enter()
        let thread = Thread { [self] in
            acceptLoop()
            threads.leave()
        }
        thread.name = "ScriptedServer accept :\(port)"
        thread.start()
    }

    deinit {
        stop()
    }

    /// `http://127.0.0.1:<port><pathAndQuery>`.
    public func url(_ pathAndQuery: String = "/") -> URL {
        let path = pathAndQuery.hasPrefix("/") ? pathAndQuery : "/" + pathAndQuery
        return URL(string: "http://127.0.0.1:\(port)\(path)")!
    }

    /// Every request head received so far, in arrival order.
    public var requests: [RecordedRequest] { log.snapshot }

    /// Stops accepting, ends every connection, and waits briefly for their threads. Idempotent.
    public func stop() {
        guard registry.stopAll() else { return }
        stopSignal.fire()
        listener.shutdownBoth()
        _ = threads.wait(timeout: .now() + .seconds(5))
    }

    private func acceptLoop() {
        AcceptLoop.run(
            listener: listener, stopSignal: stopSignal, registry: registry, threads: threads, name: "ScriptedServer"
        ) { [self] socket, id in
            serve(socket, id: id)
            registry.unregister(id)
            socket.close()
        }
    }

    private func serve(_ socket: Socket, id: Int) {
        var reader = SocketReader(socket: socket)
        guard case .head(let bytes) = reader.readHead(limit: 64 * 1024),
            let head = try? HTTPRequestParser.parseHead(bytes)
        else { return }
        var body = Data()
        if readsBodies {
            guard let framing = try? HTTPRequestParser.framing(of: head) else { return }
            if framing != .none, head.versionMinor >= 1, head.headerContainsToken("Expect", "100-continue") {
                guard socket.sendAll("HTTP/1.1 100 Continue\r\n\r\n") else { return }
            }
            guard case .complete(let bytes, _) = RequestBodyReader.read(framing, from: &reader, keep: true, limit: Self.bodyLimit)
            else { return }
            body = bytes
        }
        let request = RecordedRequest(
            method: head.method, target: head.target, httpVersion: head.version, headers: head.headers,
            body: body, connectionID: id)
        log.append(request)
        let index = counter.withLock { count -> Int in
            defer { count += 1 }
            return count
        }
        let reply = script(request, index)
        for step in reply.steps {
            switch step {
            case .send(let data):
                guard socket.sendAll(data) else { return }
            case .pause(let milliseconds):
                guard stopSignal.sleep(milliseconds: milliseconds) else { return }
            }
        }
        switch reply.ending {
        case .close:
            socket.shutdownWrite()
            reader.drain(timeoutMilliseconds: 1000, stopSignal: stopSignal)
        case .reset:
            socket.setAbortiveClose()
        case .hang:
            var scratch = [UInt8](repeating: 0, count: 4096)
            while stopSignal.waitReadable(socket.fd, timeoutMilliseconds: -1) == .readable {
                if scratch.withUnsafeMutableBytes({ socket.receive(into: $0) }) <= 0 { return }
            }
        }
    }
}
