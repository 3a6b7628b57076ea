import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension CourierError {
    static func sessionInvalidated(url: URL?) -> CourierError {
        CourierError(
            code: .sessionInvalidated,
            message: "the session manager was invalidated or released; create tasks on a live manager",
            url: url)
    }

    static func cancelled(url: URL?) -> CourierError {
        CourierError(code: .cancelled, message: "the task was cancelled", url: url)
    }

    static func responseTooLarge(url: URL?, limit: Int, response: HTTPURLResponse?) -> CourierError {
        CourierError(
            code: .responseTooLarge,
            message: "the response body exceeds the in-memory limit of \(limit) bytes; raise maximumResponseSize or download to a file",
            url: url, response: response)
    }

    static func fileSystem(_ message: String, url: URL?, errno code: Int32? = nil) -> CourierError {
        let underlying = code.map { POSIXError(POSIXErrorCode(rawValue: $0) ?? .EIO) }
        let detail = code.map { ": " + String(cString: strerror($0)) } ?? ""
        return CourierError(code: .fileSystem, message: message + detail, url: url, underlyingError: underlying)
    }

    /// No route to the host of `url`: after a transport failure (`underlying`), or after waiting
    /// `waited` for a route in vain. The message names the network, not the server.
    static func networkUnreachable(url: URL?, waited: Duration?, underlying: CourierError?) -> CourierError {
        let host = url?.host.map { " \($0)" } ?? ""
        var message = "the network is unreachable: this machine has no route to\(host.isEmpty ? " the host" : host)"
        if let waited { message += " (waited \(Backoff.describe(waited)) for one)" }
        if let underlying { message += "; the connection failed with: \(underlying.message)" }
        return CourierError(
            code: .networkUnreachable, message: message, url: url, response: underlying?.response,
            underlyingError: underlying)
    }

    /// Maps what URLSession reported into Courier's codes. Timeouts on Linux carry no failing URL,
    /// so the request URL is always attached here (Docs/Platform.md §2.11). `tls` names the
    /// server the failing request went to and the TLS policy it had: a TLS error says both.
    static func transport(_ error: any Error, url: URL?, response: HTTPURLResponse?, tls: TLSContext? = nil) -> CourierError {
        let nsError = error as NSError
        var (code, message) = classifyTransport(
            code: nsError.domain == NSURLErrorDomain ? nsError.code : 0, text: nsError.localizedDescription,
            hasResponse: response != nil)
        if code.isTLS, let tls { message += " [\(tls)]" }
        return CourierError(code: code, message: message, url: url, response: response, underlyingError: error)
    }

    /// The code and message for a URLSession error code and its text: a pure function, so the
    /// table of what FoundationNetworking and libcurl say can be tested without sockets.
    ///
    /// FoundationNetworking gives the usual `URLError` codes for some libcurl failures and `-1`
    /// with libcurl's own text for the rest (Docs/Platform.md §2.12), so `-1` is read by its text.
    /// The messages below were seen with libcurl 7.88.1 and OpenSSL 3.0.
    static func classifyTransport(code urlErrorCode: Int, text: String, hasResponse: Bool) -> (Code, String) {
        switch urlErrorCode {
        case NSURLErrorTimedOut:
            return (.timedOut, "the server did not answer within the request timeout")
        case NSURLErrorCancelled:
            return (.cancelled, "the task was cancelled")
        case NSURLErrorUnsupportedURL, NSURLErrorBadURL:
            return (.invalidRequest, "the URL is not one Courier can request: \(text)")
        case NSURLErrorFileDoesNotExist, NSURLErrorCannotOpenFile, NSURLErrorNoPermissionsToReadFile,
            NSURLErrorFileIsDirectory, -1100 /* URLSession on Linux: "File system error" */:
            return (.uploadSourceFailed, "the upload body could not be read: \(text)")
        case NSURLErrorCannotFindHost, NSURLErrorDNSLookupFailed:
            // -1003 "Could not resolve host: …"
            return (.dnsFailed, Self.dnsMessage(text))
        case NSURLErrorCannotConnectToHost:
            // -1004 "Failed to connect to 127.0.0.1 port 9 after 0 ms: Couldn't connect to server"
            return (.connectionRefused, Self.refusedMessage(text))
        case NSURLErrorNetworkConnectionLost:
            // -1005 "Recv failure: Connection reset by peer"
            return (.connectionLost, Self.lostMessage(text))
        case NSURLErrorBadServerResponse where text.contains("Empty reply from server") || !hasResponse:
            // -1011 "Empty reply from server": the connection closed before any response byte.
            return (.noResponse, Self.noResponseMessage(text))
        case -1207 ... -1200:
            // The secure-connection series, by number: swift-corelibs-foundation's constants are
            // one off from Apple's (its `NSURLErrorSecureConnectionFailed` is -1201, not -1200, and
            // its `NSURLErrorClientCertificateRequired` -1207), so the names would miss -1200.
            return (.tlsFailed, Self.tlsMessage(text))
        case -1:
            return classifyCurlText(text)
        default:
            return (.network, text)
        }
    }

    /// `-1`: libcurl's text is all there is to go on.
    private static func classifyCurlText(_ text: String) -> (Code, String) {
        func has(_ fragment: String) -> Bool { text.range(of: fragment, options: .caseInsensitive) != nil }
        if text.hasPrefix("Invalid Content-Length") {
            // libcurl refuses a negative or oversized length itself; the server is at fault, and
            // trying again would only get the same answer.
            return (.invalidResponse, "a malformed Content-Length (\(text))")
        }
        if has("Unrecognized content encoding") {
            // "Unrecognized content encoding type. libcurl understands deflate, gzip, br, zstd
            // content encodings.": a `Content-Encoding` or `Transfer-Encoding` libcurl cannot
            // decode (`x-unknown`). The same server sends the same coding again: not transient.
            return (.invalidResponse, "the response uses a content or transfer coding libcurl cannot decode (\(text))")
        }
        if has("Could not resolve") {
            // "Could not resolve host: …", "Could not resolve proxy: …"
            return (.dnsFailed, dnsMessage(text))
        }
        if has("Failed to connect") || has("Couldn't connect") {
            return (.connectionRefused, refusedMessage(text))
        }
        if has("Empty reply from server") {
            return (.noResponse, noResponseMessage(text))
        }
        // Before the lost connections: with TLS 1.3 a server's refusal of the client certificate
        // arrives while reading ("OpenSSL SSL_read: … tlsv13 alert certificate required").
        if let tls = classifyTLSText(text) { return tls }
        // Checked before TLS: over https a connection that breaks mid-transfer reads
        // "OpenSSL SSL_read: …", which is a lost connection, not a failed handshake.
        let lost = [
            "transfer closed", "end of response with", "Recv failure", "Send failure", "Connection reset",
            "Connection died", "SSL_read", "SSL_write",
        ]
        if lost.contains(where: has) {
            // "transfer closed with 95000 bytes remaining to read"
            return (.connectionLost, lostMessage(text))
        }
        if text.contains("SSL") || text.contains("TLS") || has("certificate") {
            // "SSL certificate problem: self-signed certificate",
            // "SSL certificate problem: certificate has expired",
            // "SSL: certificate subject name 'localhost' does not match target host name '127.0.0.1'",
            // "OpenSSL/3.0.19: error:0A00010B:SSL routines::wrong version number"
            return (.tlsFailed, tlsMessage(text))
        }
        return (.network, text)
    }

    /// The precise TLS failures, by the fixed texts libcurl 7.88.1 (OpenSSL backend) gives them;
    /// `nil` for any other text.
    static func classifyTLSText(_ text: String) -> (Code, String)? {
        func has(_ fragment: String) -> Bool { text.range(of: fragment, options: .caseInsensitive) != nil }
        if has("does not match pinned public key") {
            // CURLE_SSL_PINNEDPUBKEYNOTMATCH: "SSL: public key does not match pinned public key"
            return (.tlsPinMismatch, "the server's public key matches none of the pinned keys; nothing was sent (\(text))")
        }
        if has("alert certificate required") {
            // TLS 1.3: "OpenSSL SSL_read: … tlsv13 alert certificate required"
            return (.tlsClientCertificateRequired, "the server requires a client certificate and none was given (\(text))")
        }
        // Alerts a server sends about the certificate the client showed (a client's own
        // verification of the server fails with "SSL certificate problem" instead).
        let refusedIdentity = [
            "alert unknown ca", "alert bad certificate", "alert certificate unknown",
            "alert certificate expired", "alert certificate revoked", "alert unsupported certificate",
        ]
        if refusedIdentity.contains(where: has) {
            return (.tlsClientCertificateRequired, "the server refused the client certificate (\(text))")
        }
        if has("certificate has expired") || has("certificate is not yet valid") {
            // CURLE_PEER_FAILED_VERIFICATION: "SSL certificate problem: certificate has expired"
            return (.tlsCertificateExpired, "the server's certificate is outside its validity period; nothing was sent (\(text))")
        }
        if has("does not match target host name") || has("no alternative certificate subject name matches") {
            // "SSL: no alternative certificate subject name matches target host name '127.0.0.1'"
            return (.tlsHostNameMismatch, "the server's certificate does not name this host; nothing was sent (\(text))")
        }
        if has("SSL certificate problem") {
            // "SSL certificate problem: unable to get local issuer certificate", "…: self-signed certificate"
            return (.tlsCertificateUntrusted, "the server's certificate is not signed by a trusted authority; nothing was sent (\(text))")
        }
        return nil
    }

    private static func dnsMessage(_ text: String) -> String { "the host name could not be resolved (\(text))" }
    private static func refusedMessage(_ text: String) -> String {
        "could not connect: the server refused the connection or cannot be reached (\(text))"
    }
    private static func lostMessage(_ text: String) -> String {
        "the connection was lost before the transfer was complete (\(text))"
    }
    private static func noResponseMessage(_ text: String) -> String {
        "the server closed the connection without sending a response (\(text))"
    }
    private static func tlsMessage(_ text: String) -> String { "the TLS connection could not be set up (\(text))" }

    /// An answer whose `Content-Length` no file has (``ContentLength/firstImpossible``): not a
    /// usable response, so it counts as one that never came (``Code-swift.struct/noResponse``,
    /// transient) and the retry model continues the body as after a lost connection.
    static func impossibleLength(_ value: String, _ response: HTTPURLResponse?) -> CourierError {
        CourierError(
            code: .noResponse, message: "the server's answer claimed an impossible Content-Length (\(value)), so it was not used",
            url: response?.url, response: response)
    }

    /// A transfer that ended, without an error from URLSession, but with no HTTP response.
    static func noResponse(url: URL?) -> CourierError {
        CourierError(code: .noResponse, message: "no HTTP response was received", url: url)
    }
}
