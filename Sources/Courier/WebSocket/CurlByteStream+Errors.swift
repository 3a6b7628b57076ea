import Foundation
internal import CCourierPlatformFixes
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension CurlByteStream {
    /// The error for a libcurl failure of a stream: the code HTTP tasks get for the same cause.
    ///
    /// FoundationNetworking turns a few `CURLcode`s into `URLError` codes and reports the rest
    /// as `-1` with libcurl's text (Docs/Platform.md §2.12); ``urlErrorCode(curlCode:)`` does the
    /// same, and the one classifier (`CourierError.classifyTransport`) decides — so a refused
    /// connection, a DNS failure, a pin mismatch or an untrusted certificate reads the same on a
    /// WebSocket as on a request. A TLS error names the host and its policy.
    static func error(curlCode: Int32, text: String, url: URL, tls: TLSContext?) -> CourierError {
        if curlCode == COURIER_STREAM_ABORTED_BY_CALLBACK {
            // CURLE_ABORTED_BY_CALLBACK: only the cancellation flag aborts a connect.
            return CourierError.cancelled(url: url)
        }
        let detail = text.isEmpty ? "libcurl error \(curlCode)" : text
        var (code, message) = CourierError.classifyTransport(code: urlErrorCode(curlCode: curlCode), text: detail, hasResponse: false)
        if code.isTLS, let tls { message += " [\(tls)]" }
        return CourierError(code: code, message: message, url: url)
    }

    /// The `URLError` code FoundationNetworking gives a `CURLcode` (swift-corelibs-foundation's
    /// `MultiHandle.swift`, `urlErrorCode(for:)`), `-1` for the codes it reports by their text
    /// (`CURLE_COULDNT_CONNECT` among them: "Failed to connect … Couldn't connect to server"; its
    /// `ETIMEDOUT` case is not told apart here, libcurl's own connect timeout being
    /// `CURLE_OPERATION_TIMEDOUT`). Pure.
    static func urlErrorCode(curlCode: Int32) -> Int {
        switch curlCode {
        case 1: return NSURLErrorUnsupportedURL  // CURLE_UNSUPPORTED_PROTOCOL
        case 3: return NSURLErrorBadURL  // CURLE_URL_MALFORMAT
        case 6: return NSURLErrorCannotFindHost  // CURLE_COULDNT_RESOLVE_HOST
        case 28: return NSURLErrorTimedOut  // CURLE_OPERATION_TIMEDOUT
        case 52: return NSURLErrorBadServerResponse  // CURLE_GOT_NOTHING
        default: return -1
        }
    }
}
