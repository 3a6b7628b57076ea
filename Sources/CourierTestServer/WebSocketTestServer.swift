import CourierSupport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A WebSocket server for tests, good or hostile: each connection's handshake answer, the frames
/// it sends and how it ends come from a script, and every frame the client sends is recorded.
/// It binds `127.0.0.1` port 0, one thread per connection.
///
/// ```swift
/// let server = try WebSocketTestServer { request, index in
///     .init(steps: [.send(.text("hello")), .send(.close(4000, reason: "bye")), .awaitClose()])
/// }
/// let url = server.url("/chat")                     // ws://127.0.0.1:<port>/chat
/// // … run the client, then:
/// server.receivedFrames                             // what the client sent, in order
/// ```
///
/// ``Script/echo`` is what `TestServer`'s `/ws/echo` does.
public final class WebSocketTestServer: Sendable {
    /// What to do with one connection.
    public struct Script: Sendable {
        /// How the handshake is answered.
        public enum Handshake: Sendable {
            /// `101` with the right `Sec-WebSocket-Accept`, choosing `subprotocol`.
            case accept(subprotocol: String? = nil)
            /// `101` with the right `Sec-WebSocket-Accept` and `Sec-WebSocket-Extensions: extensions`
            /// (e.g. `permessage-deflate`: the frames the script sends are then its to compress).
            case acceptExtensions(String)
            /// `101` with a `Sec-WebSocket-Accept` that does not match the key.
            case wrongAcceptKey
            /// `101` without `Upgrade` and `Connection`.
            case missingUpgrade
            /// Any other answer: the status with `headers` and no body (e.g. 200, or 302 with a `Location`).
            case status(Int, headers: [(String, String)] = [])
        }

        /// One step after the handshake.
        public enum Step: Sendable {
            /// Send a frame.
            case send(WebSocketServerFrame)
            /// Send these bytes as they are.
            case sendRaw(Data)
            /// Wait this long.
            case pause(milliseconds: Int)
            /// Send `count` pings (a flood).
            case floodPings(count: Int)
            /// Echo until the client's Close frame, answering it (``WebSocketPeer``'s echo).
            case echo
            /// Read (and record) until the client's Close frame; answer it with the same payload,
            /// or not at all with `answering: false`.
            case awaitClose(answering: Bool = true)
            /// Read and record `count` frames (answering pings).
            case read(count: Int)
        }

        /// How the connection ends once the steps are done.
        public enum Ending: Sendable {
            /// Close TCP (a FIN), after a short linger.
            case close
            /// Abort with an RST.
            case reset
            /// Keep the connection open, reading (and recording) frames without answering any,
            /// until the client closes.
            case hang
        }

        /// The answer to the handshake.
        public var handshake: Handshake
        /// The steps, in order (none when the handshake is refused).
        public var steps: [Step]
        /// How the connection ends.
        public var ending: Ending

        /// A script.
        public init(handshake: Handshake = .accept(), steps: [Step], ending: Ending = .close) {
            self.handshake = handshake
            self.steps = steps
            self.ending = ending
        }

        /// Echoes every message, answers pings and echoes the Close frame.
        public static let echo = Script(steps: [.echo])
    }

    /// A frame a client sent, and on which connection (0, 1, 2… in the order they came).
    public struct ReceivedFrame: Sendable {
        /// The connection's index.
        public let connection: Int
        /// The frame, unmasked (``WebSocketServerFrame/maskingKey`` holds the key it came with).
        public let frame: WebSocketServerFrame
    }

    /// Decides the script of the `index`th connection from its handshake request.
    public typealias Decide = @Sendable (_ request: RecordedRequest, _ index: Int) -> Script

    /// The port bound on `127.0.0.1`.
    public let port: UInt16

    private let listener: Socket
    private let decide: Decide
    private let stopSignal: StopSignal
    private let registry = ConnectionRegistry()
    private let log = RequestLog()
    private let frames = Locked<[ReceivedFrame]>([])
    private let counter = Locked(0)
    private let threads = DispatchGroup()

    /// Binds `127.0.0.1` on an ephemeral port and serves each connection with `decide`'s script.
    public init(_ decide: @escaping Decide) throws {
        let (listener, port, stopSignal) = try AcceptLoop.listen(host: "127.0.0.1", port: 0, backlog: 128)
        self.listener = listener
        self.port = port
        self.stopSignal = stopSignal
        self.decide = decide
        threads.enter()
        let thread = Thread { [self] in
            AcceptLoop.run(
                listener: listener, stopSignal: stopSignal, registry: registry, threads: threads, name: "WebSocketTestServer"
            ) { [self] socket, id in
                serve(socket)
                registry.unregister(id)
                socket.close()
            }
            threads.leave()
        }
        thread.name = "WebSocketTestServer accept :\(port)"
        thread.start()
    }

