import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `WWW-Authenticate` challenge Courier can answer itself: URLSession on Linux answers neither
/// reliably (a Basic challenge with no credential hangs forever; Digest is never offered to the
/// delegate at all — Docs/Platform.md §2.4).
enum AuthenticationChallenge: Equatable {
    case basic
    case digest(parameters: [String: String])

    /// The strongest challenge in a `WWW-Authenticate` value Courier supports (Digest over Basic).
    init?(header: String) {
        let schemes = Self.split(header)
        if let digest = schemes.first(where: { $0.scheme == "digest" }) {
            self = .digest(parameters: digest.parameters)
        } else if schemes.contains(where: { $0.scheme == "basic" }) {
            self = .basic
        } else {
            return nil
        }
    }

    /// The scheme's name as it is written in headers.
    var scheme: String {
        switch self {
        case .basic: return "Basic"
        case .digest: return "Digest"
        }
    }

    /// The `Authorization` value answering this challenge for `request`.
    func authorization(
        for request: URLRequest, credential: Credential, clientNonce: String = Self.makeClientNonce(), count: Int = 1
    ) -> String? {
        switch self {
        case .basic:
            return credential.basicAuthorization
        case .digest(let parameters):
            return Self.digest(parameters, request: request, credential: credential, clientNonce: clientNonce, count: count)
        }
    }

    /// RFC 7616 §3.4 with `qop=auth` (or none, RFC 2069) and MD5, MD5-sess, SHA-256, SHA-256-sess.
    private static func digest(
        _ parameters: [String: String], request: URLRequest, credential: Credential, clientNonce: String, count: Int
    ) -> String? {
        guard let realm = parameters["realm"], let nonce = parameters["nonce"], let url = request.url else { return nil }
        let algorithm = (parameters["algorithm"] ?? "MD5").uppercased()
        let hash: (String) -> String
        switch algorithm {
        case "MD5", "MD5-SESS": hash = { SHA256.hexString(MD5.hash(Array($0.utf8))) }
        case "SHA-256", "SHA-256-SESS": hash = { SHA256.hexString(SHA256.hash(Data($0.utf8))) }
        default: return nil
        }
        let offered = (parameters["qop"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        if !offered.isEmpty, !offered.contains("auth") { return nil }  // auth-int only: not supported
        // The request target as sent, still percent-encoded (`URL.path` would decode it).
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        var uri = components?.percentEncodedPath ?? "/"
        if uri.isEmpty { uri = "/" }
        if let query = components?.percentEncodedQuery { uri += "?" + query }
        let method = request.httpMethod ?? "GET"
        let nc = String(format: "%08x", count)
        var ha1 = hash("\(credential.user):\(realm):\(credential.password)")
        if algorithm.hasSuffix("-SESS") { ha1 = hash("\(ha1):\(nonce):\(clientNonce)") }
        let ha2 = hash("\(method):\(uri)")
        let response =
            offered.isEmpty
            ? hash("\(ha1):\(nonce):\(ha2)") : hash("\(ha1):\(nonce):\(nc):\(clientNonce):auth:\(ha2)")
        var fields = [
            "username=\(quoted(credential.user))", "realm=\(quoted(realm))", "nonce=\(quoted(nonce))",
            "uri=\(quoted(uri))", "algorithm=\(parameters["algorithm"] ?? "MD5")", "response=\(quoted(response))",
        ]
        if !offered.isEmpty { fields += ["qop=auth", "nc=\(nc)", "cnonce=\(quoted(clientNonce))"] }
        if let opaque = parameters["opaque"] { fields.append("opaque=\(quoted(opaque))") }
        return "Digest " + fields.joined(separator: ", ")
    }

    static func makeClientNonce() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    private static func quoted(_ value: String) -> String {
        "\"" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    /// Splits a `WWW-Authenticate` value into challenges: a scheme token followed by
    /// `name=value` or `name="quoted, value"` parameters (URLSession joins several headers with ", ").
    static func split(_ header: String) -> [(scheme: String, parameters: [String: String])] {
        var result: [(scheme: String, parameters: [String: String])] = []
        let scalars = Array(header.unicodeScalars)
        var index = 0
        func skip(_ set: Set<Character>) { while index < scalars.count, set.contains(Character(scalars[index])) { index += 1 } }
        func token() -> String {
            let start = index
            while index < scalars.count, !" \t,=\"".unicodeScalars.contains(scalars[index]) { index += 1 }
            return String(String.UnicodeScalarView(scalars[start..<index]))
        }
        while index < scalars.count {
            skip([" ", "\t", ","])
            let name = token()
            guard !name.isEmpty else {
                index += 1
                continue
            }
            skip([" ", "\t"])
            if index < scalars.count, scalars[index] == "=" {
                // A parameter of the current challenge.
                index += 1
                skip([" ", "\t"])
                var value = ""
                if index < scalars.count, scalars[index] == "\"" {
                    index += 1
                    while index < scalars.count, scalars[index] != "\"" {
                        if scalars[index] == "\\", index + 1 < scalars.count { index += 1 }
                        value.unicodeScalars.append(scalars[index])
                        index += 1
                    }
                    index += 1
                } else {
                    value = token()
                }
                if !result.isEmpty { result[result.count - 1].parameters[name.lowercased()] = value }
            } else {
                result.append((name.lowercased(), [:]))
            }
        }
        return result
    }
}
