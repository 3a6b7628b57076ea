import Foundation

/// Echo routes: `/get`, `/anything`, `/headers`, `/response-headers`, `/cookies…`, `/basic-auth`.
extension Router {
    /// `GET /get`: the query, headers, URL and method as JSON. Other methods get 405.
    func get(_ request: HTTPRequest) -> HTTPResponse {
        guard request.method == "GET" || request.method == "HEAD" else {
            var response = HTTPResponse.text("Method Not Allowed: /get accepts GET and HEAD", status: 405)
            response.setHeader("Allow", "GET, HEAD")
            return response
        }
        return .json(getJSON(request))
    }

    /// `/anything[/…]`, any method: echoes everything about the request, including the body.
    func anything(_ request: HTTPRequest) -> HTTPResponse {
        let contentType = request.header("Content-Type")?.lowercased() ?? ""
        var form = JSONValue.object([])
        if contentType.hasPrefix("application/x-www-form-urlencoded") {
            let pairs = QueryString.parse(String(decoding: request.body, as: UTF8.self))
            form = .object(lastWins: pairs.map { ($0.name, $0.value) })
        }
        return .json(
            .object([
                ("method", .string(request.method)),
                ("url", .string(requestURL(request))),
                ("args", argsJSON(request)),
                ("headers", headersJSON(request)),
                ("data", .string(String(decoding: request.body, as: UTF8.self))),
                ("bodyLength", .int(Int64(request.bodyLength))),
                ("bodyBase64", .string(request.body.base64EncodedString())),
                ("form", form),
                ("json", JSONValue.parse(request.body) ?? .null),
            ]))
    }

    /// `/headers`: `{"headers":{…}}`.
    func headers(_ request: HTTPRequest) -> HTTPResponse {
        .json(.object([("headers", headersJSON(request))]))
    }

    /// `/response-headers?K=V…`: sets each pair as a response header (in order; a `Content-Type`
    /// replaces the default) and returns the pairs as JSON. Framing headers are not settable.
    func responseHeaders(_ request: HTTPRequest) -> HTTPResponse {
        var response = HTTPResponse.json(.object(lastWins: request.queryItems.map { ($0.name, $0.value) }))
        let reserved: Set<String> = ["content-length", "transfer-encoding", "connection", "date", "server"]
        for (name, value) in request.queryItems where !reserved.contains(name.lowercased()) {
            guard !name.isEmpty, isSafeHeader(name: name, value: value) else { continue }
            if name.caseInsensitiveCompare("Content-Type") == .orderedSame {
                response.setHeader(name, value)
            } else {
                response.headers.append((name, value))
            }
        }
        return response
    }

    /// Whether a header from a query can be written without breaking the response framing.
    private func isSafeHeader(name: String, value: String) -> Bool {
        let forbidden: (Unicode.Scalar) -> Bool = { $0.value < 0x20 || $0.value == 0x7F }
        return !name.unicodeScalars.contains { forbidden($0) || $0 == ":" || $0 == " " }
            && !value.unicodeScalars.contains { forbidden($0) && $0 != "\t" }
    }

    /// The request's cookies, in order.
    private func requestCookies(_ request: HTTPRequest) -> [(String, String)] {
        request.head.headerValues("Cookie").flatMap { $0.split(separator: ";") }.compactMap { item in
            let trimmed = item.trimmingCharacters(in: .whitespaces)
            guard let equals = trimmed.firstIndex(of: "=") else { return trimmed.isEmpty ? nil : (trimmed, "") }
            return (String(trimmed[..<equals]), String(trimmed[trimmed.index(after: equals)...]))
        }
    }

    /// `/cookies`: `{"cookies":{name:value}}` from the Cookie header.
    func cookies(_ request: HTTPRequest) -> HTTPResponse {
        .json(.object([("cookies", .object(lastWins: requestCookies(request)))]))
    }