    /// A server that runs `script` for every connection.
    public convenience init(script: Script) throws {
        try self.init { _, _ in script }
    }

    deinit {
        stop()
    }

    /// `ws://127.0.0.1:<port><pathAndQuery>`.
    public func url(_ pathAndQuery: String = "/") -> URL {
        let path = pathAndQuery.hasPrefix("/") ? pathAndQuery : "/" + pathAndQuery
        return URL(string: "ws://127.0.0.1:\(port)\(path)")!
    }

    /// Every handshake request received, in arrival order.
    public var requests: [RecordedRequest] { log.snapshot }

    /// Every frame received from clients, in arrival order.
    public var receivedFrames: [ReceivedFrame] { frames.withLock { $0 } }

    /// Stops accepting, ends every connection and waits briefly for their threads. Idempotent.
    public func stop() {
        guard registry.stopAll() else { return }
        stopSignal.fire()
        listener.shutdownBoth()
        _ = threads.wait(timeout: .now() + .seconds(5))
    }

    private func serve(_ socket: Socket) {
        var reader = SocketReader(socket: socket)
        guard case .head(let bytes) = reader.readHead(limit: 64 * 1024), let head = try? HTTPRequestParser.parseHead(bytes)
        else { return }
        let index = counter.withLock { count -> Int in
            defer { count += 1 }
            return count
        }
        let request = RecordedRequest(
            method: head.method, target: head.target, httpVersion: head.version, headers: head.headers, body: Data(),
            connectionID: index)
        log.append(request)
        let script = decide(request, index)
        let key = request.header("Sec-WebSocket-Key") ?? ""
        let answer: Data
        var refused = false
        switch script.handshake {
        case .accept(let subprotocol): answer = WebSocketPeer.switchingProtocols(key: key, subprotocol: subprotocol)
        case .acceptExtensions(let extensions): answer = WebSocketPeer.switchingProtocols(key: key, extensions: extensions)
        case .wrongAcceptKey: answer = WebSocketPeer.switchingProtocols(key: key, accept: WebSocketPeer.acceptValue(forKey: key + "x"))
        case .missingUpgrade: answer = WebSocketPeer.switchingProtocols(key: key, upgrade: false)
        case .status(let status, let headers):
            var text = "HTTP/1.1 \(status) \(HTTPStatus.reason(status))\r\nContent-Length: 0\r\n"
            for (name, value) in headers { text += "\(name): \(value)\r\n" }
            answer = Data((text + "\r\n").utf8)
            refused = true
        }
        guard socket.sendAll(answer) else { return }
        var peer = WebSocketPeer(socket: socket, reader: reader, stopSignal: stopSignal) { [frames] frame in
            frames.withLock { $0.append(ReceivedFrame(connection: index, frame: frame)) }
        }
        if !refused {
            for step in script.steps {
                guard run(step, on: &peer) else { return }
            }
        }
        switch script.ending {
        case .close:
            socket.shutdownWrite()
            peer.reader.drain(timeoutMilliseconds: 1000, stopSignal: stopSignal)
        case .reset:
            socket.setAbortiveClose()
        case .hang:
            peer.hang()
        }
    }

    private func run(_ step: Script.Step, on peer: inout WebSocketPeer) -> Bool {
        switch step {
        case .send(let frame): return peer.send(frame)
        case .sendRaw(let data): return peer.socket.sendAll(data)
        case .pause(let milliseconds): return stopSignal.sleep(milliseconds: milliseconds)
        case .floodPings(let count):
            let ping = WebSocketServerFrame.ping(Data("flood".utf8)).encoded
            for _ in 0..<count where !peer.socket.sendAll(ping) { return false }
            return true
        case .echo: peer.echo()
        case .awaitClose(let answering): peer.awaitClose(answering: answering)
        case .read(let count):
            for _ in 0..<count {
                guard let frame = peer.readFrame() else { return false }
                if frame.opcode == 9, !peer.send(WebSocketServerFrame(opcode: 10, payload: frame.payload)) { return false }
            }
        }
        return true
    }
}
