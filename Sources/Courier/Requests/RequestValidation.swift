import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Checks that a request can be sent as given, before it reaches the network: a header with a
/// line break in it would otherwise split the request head (header injection), and a URL
/// without a host fails late with a vaguer error.
public enum RequestValidation {
    /// Throws .invalidRequest for: no URL; a URL that is not absolute http/https with a host; a header
    /// name that is empty or not an RFC 9110 token; a header name or value containing CR, LF or NUL.
    ///
    /// Also rejects a method that is not a token (RFC 9110 §9.1), since it is written on the
    /// request line like a header. A URL relative to a base URL is judged by what it resolves
    /// to. Other control characters in values are allowed (RFC 9110 §5.5 lets recipients keep
    /// them). Headers are checked in sorted order, so the error is deterministic.
    public static func validate(_ request: URLRequest) throws {
        guard let url = request.url else {
            throw CourierError(code: .invalidRequest, message: "the request has no URL")
        }
        let absolute = url.absoluteURL
        guard let scheme = absolute.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw CourierError(
                code: .invalidRequest, message: "the URL is not an absolute http or https URL", url: url)
        }
        guard let host = absolute.host, !host.isEmpty else {
            throw CourierError(code: .invalidRequest, message: "the URL has no host", url: url)
        }
        if let method = request.httpMethod, !isToken(method) {
            throw CourierError(
                code: .invalidRequest, message: "the method \(method.debugDescription) is not an RFC 9110 token", url: url)
        }
        for (name, value) in (request.allHTTPHeaderFields ?? [:]).sorted(by: { $0.key < $1.key }) {
            if name.isEmpty {
                throw CourierError(code: .invalidRequest, message: "a header has an empty name", url: url)
            }
            if containsLineBreakOrNUL(name) {
                throw CourierError(
                    code: .invalidRequest, message: "the header name \(name.debugDescription) contains CR, LF or NUL",
                    url: url)
            }
            if !isToken(name) {
                throw CourierError(
                    code: .invalidRequest, message: "the header name \(name.debugDescription) is not an RFC 9110 token",
                    url: url)
            }
            if containsLineBreakOrNUL(value) {
                throw CourierError(
                    code: .invalidRequest,
                    message: "the value of header \(name) contains CR, LF or NUL: \(value.debugDescription)", url: url)
            }
        }
    }

    /// Whether `text` is an RFC 9110 token: one or more `tchar`s.
    static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy(isTokenCharacter)
    }

    /// `tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." / "^" / "_" / "`" / "|" / "~" / DIGIT / ALPHA`
    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    private static func containsLineBreakOrNUL(_ text: String) -> Bool {
        text.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }
    }
}
