import Foundation

/// `/signed/bytes/{n}`: a resource behind an expiring signed URL, like a cloud storage link.
extension Router {
    /// The signature of a `/signed` URL: MD5 over the server's key, the path and the expiry.
    static func signature(key: String, path: String, expires: Int) -> String {
        MD5.hex("\(key)|\(path)|\(expires)")
    }

    /// `/signed/bytes/{n}?expires=E&sig=S` (plus `/bytes`' own parameters): `/bytes/{n}` while
    /// the Unix time is before E and S signs the path and E; otherwise 403. Ranges continue across
    /// URLs signed at different times: the validators are `/bytes`' own.
    func signedBytes(_ request: HTTPRequest, count text: String) throws(RouteError) -> HTTPResponse {
        guard let expiresText = request.query("expires"), let expires = Int(expiresText), let signature = request.query("sig"),
            signature == Self.signature(key: core.signingKey, path: request.path, expires: expires)
        else {
            return .text("Forbidden: the signature does not match", status: 403)
        }
        guard Int(Date().timeIntervalSince1970) < expires else {
            return .text("Forbidden: the signed URL expired", status: 403)
        }
        return try bytes(request, count: text)
    }
}