    /// `/cookies/set?k=v…`: one `Set-Cookie: k=v; Path=/` per pair; the JSON shows the request's
    /// cookies updated with the new ones.
    func setCookies(_ request: HTTPRequest) -> HTTPResponse {
        let pairs = request.queryItems.map { ($0.name, $0.value) }
        var response = HTTPResponse.json(.object([("cookies", .object(lastWins: requestCookies(request) + pairs))]))
        for (name, value) in pairs where isSafeHeader(name: name, value: value) {
            response.headers.append(("Set-Cookie", "\(name)=\(value); Path=/"))
        }
        return response
    }

    /// `/cookies/delete?k…`: expires each named cookie; the JSON shows the remaining ones.
    func deleteCookies(_ request: HTTPRequest) -> HTTPResponse {
        let names = Set(request.queryItems.map(\.name))
        let remaining = requestCookies(request).filter { !names.contains($0.0) }
        var response = HTTPResponse.json(.object([("cookies", .object(lastWins: remaining))]))
        for item in request.queryItems where isSafeHeader(name: item.name, value: "") {
            response.headers.append(("Set-Cookie", "\(item.name)=; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; Path=/"))
        }
        return response
    }

    /// `/basic-auth/{user}/{pass}`: 200 when `Authorization: Basic` carries exactly `user:pass`,
    /// else 401 with a `WWW-Authenticate` challenge.
    func basicAuth(_ request: HTTPRequest, user: String, password: String) -> HTTPResponse {
        let expectedUser = QueryString.percentDecode(Substring(user), plusAsSpace: false)
        let expected = expectedUser + ":" + QueryString.percentDecode(Substring(password), plusAsSpace: false)
        if let authorization = request.header("Authorization") {
            let parts = authorization.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "basic",
                let decoded = Data(base64Encoded: parts[1].trimmingCharacters(in: .whitespaces)),
                String(decoding: decoded, as: UTF8.self) == expected
            {
                return .json(.object([("authenticated", .bool(true)), ("user", .string(expectedUser))]))
            }
        }
        var response = HTTPResponse.json(.object([("authenticated", .bool(false))]), status: 401)
        response.setHeader("WWW-Authenticate", "Basic realm=\"Fake Realm\"")
        return response
    }

    /// `/bearer/{token}?delay_ms=W`: 200 `{"authenticated":true}` when `Authorization: Bearer {token}`
    /// carries exactly that token, else 401 with `WWW-Authenticate: Bearer` — an API whose tokens
    /// expire (a test asks for a token other than the one its client holds). The answer waits W ms first.
    func bearer(_ request: HTTPRequest, token: String) throws(RouteError) -> HTTPResponse {
        let expected = "Bearer " + QueryString.percentDecode(Substring(token), plusAsSpace: false)
        var response: HTTPResponse
        if request.header("Authorization") == expected {
            response = .json(.object([("authenticated", .bool(true))]))
        } else {
            response = .json(.object([("authenticated", .bool(false))]), status: 401)
            response.setHeader("WWW-Authenticate", "Bearer realm=\"Fake Realm\"")
        }
        response.delivery.initialDelayMilliseconds = try intParameter(request, "delay_ms", default: 0, in: 0...60_000)
        return response
    }

    /// `/authorized/{route…}`: the answer of `/{route…}` (same method, query and body) when
    /// `Authorization: Bearer` carries the token the server issued last (``TestServer/issueToken()``),
    /// else 401 with `WWW-Authenticate: Bearer` — an API that revokes tokens on its side.
    func authorized(_ request: HTTPRequest, rest: String) throws(RouteError) -> RouteAction {
        guard let token = core.tokens.current, request.header("Authorization") == "Bearer " + token else {
            var response = HTTPResponse.json(.object([("authenticated", .bool(false))]), status: 401)
            response.setHeader("WWW-Authenticate", "Bearer realm=\"Fake Realm\", error=\"invalid_token\"")
            return .respond(response)
        }
        return try dispatch(request.routed(to: "/" + rest))
    }
}
