import Foundation

/// Status and redirect routes: `/`, `/status`, `/redirect`, `/redirect-to`.
extension Router {
    /// `/`: a plain-text list of routes.
    func index() -> HTTPResponse {
        .text(
            """
            CourierTestServer routes:
            /get /anything /headers /response-headers /cookies /cookies/set /cookies/delete /basic-auth/{user}/{pass} /digest-auth/{qop}/{user}/{pass}
            /status/{code} /redirect/{n} /redirect-to /json /html /base64/{value} /gzip /gzip-bomb
            /bytes/{n} /stream-bytes/{n} /files/{name} /drip /sse /ndjson /delay/{ms} /sink /never-answer /close-immediately
            """, status: 200)
    }

    /// `/status/{code}`: answers with that status (100–599).
    func status(_ request: HTTPRequest, code text: String) throws(RouteError) -> HTTPResponse {
        let code = try integer(text, name: "status code", in: 100...599)
        var response = HTTPResponse(status: code)
        if code == 401 { response.headers.append(("WWW-Authenticate", "Basic realm=\"Fake Realm\"")) }
        if [301, 302, 303, 307, 308].contains(code) { response.headers.append(("Location", "/get")) }
        if let retryAfter = request.query("retry_after") {
            // Reflected into a header: a CR or LF would let the query write header lines of its own.
            guard !retryAfter.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                throw RouteError("retry_after contains control characters")
            }
            response.headers.append(("Retry-After", retryAfter))
        }
        if let body = request.query("body"), !HTTPStatus.forbidsBody(code) {
            response.headers.append(("Content-Type", "text/plain; charset=utf-8"))
            response.body = ResponseBody(Data(body.utf8))
        }
        return response
    }

    /// `/redirect/{n}`: 302 to `/redirect/{n-1}`, and `/redirect/1` to `/get`.
    /// With `?absolute=1` the Locations are absolute URLs on the authority the client used.
    func redirect(_ request: HTTPRequest, count text: String) throws(RouteError) -> HTTPResponse {
        let count = try integer(text, name: "redirect count", in: 1...100)
        let absolute = try flagParameter(request, "absolute")
        let next = count > 1 ? "/redirect/\(count - 1)" : "/get"
        let location = absolute ? "http://\(authority(request))\(next)\(count > 1 ? "?absolute=1" : "")" : next
        return HTTPResponse(status: 302, headers: [("Location", location)])
    }

    /// `/redirect-to?url=U&status_code=C`: status C (300–399, default 302) with `Location: U` verbatim.
    func redirectTo(_ request: HTTPRequest) throws(RouteError) -> HTTPResponse {
        guard let url = request.query("url"), !url.isEmpty else { throw RouteError("missing url parameter") }
        guard !url.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw RouteError("url contains control characters")
        }
        let code = try intParameter(request, "status_code", default: 302, in: 300...399)
        return HTTPResponse(status: code, headers: [("Location", url)])
    }

    /// `/redirect-loop`: 302 back to itself, forever (for loop detection).
    func redirectLoop() -> HTTPResponse {
        HTTPResponse(status: 302, headers: [("Location", "/redirect-loop")])
    }
}
