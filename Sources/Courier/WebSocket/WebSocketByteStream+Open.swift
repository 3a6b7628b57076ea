import Foundation

/// Opens the byte stream a WebSocket to `url` runs over, within `timeout`: plain TCP for `ws` (and
/// `http`), libcurl's `CONNECT_ONLY` connection for `wss` (and `https`), with the TLS policy
/// `tls` gives the URL's host (Docs/WebSocket.md, "wss:// on the system libcurl").
func openByteStream(
    for url: URL, configuration: SessionManager.Configuration, tls: TLSEnforcer?, timeout: Duration
) async throws(CourierError) -> any WebSocketByteStream {
    let handshakeURL = url
    guard let components = URLComponents(url: handshakeURL, resolvingAgainstBaseURL: true), var host = components.host,
        !host.isEmpty
    else {
        throw CourierError(code: .invalidRequest, message: "cannot open a WebSocket: the URL has no host", url: url)
    }
    if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
    switch (url.scheme ?? "").lowercased() {
    case "ws", "http":
        return try await TCPByteStream.open(host: host, port: components.port ?? 80, timeout: timeout)
    case "wss", "https":
        return try await CurlByteStream.open(url: url, tls: tls, timeout: timeout.seconds)
    default:
        throw CourierError(
            code: .invalidRequest, message: "cannot open a WebSocket: the scheme is not ws or wss", url: url)
    }
}
