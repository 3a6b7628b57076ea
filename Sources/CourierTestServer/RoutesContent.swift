import Foundation

/// Fixed-content routes: `/json`, `/html`, `/base64`, `/gzip`, `/gzip-bomb`.
extension Router {
    /// The exact body of `/json`.
    static let jsonDocument =
        #"{"slideshow":{"title":"Sample","author":null,"slides":[{"title":"One","items":[1,2]},{"title":"Two","draft":true}]}}"#

    /// The exact body of `/html`.
    static let htmlDocument = """
        <!DOCTYPE html>
        <html><head><meta charset="utf-8"><title>CourierTestServer</title></head>
        <body><h1>CourierTestServer</h1><p>Grüße aus dem Testserver.</p></body></html>

        """

    /// `/json`: a fixed document with every JSON value type.
    func json() -> HTTPResponse {
        HTTPResponse(status: 200, headers: [("Content-Type", "application/json")], body: ResponseBody(Data(Self.jsonDocument.utf8)))
    }

    /// `/html`: a small UTF-8 page.
    func html() -> HTTPResponse {
        HTTPResponse(status: 200, headers: [("Content-Type", "text/html; charset=utf-8")], body: ResponseBody(Data(Self.htmlDocument.utf8)))
    }

    /// `/base64/{value}?content_type=T`: the bytes of base64url (or standard base64) `value`,
    /// padding optional, with Content-Type T (default `application/octet-stream`).
    func base64(_ request: HTTPRequest, value: String) throws(RouteError) -> HTTPResponse {
        var text = QueryString.percentDecode(Substring(value), plusAsSpace: false)
            .replacingOccurrences(of: "-", with: "+")
            .replacingOccurrences(of: "_", with: "/")
        if text.count % 4 != 0 { text += String(repeating: "=", count: 4 - text.count % 4) }
        guard let data = Data(base64Encoded: text) else { throw RouteError("invalid base64 value") }
        let contentType = request.query("content_type") ?? "application/octet-stream"
        guard !contentType.unicodeScalars.contains(where: { $0.value < 0x20 }) else { throw RouteError("invalid content_type") }
        return HTTPResponse(status: 200, headers: [("Content-Type", contentType)], body: ResponseBody(data))
    }

    /// `/gzip`: a gzip-encoded JSON document (`{"gzipped":true,"method":…,"headers":{…}}`).
    func gzip(_ request: HTTPRequest) -> HTTPResponse {
        let document = JSONValue.object([
            ("gzipped", .bool(true)),
            ("method", .string(request.method)),
            ("headers", headersJSON(request)),
        ])
        return HTTPResponse(
            status: 200,
            headers: [("Content-Type", "application/json"), ("Content-Encoding", "gzip")],
            body: ResponseBody(Gzip.compress(document.data))
        )
    }

    /// The largest `/gzip-bomb` size (it is generated on the fly, so this only bounds test time).
    static let maxGzipBombSize = 1 << 30

    /// `/gzip-bomb?size=N`: a gzip stream (stored blocks) that inflates to N zero bytes (default 1 MiB).
    func gzipBomb(_ request: HTTPRequest) throws(RouteError) -> HTTPResponse {
        let size = try intParameter(request, "size", default: 1 << 20, in: 0...Self.maxGzipBombSize)
        return HTTPResponse(
            status: 200,
            headers: [("Content-Type", "application/octet-stream"), ("Content-Encoding", "gzip")],
            body: Gzip.zeros(length: size)
        )
    }
}
