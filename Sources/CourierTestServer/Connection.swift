import Foundation

/// One accepted connection, served on its own thread: read a request, record it, answer, repeat.
/// Not `Sendable`: it is created and used on that single thread.
final class Connection {
    /// The largest request head (request line + headers); larger gets 431.
    static let headLimit = 64 * 1024
    /// The largest body kept in memory (everything but `/sink`); larger gets 413.
    static let bodyLimit = 256 * 1024 * 1024
    /// How long to keep reading after our FIN before closing, so a client still sending does not
    /// provoke an RST that would destroy the response.
    static let lingerMilliseconds = 1000

    private let socket: Socket
    private let id: Int
    private let core: ServerCore
    private var reader: SocketReader
    private let writer: HTTPResponseWriter

    init(socket: Socket, id: Int, core: ServerCore) {
        self.socket = socket
        self.id = id
        self.core = core
        self.reader = SocketReader(socket: socket)
        self.writer = HTTPResponseWriter(socket: socket, stopSignal: core.stopSignal)
    }

    /// Serves requests until the connection ends, then closes it.
    func run() {
        var outcome = HTTPResponseWriter.Outcome.abort
        while !core.stopSignal.isFired {
            switch reader.readHead(limit: Self.headLimit) {
            case .endOfStream, .truncated:
                outcome = .abort
            case .tooLarge:
                outcome = refuse(RequestError(status: 431, reason: "request head larger than \(Self.headLimit) bytes"))
            case .head(let bytes):
                do {
                    outcome = try handle(HTTPRequestParser.parseHead(bytes))
                } catch {
                    outcome = refuse(error)
                }
            }
            if case .keepAlive = outcome { continue }
            break
        }
        finish(outcome)
    }

    /// Reads the body of one request, records it, routes it and writes the answer.
    private func handle(_ head: RequestHead) -> HTTPResponseWriter.Outcome {
        let framing: BodyFraming
        do {
            framing = try HTTPRequestParser.framing(of: head)
        } catch {
            return refuse(error)
        }
        if framing != .none, head.versionMinor >= 1, head.headerContainsToken("Expect", "100-continue") {
            guard writer.writeContinue() else { return .abort }
        }
        let keep = Router.keepsBody(path: RequestTarget.split(head.target).path)
        switch RequestBodyReader.read(framing, from: &reader, keep: keep, limit: Self.bodyLimit) {
        case .truncated:
            return .abort
        case .refused(let error):
            return refuse(error)
        case .complete(let body, let length):
            let request = HTTPRequest(head: head, body: body, bodyLength: length, connectionID: id)
            core.log.append(request.recorded)
            switch Router(core: core).route(request) {
            case .respond(let response):
                return writer.write(response, isHead: request.isHead, closeRequested: !head.wantsKeepAlive)
            case .neverAnswer:
                waitForPeerToClose()
                return .abort
            case .closeImmediately:
                return .close
            case .webSocketEcho(let key):
                return echoWebSocket(key: key)
            }
        }
    }

    /// Answers a refused request with a short text body and closes.
    private func refuse(_ error: RequestError) -> HTTPResponseWriter.Outcome {
        var response = HTTPResponse.text("\(HTTPStatus.reason(error.status)): \(error.reason)", status: error.status)
        response.delivery.closeConnection = true
        return writer.write(response, isHead: false, closeRequested: true)
    }

    /// Answers the handshake with 101 and echoes until the client's Close frame (`/ws/echo`).
    private func echoWebSocket(key: String) -> HTTPResponseWriter.Outcome {
        guard socket.sendAll(WebSocketPeer.switchingProtocols(key: key)) else { return .abort }
        var peer = WebSocketPeer(socket: socket, reader: reader, stopSignal: core.stopSignal) { _ in }
        peer.echo()
        reader = peer.reader
        // §7.1.1: the server closes TCP first, once the closing handshake is done.
        return .close
    }

    /// Discards input until the client closes or the server stops (`/never-answer`).
    private func waitForPeerToClose() {
        var scratch = [UInt8](repeating: 0, count: 4096)
        while core.stopSignal.waitReadable(socket.fd, timeoutMilliseconds: -1) == .readable {
            if scratch.withUnsafeMutableBytes({ socket.receive(into: $0) }) <= 0 { return }
        }
    }

    /// Ends the connection as `outcome` asks, then closes the descriptor.
    private func finish(_ outcome: HTTPResponseWriter.Outcome) {
        switch outcome {
        case .keepAlive, .close:
            socket.shutdownWrite()
            reader.drain(timeoutMilliseconds: Self.lingerMilliseconds, stopSignal: core.stopSignal)
        case .reset:
            socket.setAbortiveClose()
        case .abort:
            break
        }
        // Unregister first: once closed, the descriptor number may be reused, and stop() must
        // not shut down a stranger's socket.
        core.registry.unregister(id)
        socket.close()
    }
}
