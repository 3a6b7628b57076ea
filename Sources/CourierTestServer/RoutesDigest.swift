import Foundation

extension Router {
    /// `/digest-auth/{qop}/{user}/{pass}`: 200 when `Authorization: Digest` answers the challenge
    /// for `user:pass` (RFC 7616, MD5, `qop=auth`; `qop` in the path may be `auth` or `none` for
    /// the RFC 2069 form), else 401 with a fresh `WWW-Authenticate: Digest` challenge.
    func digestAuth(_ request: HTTPRequest, qop: String, user: String, password: String) -> HTTPResponse {
        let realm = "courier-test"
        if let authorization = request.header("Authorization"), authorization.lowercased().hasPrefix("digest ") {
            let fields = Self.digestFields(String(authorization.dropFirst(7)))
            if let nonce = fields["nonce"], let uri = fields["uri"], let answer = fields["response"],
                fields["username"] == user, fields["realm"] == realm, uri == request.target
            {
                let ha1 = MD5.hex("\(user):\(realm):\(password)")
                let ha2 = MD5.hex("\(request.method):\(uri)")
                let expected: String
                if qop == "auth", let nc = fields["nc"], let cnonce = fields["cnonce"], fields["qop"] == "auth" {
                    expected = MD5.hex("\(ha1):\(nonce):\(nc):\(cnonce):auth:\(ha2)")
                } else {
                    expected = qop == "auth" ? "" : MD5.hex("\(ha1):\(nonce):\(ha2)")
                }
                if !expected.isEmpty, answer == expected {
                    return .json(.object([("authenticated", .bool(true)), ("user", .string(user))]))
                }
            }
        }
        let nonce = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        var challenge = "Digest realm=\"\(realm)\", nonce=\"\(nonce)\", algorithm=MD5, opaque=\"c0ffee\""
        if qop == "auth" { challenge += ", qop=\"auth\"" }
        var response = HTTPResponse.json(.object([("authenticated", .bool(false))]), status: 401)
        response.setHeader("WWW-Authenticate", challenge)
        return response
    }

    /// `name=value, name="quoted value"` pairs of a Digest `Authorization` header.
    static func digestFields(_ text: String) -> [String: String] {
        var fields: [String: String] = [:]
        var rest = Substring(text)
        while let equals = rest.firstIndex(of: "=") {
            let name = rest[..<equals].trimmingCharacters(in: CharacterSet(charactersIn: " ,")).lowercased()
            rest = rest[rest.index(after: equals)...]
            var value = ""
            if rest.first == "\"" {
                rest = rest.dropFirst()
                var escaped = false
                while let character = rest.first {
                    rest = rest.dropFirst()
                    if escaped {
                        value.append(character); escaped = false
                    } else if character == "\\" {
                        escaped = true
                    } else if character == "\"" {
                        break
                    } else {
                        value.append(character)
                    }
                }
            } else {
                let end = rest.firstIndex(of: ",") ?? rest.endIndex
                value = rest[..<end].trimmingCharacters(in: .whitespaces)
                rest = rest[end...]
            }
            fields[name] = value
        }
        return fields
    }
}
