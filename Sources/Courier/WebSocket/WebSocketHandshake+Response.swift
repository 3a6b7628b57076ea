internal import CourierSupport
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension WebSocketHandshake {
    /// What a valid response settled.
    struct Negotiated: Equatable, Sendable {
        /// The subprotocol the server chose from the offer, or `nil` when it chose none.
        var subprotocol: String?
        /// The compression the server accepted, or `nil`.
        var compression: WebSocketCompression.Agreement?
    }

    /// Checks the server's response head (§4.1, the client's checks 1–6): status 101,
    /// `Upgrade` naming `websocket` and `Connection` naming `Upgrade` (any case, as one element
    /// of a list), exactly one `Sec-WebSocket-Accept` equal to ``acceptValue(forKey:)``, no
    /// extension but the `permessage-deflate` offered (``WebSocketCompression/agreement(from:)``),
    /// and at most one subprotocol, one that was offered.
    ///
    /// Throws ``CourierError/Code-swift.struct/redirectRefused`` for a 3xx (a WebSocket is not
    /// redirected), ``CourierError/Code-swift.struct/unacceptableStatusCode`` for any other
    /// status but 101, and ``CourierError/Code-swift.struct/invalidResponse`` for a 101 that
    /// breaks a rule; each carries the response.
    func validate(status: Int, headers: [(name: String, value: String)]) throws(CourierError) -> Negotiated {
        let response = HTTPURLResponse(
            url: url, statusCode: status, httpVersion: "HTTP/1.1",
            headerFields: Dictionary(headers.map { ($0.name, $0.value) }, uniquingKeysWith: { "\($0), \($1)" }))
        func refuse(_ code: CourierError.Code, _ message: String) -> CourierError {
            CourierError(code: code, message: message, url: url, response: response)
        }
        func values(_ name: StaticString) -> [String] {
            headers.filter { ASCIICase.equals($0.name, name) }.map(\.value)
        }
        func listContains(_ name: StaticString, _ token: StaticString) -> Bool {
            values(name).flatMap(Self.listElements).contains { ASCIICase.equals($0, token) }
        }

        switch status {
        case 101: break
        case 300...399:
            let location = values("location").first.map { " to \($0)" } ?? ""
            throw refuse(.redirectRefused, "the WebSocket handshake was redirected (\(status))\(location); redirects are not followed")
        default:
            throw refuse(.unacceptableStatusCode, "the server answered the WebSocket handshake with \(status), not 101")
        }
        guard listContains("upgrade", "websocket") else {
            throw refuse(
                .invalidResponse, "the server's 101 does not upgrade to websocket (Upgrade: \(values("upgrade").joined(separator: ", ")))")
        }
        guard listContains("connection", "upgrade") else {
            throw refuse(.invalidResponse, "the server's 101 has no Connection: Upgrade")
        }
        let accepts = values("sec-websocket-accept")
        guard accepts.count == 1 else {
            throw refuse(.invalidResponse, "the server's 101 has \(accepts.count) Sec-WebSocket-Accept fields, not one")
        }
        guard accepts[0].trimmingCharacters(in: .whitespaces) == Self.acceptValue(forKey: key) else {
            throw refuse(.invalidResponse, "the server's Sec-WebSocket-Accept does not match the key sent")
        }
        let extensions = values("sec-websocket-extensions").flatMap(Self.listElements)
        var agreement: WebSocketCompression.Agreement?
        if let compression {
            switch compression.agreement(from: extensions) {
            case .success(let accepted): agreement = accepted
            case .failure(let refusal): throw refuse(.invalidResponse, refusal.reason)
            }
        } else if !extensions.isEmpty {
            throw refuse(.invalidResponse, "the server chose an extension the client did not offer: \(extensions.joined(separator: ", "))")
        }
        let chosen = values("sec-websocket-protocol").flatMap(Self.listElements)
        guard chosen.count <= 1 else {
            throw refuse(.invalidResponse, "the server chose \(chosen.count) subprotocols, not one: \(chosen.joined(separator: ", "))")
        }
        if let subprotocol = chosen.first, !offeredProtocols.contains(subprotocol) {
            let offer = offeredProtocols.isEmpty ? "none was offered" : "the offer was \(offeredProtocols.joined(separator: ", "))"
            throw refuse(.invalidResponse, "the server chose the subprotocol '\(subprotocol)'; \(offer)")
        }
        return Negotiated(subprotocol: chosen.first, compression: agreement)
    }
}
