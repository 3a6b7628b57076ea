import Foundation

/// `/ws/echo`: a WebSocket echo (text and binary, fragments as they come, pings answered, the
/// Close frame echoed). Scripted and hostile WebSocket servers are ``WebSocketTestServer``.
extension Router {
    func webSocketEcho(_ request: HTTPRequest) throws(RouteError) -> RouteAction {
        guard request.head.headerContainsToken("Upgrade", "websocket"), request.head.headerContainsToken("Connection", "upgrade"),
            let key = request.header("Sec-WebSocket-Key"), request.header("Sec-WebSocket-Version") == "13"
        else {
            throw RouteError("/ws/echo needs a WebSocket handshake (Upgrade: websocket, Sec-WebSocket-Key, version 13)", status: 426)
        }
        return .webSocketEcho(key: key)
    }
}
