import Foundation

/// A parsed request line and header section.
struct RequestHead {
    let method: String
    let target: String
    let versionMajor: Int
    let versionMinor: Int
    let headers: [(name: String, value: String)]

    /// `HTTP/1.1`-style version string.
    var version: String { "HTTP/\(versionMajor).\(versionMinor)" }

    /// The first value of header `name` (case-insensitive).
    func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// Every value of header `name` (case-insensitive), in order.
    func headerValues(_ name: String) -> [String] {
        headers.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
    }

    /// Whether a comma-separated header (e.g. `Connection`) contains `token`.
    func headerContainsToken(_ name: String, _ token: String) -> Bool {
        headerValues(name).contains { value in
            value.split(separator: ",").contains {
                $0.trimmingCharacters(in: .whitespaces).caseInsensitiveCompare(token) == .orderedSame
            }
        }
    }

    /// Whether the connection should stay open after this request (HTTP/1.1 without `Connection: close`;
    /// HTTP/1.0 always closes).
    var wantsKeepAlive: Bool {
        versionMajor == 1 && versionMinor >= 1 && !headerContainsToken("Connection", "close")
    }
}

/// A complete request handed to the router.
struct HTTPRequest {
    let head: RequestHead
    /// The body (empty for `/sink`, which discards it).
    let body: Data
    /// How many body bytes were received.
    let bodyLength: Int
    let connectionID: Int
    /// The target without the query, still percent-encoded.
    private(set) var path: String
    /// Decoded query items in order.
    let queryItems: [(name: String, value: String)]

    init(head: RequestHead, body: Data, bodyLength: Int, connectionID: Int) {
        self.head = head
        self.body = body
        self.bodyLength = bodyLength
        self.connectionID = connectionID
        let (path, query) = RequestTarget.split(head.target)
        self.path = path
        self.queryItems = QueryString.parse(query ?? "")
    }

    /// The same request for another path (a route that serves another route's answer).
    func routed(to path: String) -> HTTPRequest {
        var copy = self
        copy.path = path
        return copy
    }

    var method: String { head.method }
    var target: String { head.target }
    var headers: [(name: String, value: String)] { head.headers }

    /// Whether this is a HEAD request (answered with headers only).
    var isHead: Bool { head.method == "HEAD" }

    /// The first value of header `name` (case-insensitive).
    func header(_ name: String) -> String? { head.header(name) }

    /// The last value of query item `name`.
    func query(_ name: String) -> String? { queryItems.last { $0.name == name }?.value }

    /// The record kept in the server's request log.
    var recorded: RecordedRequest {
        RecordedRequest(
            method: method, target: target, httpVersion: head.version, headers: headers,
            body: body, bodyLength: bodyLength, connectionID: connectionID)
    }
}
