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

    /// Maps what URLSession reported into Courier's codes. Timeouts on Linux carry no failing URL,
    /// so the request URL is always attached here (Docs/Platform.md §2.11).
    static func transport(_ error: any Error, url: URL?, response: HTTPURLResponse?) -> CourierError {
        let nsError = error as NSError
        let code: Code
        let message: String
        switch nsError.domain == NSURLErrorDomain ? nsError.code : 0 {
        case NSURLErrorTimedOut:
            code = .timedOut
            message = "the server did not answer within the request timeout"
        case NSURLErrorCancelled:
            code = .cancelled
            message = "the task was cancelled"
        case NSURLErrorUnsupportedURL, NSURLErrorBadURL:
            code = .invalidRequest
            message = "the URL is not one Courier can request: \(nsError.localizedDescription)"
        case NSURLErrorFileDoesNotExist, NSURLErrorCannotOpenFile, NSURLErrorNoPermissionsToReadFile,
            NSURLErrorFileIsDirectory, -1100 /* URLSession on Linux: "File system error" */:
            code = .uploadSourceFailed
            message = "the upload body could not be read: \(nsError.localizedDescription)"
        case -1 where nsError.localizedDescription.hasPrefix("Invalid Content-Length"):
            // libcurl refuses a negative or oversized length itself; the server is at fault, and
            // trying again would only get the same answer.
            code = .invalidResponse
            message = "a malformed Content-Length (\(nsError.localizedDescription))"
        default:
            code = .network
            message = nsError.localizedDescription
        }
        return CourierError(code: code, message: message, url: url, response: response, underlyingError: error)
    }
}
