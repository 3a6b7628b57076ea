import Foundation

/// What the connection should do with a routed request.
enum RouteAction {
    /// Write this response.
    case respond(HTTPResponse)
    /// Never answer; wait until the client closes or the server stops (`/never-answer`).
    case neverAnswer
    /// Close the connection without answering (`/close-immediately`, or an interrupted `/delay`).
    case closeImmediately
    /// Switch to WebSocket and echo (`/ws/echo`) with this `Sec-WebSocket-Key`.
    case webSocketEcho(key: String)
}

/// A request the route refuses, answered as `text/plain` with `status` (400 unless stated).
struct RouteError: Error {
    let status: Int
    let message: String

    init(_ message: String, status: Int = 400) {
        self.status = status
        self.message = message
    }
}

/// Maps a request to a route. Handlers live in the `Routes*.swift` extensions, one file per concern.
struct Router {
    let core: ServerCore

    /// Whether the body for `path` is kept in memory: everything but `/sink`, which streams it away.
    static func keepsBody(path: String) -> Bool {
        path != "/sink"
    }

    /// Routes `request`. Route errors become `text/plain` responses.
    func route(_ request: HTTPRequest) -> RouteAction {
        do {
            return try dispatch(request)
        } catch {
            return .respond(.text(error.message, status: error.status))
        }
    }

    func dispatch(_ request: HTTPRequest) throws(RouteError) -> RouteAction {
        let parts = request.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        let name = parts.first ?? ""
        switch (name, parts.count) {
        case ("", 1): return .respond(index())
        case ("get", 1): return .respond(get(request))
        case ("anything", _): return .respond(anything(request))
        case ("headers", 1): return .respond(headers(request))
        case ("response-headers", 1): return .respond(responseHeaders(request))
        case ("cookies", 1): return .respond(cookies(request))
        case ("cookies", 2) where parts[1] == "set": return .respond(setCookies(request))
        case ("cookies", 2) where parts[1] == "delete": return .respond(deleteCookies(request))
        case ("basic-auth", 3): return .respond(basicAuth(request, user: parts[1], password: parts[2]))
        case ("bearer", 2): return .respond(try bearer(request, token: parts[1]))
        case ("authorized", 2...): return try authorized(request, rest: parts.dropFirst().joined(separator: "/"))
        case ("digest-auth", 4): return .respond(digestAuth(request, qop: parts[1], user: parts[2], password: parts[3]))
        case ("status", 2): return .respond(try status(request, code: parts[1]))
        case ("redirect", 2): return .respond(try redirect(request, count: parts[1]))
        case ("redirect-to", 1): return .respond(try redirectTo(request))
        case ("redirect-loop", 1): return .respond(redirectLoop())
        case ("json", 1): return .respond(json())
        case ("html", 1): return .respond(html())
        case ("base64", 2): return .respond(try base64(request, value: parts[1]))
        case ("gzip", 1): return .respond(gzip(request))
        case ("gzip-bomb", 1): return .respond(try gzipBomb(request))
        case ("bytes", 2): return .respond(try bytes(request, count: parts[1]))
        case ("signed", 3) where parts[1] == "bytes": return .respond(try signedBytes(request, count: parts[2]))
        case ("stream-bytes", 2): return .respond(try streamBytes(request, count: parts[1]))
        case ("files", 2...): return .respond(try file(request, name: parts.dropFirst().joined(separator: "/")))
        case ("drip", 1): return .respond(try drip(request))
        case ("sse", 1): return .respond(try sse(request))
        case ("ndjson", 1): return .respond(try ndjson(request))
        case ("delay", 2): return try delay(request, milliseconds: parts[1])
        case ("sink", 1): return .respond(sink(request))
        case ("never-answer", 1): return .neverAnswer
        case ("close-immediately", 1): return .closeImmediately
        case ("ws", 2) where parts[1] == "echo": return try webSocketEcho(request)
        default: return .respond(.text("Not Found: \(request.path)", status: 404))
        }
    }

    // MARK: - Parameters

    /// Query item `name` as an integer in `range`, `fallback` when absent; 400 when invalid.
    func intParameter(_ request: HTTPRequest, _ name: String, default fallback: Int, in range: ClosedRange<Int>) throws(RouteError) -> Int {
        guard let text = request.query(name) else { return fallback }
        return try integer(text, name: name, in: range)
    }

    /// Query item `name` as an optional integer in `range`; 400 when invalid.
    func optionalIntParameter(_ request: HTTPRequest, _ name: String, in range: ClosedRange<Int>) throws(RouteError) -> Int? {
        guard let text = request.query(name) else { return nil }
        return try integer(text, name: name, in: range)
    }

    /// Parses a decimal integer in `range`; 400 when invalid.
    func integer(_ text: String, name: String, in range: ClosedRange<Int>) throws(RouteError) -> Int {
        guard let value = HTTPRequestParser.parseDecimal(text), range.contains(value) else {
            throw RouteError("invalid \(name) '\(text)': expected an integer in \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    /// Query item `name` as a flag: `1`/`true`/`yes` or `0`/`false`/`no`/empty; 400 otherwise.
    func flagParameter(_ request: HTTPRequest, _ name: String) throws(RouteError) -> Bool {
        guard let text = request.query(name) else { return false }
        switch text.lowercased() {
        case "1", "true", "yes": return true
        case "0", "false", "no", "": return false
        default: throw RouteError("invalid \(name) '\(text)': expected 1 or 0")
        }
    }

    /// Query item `seed` as a `UInt64` (default 0).
    func seedParameter(_ request: HTTPRequest) throws(RouteError) -> UInt64 {
        guard let text = request.query("seed") else { return 0 }
        guard let seed = UInt64(text), text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else {
            throw RouteError("invalid seed '\(text)': expected an unsigned 64-bit integer")
        }
        return seed
    }

    // MARK: - Echo helpers

    /// The query as a JSON object (last value wins).
    func argsJSON(_ request: HTTPRequest) -> JSONValue {
        .object(lastWins: request.queryItems.map { ($0.name, $0.value) })
    }

    /// The headers as a JSON object, names as sent; repeated names are joined with ", ".
    func headersJSON(_ request: HTTPRequest) -> JSONValue {
        var names: [String] = []
        var values: [String: String] = [:]
        for (name, value) in request.headers {
            if let existing = values[name] {
                values[name] = existing + ", " + value
            } else {
                names.append(name)
                values[name] = value
            }
        }
        return .object(names.map { ($0, .string(values[$0] ?? "")) })
    }

    /// The authority the client used (the Host header), or the server's own.
    func authority(_ request: HTTPRequest) -> String {
        request.header("Host") ?? "\(core.urlHost):\(core.port)"
    }

    /// The full URL of the request.
    func requestURL(_ request: HTTPRequest) -> String {
        request.target.contains("://") ? request.target : "http://\(authority(request))\(request.target)"
    }

    /// The `/get`-style JSON document (also used by `/delay`).
    func getJSON(_ request: HTTPRequest) -> JSONValue {
        .object([
            ("args", argsJSON(request)),
            ("headers", headersJSON(request)),
            ("url", .string(requestURL(request))),
            ("method", .string(request.method)),
        ])
    }
}
