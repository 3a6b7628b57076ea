import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
internal import CourierSupport

/// Checks that a request can be sent as given, before it reaches the network: a header with a
/// line break in it would otherwise split the request head (header injection), and a URL
/// without a host, or a GET with a body, fails late with a vaguer error.
enum RequestValidation {
    /// Throws .invalidRequest for: no URL; a URL that is not absolute http/https with a host; a header
    /// name that is empty or not an RFC 9110 token; a header name or value containing CR, LF or NUL;
    /// a `GET` or `HEAD` request that carries a body.
    ///
    /// Also rejects a method that is not a token (RFC 9110 §9.1), since it is written on the
    /// request line like a header. A URL relative to a base URL is judged by what it resolves
    /// to. Other control characters in values are allowed (RFC 9110 §5.5 lets recipients keep
    /// them). Headers are checked in sorted order, so the error is deterministic.
    ///
    /// A body is a non-empty `httpBody` or any `httpBodyStream`; the method is compared in any
    /// case. FoundationNetworking fails a GET with a body late and misleadingly (-1103, "resource
    /// exceeds maximum size"), and a HEAD's body has no meaning (RFC 9110 §9.3.2).
    static func validate(_ request: URLRequest) throws(CourierError) {
        try validate(request, sendingUploadBody: false)
    }

    /// ``validate(_:)`` for an attempt about to be made; `sendingUploadBody` is true for an upload
    /// task, whose body is not in the request but is sent all the same.
    static func validate(_ request: URLRequest, sendingUploadBody: Bool) throws(CourierError) {
        guard let url = request.url else {
            throw CourierError(code: .invalidRequest, message: "the request has no URL")
        }
        let absolute = url.absoluteURL
        guard let scheme = absolute.scheme, isHTTPScheme(scheme) else {
            throw CourierError(
                code: .invalidRequest, message: "the URL is not an absolute http or https URL", url: url)
        }
        guard let host = absolute.host, !host.isEmpty else {
            throw CourierError(code: .invalidRequest, message: "the URL has no host", url: url)
        }
        if let method = request.httpMethod, !HTTPToken.isToken(method) {
            throw CourierError(
                code: .invalidRequest, message: "the method \(method.debugDescription) is not an RFC 9110 token", url: url)
        }
        let method = request.httpMethod ?? "GET"
        let isGET = ASCIICase.equals(method, "get")
        if isGET || ASCIICase.equals(method, "head"),
            sendingUploadBody || request.httpBody?.isEmpty == false || request.httpBodyStream != nil
        {
            throw CourierError(code: .invalidRequest, message: bodyRefusal(method: isGET ? "GET" : "HEAD"), url: url)
        }
        // Every attempt is checked: the headers are looked at in any order first (no sorting, no
        // allocation), and only a request with a problem is looked at again in sorted order, so
        // that the same bad request always reports the same header.
        let headers = request.allHTTPHeaderFields ?? [:]
        guard headers.contains(where: { problem(name: $0.key, value: $0.value) != nil }) else { return }
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            if let problem = problem(name: name, value: value) {
                throw CourierError(code: .invalidRequest, message: problem, url: url)
            }
        }
    }

    /// What is wrong with one header, or `nil`.
    private static func problem(name: String, value: String) -> String? {
        // The usual case in one pass each: a token has no CR, LF or NUL.
        if HTTPToken.isToken(name), !containsLineBreakOrNUL(value) { return nil }
        if name.isEmpty { return "a header has an empty name" }
        if containsLineBreakOrNUL(name) { return "the header name \(name.debugDescription) contains CR, LF or NUL" }
        if !HTTPToken.isToken(name) { return "the header name \(name.debugDescription) is not an RFC 9110 token" }
        if containsLineBreakOrNUL(value) { return "the value of header \(name) contains CR, LF or NUL: \(value.debugDescription)" }
        return nil
    }

    /// `scheme` is "http" or "https" in any case, without making a lowercased copy.
    private static func isHTTPScheme(_ scheme: String) -> Bool {
        ASCIICase.equals(scheme, "http") || ASCIICase.equals(scheme, "https")
    }

    /// Why a `GET` or `HEAD` request with a body is refused, and what to do instead.
    private static func bodyRefusal(method: String) -> String {
        if method == "HEAD" {
            return
                "a HEAD request cannot carry a body (it has no meaning there, and FoundationNetworking refuses a GET's); send the parameters in the query or use POST"
        }
        return "a GET request cannot carry a body on Linux (FoundationNetworking refuses it); send the parameters in the query or use POST"
    }

    private static func containsLineBreakOrNUL(_ text: String) -> Bool {
        let isBreakOrNUL = { (byte: UInt8) in byte == 0x0D || byte == 0x0A || byte == 0x00 }
        return text.utf8.withContiguousStorageIfAvailable { $0.contains(where: isBreakOrNUL) } ?? text.utf8.contains(where: isBreakOrNUL)
    }
}
