import Foundation

/// One request as the server received it, recorded after its body was read and before the
/// response was written (so a test that has its response can already see the request).
public struct RecordedRequest: Sendable {
    /// The request method, e.g. `GET`.
    public let method: String
    /// The raw request target, e.g. `/get?a=1`.
    public let target: String
    /// The protocol version from the request line, e.g. `HTTP/1.1`.
    public let httpVersion: String
    /// The header fields in the order received, names spelled as sent.
    public let headers: [(name: String, value: String)]
    /// The body, de-chunked if the request used `Transfer-Encoding: chunked`.
    /// Always empty for `/sink`, which discards bodies to keep memory bounded.
    public let body: Data
    /// How many body bytes the request carried (equals `body.count` except for `/sink`).
    public let bodyLength: Int
    /// Which accepted connection (1, 2, 3… in accept order) carried the request.
    public let connectionID: Int

    /// Creates a record (the server makes these; public so tests can build fixtures).
    public init(
        method: String,
        target: String,
        httpVersion: String = "HTTP/1.1",
        headers: [(name: String, value: String)],
        body: Data,
        bodyLength: Int? = nil,
        connectionID: Int
    ) {
        self.method = method
        self.target = target
        self.httpVersion = httpVersion
        self.headers = headers
        self.body = body
        self.bodyLength = bodyLength ?? body.count
        self.connectionID = connectionID
    }

    /// The target without its query, e.g. `/get` (still percent-encoded as sent).
    public var path: String { RequestTarget.split(target).path }

    /// The decoded query items (`+` means space); when a name repeats, the last value wins.
    public var query: [String: String] {
        QueryString.lastWins(QueryString.parse(RequestTarget.split(target).query ?? ""))
    }

    /// The value of the first header named `name` (compared case-insensitively), if any.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}
