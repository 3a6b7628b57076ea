import CourierSupport
import Foundation

/// The server side of one WebSocket connection on a blocking socket, on its connection's thread:
/// the handshake's answer, frames read (unmasked) and written, and the echo loop `/ws/echo` and
/// ``WebSocketTestServer`` scripts run.
struct WebSocketPeer {
    let socket: Socket
    var reader: SocketReader
    let stopSignal: StopSignal
    /// Called with every frame the client sent.
    let record: (WebSocketServerFrame) -> Void

    /// The largest frame read; a larger one ends the connection (memory stays bounded).
    static let maximumFrame = 64 << 20

    /// `Sec-WebSocket-Accept` for `key` (RFC 6455 §4.2.2).
    static func acceptValue(forKey key: String) -> String {
        Data(SHA1.hash(Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8))).base64EncodedString()
    }

    /// The 101 answer to a request with `key`, choosing `subprotocol`.
    static func switchingProtocols(
        key: String, subprotocol: String? = nil, accept: String? = nil, upgrade: Bool = true, extensions: String? = nil
    ) -> Data {
        var head = "HTTP/1.1 101 Switching Protocols\r\n"
        if upgrade { head += "Upgrade: websocket\r\nConnection: Upgrade\r\n" }
        head += "Sec-WebSocket-Accept: \(accept ?? acceptValue(forKey: key))\r\n"
        if let subprotocol { head += "Sec-WebSocket-Protocol: \(subprotocol)\r\n" }
        if let extensions { head += "Sec-WebSocket-Extensions: \(extensions)\r\n" }
        return Data((head + "\r\n").utf8)
    }

    /// Sends `frame`; `false` when the client is gone.
    func send(_ frame: WebSocketServerFrame) -> Bool {
        socket.sendAll(frame.encoded)
    }

    /// The next frame from the client, unmasked and recorded; `nil` at the end of the stream.
    mutating func readFrame() -> WebSocketServerFrame? {
        guard let head = readExactly(2) else { return nil }
        var length = UInt64(head[1] & 0x7F)
        if length == 126 {
            guard let bytes = readExactly(2) else { return nil }
            length = UInt64(bytes[0]) << 8 | UInt64(bytes[1])
        } else if length == 127 {
            guard let bytes = readExactly(8) else { return nil }
            length = bytes.reduce(0) { $0 << 8 | UInt64($1) }
        }
        guard length <= UInt64(Self.maximumFrame) else { return nil }
        var key: [UInt8]?
        if head[1] & 0x80 != 0 {
            guard let bytes = readExactly(4) else { return nil }
            key = bytes
        }
        guard var payload = readExactly(Int(length)) else { return nil }
        if let key {
            for index in payload.indices { payload[index] ^= key[index % 4] }
        }
        let frame = WebSocketServerFrame(
            opcode: head[0] & 0x0F, payload: Data(payload), fin: head[0] & 0x80 != 0, reservedBits: (head[0] >> 4) & 7,
            maskingKey: key)
        record(frame)
        return frame
    }

    private mutating func readExactly(_ count: Int) -> [UInt8]? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        guard reader.consume(count, { bytes.append(contentsOf: $0) }) else { return nil }
        return bytes
    }

    /// Echoes data frames as they come (a fragmented message goes back fragmented), answers
    /// pings, and answers a Close frame with the same payload, after which it returns.
    /// With `answeringClose` false, a Close frame is not answered (a server that never does).
    mutating func echo(answeringClose: Bool = true) {
        while let frame = readFrame() {
            switch frame.opcode {
            case 8:
                if answeringClose { _ = send(WebSocketServerFrame(opcode: 8, payload: frame.payload)) }
                return
            case 9:
                guard send(WebSocketServerFrame(opcode: 10, payload: frame.payload)) else { return }
            case 10:
                continue
            default:
                guard send(WebSocketServerFrame(opcode: frame.opcode, payload: frame.payload, fin: frame.fin)) else { return }
            }
        }
    }

    /// Reads frames until the client's Close frame, without echoing; answers it with `reply`
    /// (the same payload when `nil`) unless `answering` is false.
    mutating func awaitClose(answering: Bool = true, reply: WebSocketServerFrame? = nil) {
        while let frame = readFrame() {
            if frame.opcode == 8 {
                if answering { _ = send(reply ?? WebSocketServerFrame(opcode: 8, payload: frame.payload)) }
                return
            }
            if frame.opcode == 9, !send(WebSocketServerFrame(opcode: 10, payload: frame.payload)) { return }
        }
    }

    /// Reads (and records) what the client sends, answering nothing, until it closes or the
    /// server stops (which shuts the socket down).
    mutating func hang() {
        while readFrame() != nil {}
    }
}
