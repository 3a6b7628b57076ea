import Foundation

/// Opens the byte stream a WebSocket to `url` runs over: plain TCP for `ws` (and `http`), within
/// `timeout`. `wss` (and `https`) throws ``CourierError/Code-swift.struct/invalidRequest`` until the
/// TLS stream over libcurl is wired in.
func openByteStream(
    for url: URL, configuration: SessionManager.Configuration, timeout: Duration
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
        // MERGE POINT (issue 34, wss): `CurlByteStream.open(url:configuration:timeout:)` goes here.
        throw CourierError(
            code: .invalidRequest, message: "wss:// WebSockets are not supported yet (the TLS stream is being built)", url: url)
    default:
        throw CourierError(
            code: .invalidRequest, message: "cannot open a WebSocket: the scheme is not ws or wss", url: url)
    }
}
