internal import CourierSupport
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The opening handshake (RFC 6455 §4.1) as pure functions: the request head a client sends for
/// a URL, and the check of the response head that answers it
/// (``validate(status:headers:)`` in `WebSocketHandshake+Response.swift`).
///
/// Randomness stays outside: the 16 random bytes of `Sec-WebSocket-Key` come in as an argument,
/// so a test can check the head byte for byte.
struct WebSocketHandshake: Equatable, Sendable {
    /// The GUID §1.3 appends to the key before hashing it into `Sec-WebSocket-Accept`.
    static let acceptGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// The fields the handshake sets itself; the same names among the caller's headers are
    /// dropped, so a request's own `Connection: keep-alive` cannot break the upgrade.
    /// `Sec-WebSocket-Extensions` too: only the compression the options ask for is offered, and a
    /// server that accepted an extension the caller named would send frames Courier cannot read. `Content-Length` and
    /// `Transfer-Encoding`: the upgrade request has no body.
    private static let ownedFields: Set<String> = [
        "host", "upgrade", "connection", "sec-websocket-key", "sec-websocket-version", "sec-websocket-protocol",
        "sec-websocket-extensions", "content-length", "transfer-encoding",
    ]

    /// The URL the handshake is for.
    let url: URL
    /// Whether the connection needs TLS (`wss`, `https`).
    let isSecure: Bool
    /// The host to connect to, without brackets around an IPv6 address.
    let host: String
    /// The port to connect to: the URL's, or 80 / 443.
    let port: Int
    /// The value of `Sec-WebSocket-Key`: the 16 bytes in base64.
    let key: String
    /// The subprotocols offered, in order of preference (`Sec-WebSocket-Protocol`).
    let offeredProtocols: [String]
    /// The request head, from the request line to the blank line, with CRLF line ends.
    let head: String
    /// The compression offered (`Sec-WebSocket-Extensions`), if any.
    let compression: WebSocketCompression?

    /// The handshake for `url` (`ws`, `wss`, or their `http`/`https` spellings): a GET of the
    /// URL's path and query with `Host` (with the port when it is not the scheme's default, as
    /// §4.1 asks and servers check), `Upgrade: websocket`, `Connection: Upgrade`,
    /// `Sec-WebSocket-Key` from `nonce` (16 random bytes, fresh for each connection),
    /// `Sec-WebSocket-Version: 13`, `Sec-WebSocket-Protocol` when `protocols` is not empty, then
    /// `headers` in their order (the fields above dropped from them). With no `protocols`, a
    /// `Sec-WebSocket-Protocol` among `headers` is taken as the offer, as `URLSession` does with a
    /// request that sets it.
    ///
    /// Throws ``CourierError/Code-swift.struct/invalidRequest`` for another scheme, no host, a
    /// nonce that is not 16 bytes, a protocol that is not a token or is offered twice, and a
    /// header name that is not a token or a value with CR, LF or NUL (which would smuggle a
    /// field into the head).
    init(
        url: URL, nonce: [UInt8], protocols: [String] = [], headers: [(name: String, value: String)] = [],
        compression: WebSocketCompression? = nil
    ) throws(CourierError) {
        func refuse(_ message: String) -> CourierError {
            CourierError(code: .invalidRequest, message: "cannot open a WebSocket: " + message, url: url)
        }
        let scheme = (url.scheme ?? "").lowercased()
        let secure: Bool
        switch scheme {
        case "ws", "http": secure = false
        case "wss", "https": secure = true
        default: throw refuse("the scheme is \(scheme.isEmpty ? "missing" : "'\(scheme)'"), not ws or wss")
        }
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: true),
            var host = components.host, !host.isEmpty, let encodedHost = components.percentEncodedHost
        else { throw refuse("the URL has no host") }
        // Foundation on Linux keeps an IPv6 literal's brackets in `host`; the socket wants none.
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard nonce.count == 16 else { throw refuse("the key needs 16 random bytes, not \(nonce.count)") }

        var offered = protocols
        if offered.isEmpty {
            offered = headers.filter { ASCIICase.equals($0.name, "sec-websocket-protocol") }
                .flatMap { Self.listElements($0.value) }
        }
        for (index, name) in offered.enumerated() {
            guard HTTPToken.isToken(name) else { throw refuse("the subprotocol '\(name)' is not a token") }
            guard !offered[..<index].contains(name) else { throw refuse("the subprotocol '\(name)' is offered twice") }
        }
        for field in headers {
            guard HTTPToken.isToken(field.name) else { throw refuse("'\(field.name)' is not a header name") }
            guard !field.value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) else {
                throw refuse("the value of \(field.name) holds a line break or NUL")
            }
        }

        let defaultPort = secure ? 443 : 80
        let port = components.port ?? defaultPort
        // Host as the URL spells it, still percent-encoded (a decoded `%0D%0A` would split the
        // head), an IPv6 literal in brackets (RFC 9110 §7.2 takes RFC 3986's authority form).
        let hostField = encodedHost.contains(":") && !encodedHost.hasPrefix("[") ? "[\(encodedHost)]" : encodedHost
        let key = Data(nonce).base64EncodedString()

        var target = components.percentEncodedPath
        if target.isEmpty { target = "/" }
        if let query = components.percentEncodedQuery { target += "?" + query }

        var lines = [
            "GET \(target) HTTP/1.1",
            "Host: \(port == defaultPort ? hostField : "\(hostField):\(port)")",
            "Upgrade: websocket",
            "Connection: Upgrade",
            "Sec-WebSocket-Key: \(key)",
            "Sec-WebSocket-Version: 13",
        ]
        if !offered.isEmpty { lines.append("Sec-WebSocket-Protocol: \(offered.joined(separator: ", "))") }
        if let compression { lines.append("Sec-WebSocket-Extensions: \(compression.offer)") }
        for field in headers where !Self.ownedFields.contains(field.name.lowercased()) {
            lines.append("\(field.name): \(field.value)")
        }

        self.url = url
        self.isSecure = secure
        self.host = host
        self.port = port
        self.key = key
        self.offeredProtocols = offered
        self.compression = compression
        self.head = lines.joined(separator: "\r\n") + "\r\n\r\n"
    }

    /// The `Sec-WebSocket-Accept` a server must answer `key` with (§4.2.2):
    /// base64(SHA-1(key + GUID)).
    static func acceptValue(forKey key: String) -> String {
        Data(SHA1.hash(Array((key + acceptGUID).utf8))).base64EncodedString()
    }

    /// The elements of a comma-separated field value (RFC 9110 §5.6.1), trimmed, empty ones
    /// dropped.
    static func listElements(_ value: String) -> [String] {
        value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}
