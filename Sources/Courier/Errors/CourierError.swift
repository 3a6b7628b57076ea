import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The one error type Courier reports.
///
/// A struct rather than an enum so that new kinds of failure can be added without breaking
/// callers' `switch` statements: compare ``code`` against the static members of ``Code``.
/// Every error carries the context a person needs to act on it: the URL, the HTTP response and
/// body when there was one, and the underlying error.
///
/// What it says is safe to log: ``message`` and ``description`` never hold a URL's user info or
/// a secret query parameter in clear — every URL in them goes through ``Redaction/default``
/// (`https://***@host/file?X-Amz-Signature=***`), so a failing presigned URL does not put a
/// working credential in a service's log. ``url`` keeps the URL as requested, for code; print
/// it through a ``Redaction`` (``Redaction/url(_:)``), never as it is.
public struct CourierError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is. Compare with the static members (`error.code == .timedOut`).
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Kind: String, Sendable, CaseIterable {
            case sessionInvalidated, cancelled, network, timedOut, invalidRequest
            case responseTooLarge, unacceptableStatusCode, unacceptableContentType, unacceptableResponse
            case emptyResponse, decodingFailed, destinationFailed, fileSystem, uploadSourceFailed
            case integrityFailed, invalidResumeData, adaptationFailed, redirectRefused
            case invalidResponse, deadlineExceeded, bufferOverflow
            case dnsFailed, connectionRefused, connectionLost, tlsFailed, noResponse, networkUnreachable
            case tlsPinMismatch, tlsCertificateUntrusted, tlsCertificateExpired, tlsHostNameMismatch
            case tlsClientCertificateRequired, tlsPolicyUnenforceable
            case leaseLost, storeUnavailable, storeIncompatible
        }
        private let kind: Kind
        private init(_ kind: Kind) { self.kind = kind }
        /// Every code, for tests that must cover them all.
        static var allCodes: [Code] { Kind.allCases.map(Code.init) }
        /// The code whose ``description`` is `name` (`"timedOut"`), or `nil` when there is none.
        public init?(name: String) {
            guard let kind = Kind(rawValue: name) else { return nil }
            self.init(kind)
        }

        /// The manager was invalidated (or released) before the task could run or finish.
        public static let sessionInvalidated = Code(.sessionInvalidated)
        /// The task was cancelled by the caller (`cancel()`, or cancelling the Swift `Task`).
        public static let cancelled = Code(.cancelled)
        /// A transport failure none of the more precise transport codes describes (``isTransport``
        /// lists them all). Before they existed, every transport failure was `network`: code that
        /// checked `code == .network` now checks ``CourierError/isTransport``.
        public static let network = Code(.network)
        /// The host name could not be resolved (URLSession's -1003 "cannot find host", or libcurl's
        /// "Could not resolve host"). Nothing was sent. Usually a typo or a configuration problem,
        /// so it is not retried by default.
        public static let dnsFailed = Code(.dnsFailed)
        /// No connection could be made: the server refused it (nothing listens on the port), or
        /// the host could not be reached (URLSession's -1004 "cannot connect to host"). Nothing
        /// was sent, so trying again is safe for any method.
        public static let connectionRefused = Code(.connectionRefused)
        /// The connection broke after the request was sent: reset by the peer, or closed before
        /// the body announced was complete (URLSession's -1005, libcurl's "transfer closed with N
        /// bytes remaining", "Recv failure: Connection reset by peer"). The server may have acted
        /// on the request. ``CourierError/response`` is set when the head had arrived.
        public static let connectionLost = Code(.connectionLost)
        /// The TLS connection could not be set up, for a reason none of the precise TLS codes
        /// names (URLSession's -1200 series, or libcurl's other SSL errors): "wrong version number"
        /// (a plain-HTTP server on an https URL), a handshake failure. The message keeps OpenSSL's
        /// reason. Untrusted, expired and misnamed certificates, pins and client certificates have
        /// codes of their own (``tlsCertificateUntrusted``…; ``isTLS`` covers them all). Not
        /// retried by default.
        public static let tlsFailed = Code(.tlsFailed)
        /// The server's public key matched none of the pins of the ``TLSPolicy`` for its host
        /// (libcurl's `CURLE_SSL_PINNEDPUBKEYNOTMATCH`). Checked during the handshake: nothing
        /// was sent. The message names the host and the pin set.
        public static let tlsPinMismatch = Code(.tlsPinMismatch)
        /// The server's certificate does not lead to a trusted authority (self-signed, or signed by
        /// a CA neither the system nor the ``TLSPolicy`` trusts). Nothing was sent.
        public static let tlsCertificateUntrusted = Code(.tlsCertificateUntrusted)
        /// The server's certificate has expired (or is not valid yet). Adding a CA never changes
        /// this. Nothing was sent.
        public static let tlsCertificateExpired = Code(.tlsCertificateExpired)
        /// The server's certificate does not name the host asked for. Adding a CA never changes
        /// this. Nothing was sent.
        public static let tlsHostNameMismatch = Code(.tlsHostNameMismatch)
        /// The server asked for a client certificate and none was given, or refused the one given
        /// (``TLSPolicy/clientIdentity``). With TLS 1.3 the server says so only after the
        /// handshake, so the request may have been sent (the server refused it unread).
        public static let tlsClientCertificateRequired = Code(.tlsClientCertificateRequired)
        /// A ``TLSPolicy`` applies to the request but cannot be enforced here: Courier's platform
        /// kit is turned off or inert, libcurl lacks an option the policy needs, or a file the
        /// policy names cannot be read. Nothing was sent: a request never goes out with weaker
        /// checks than its policy asks for (Docs/TLS.md).
        public static let tlsPolicyUnenforceable = Code(.tlsPolicyUnenforceable)
        /// The server closed the connection without sending any response (URLSession's -1011
        /// "Empty reply from server"), or a transfer ended with no HTTP response at all. The
        /// server may have acted on the request.
        public static let noResponse = Code(.noResponse)
        /// This machine has no route to the host: the network, not the server, is the problem (no
        /// interface up, no address, no default route). Decided by the kernel's route lookup
        /// (``HostReachability``) when a transport failure happens, or when a request that waits
        /// for connectivity (``SessionManager/Configuration/waitsForConnectivity``) gave up.
        /// Not transient: a retry a moment later meets the same routing table, so Courier waits
        /// for a route instead (with `waitsForConnectivity`) or fails at once.
        public static let networkUnreachable = Code(.networkUnreachable)
        /// The server did not answer within the request timeout.
        public static let timedOut = Code(.timedOut)
        /// The request could not be sent as given (bad URL, unsupported scheme…).
        public static let invalidRequest = Code(.invalidRequest)
        /// The body grew past the manager's `maximumResponseSize`; the transfer was stopped.
        public static let responseTooLarge = Code(.responseTooLarge)
        /// The HTTP status is outside the acceptable range of the validation in force.
        public static let unacceptableStatusCode = Code(.unacceptableStatusCode)
        /// The response `Content-Type` is not one the validation accepts.
        public static let unacceptableContentType = Code(.unacceptableContentType)
        /// A validation rule of your own (``Validation/validate(_:)``), or the request's `Accept`
        /// (``Validation/matchingAccept()``), refused the response. A rule's own error is the
        /// ``CourierError/underlyingError``.
        public static let unacceptableResponse = Code(.unacceptableResponse)
        /// The body was empty where the serializer needs content.
        public static let emptyResponse = Code(.emptyResponse)
        /// The body could not be turned into the requested value (text, JSON, `Decodable`).
        public static let decodingFailed = Code(.decodingFailed)
        /// A downloaded file could not be moved to (or prepared at) its destination.
        public static let destinationFailed = Code(.destinationFailed)
        /// Writing or reading a local file failed (download staging, disk full…).
        public static let fileSystem = Code(.fileSystem)
        /// An upload body (file or stream) could not be read.
        public static let uploadSourceFailed = Code(.uploadSourceFailed)
        /// A download did not match its expected length or SHA-256; nothing was published.
        public static let integrityFailed = Code(.integrityFailed)
        /// Resume data was truncated, tampered with, of an unknown version, or points at a file
        /// Courier will not append to.
        public static let invalidResumeData = Code(.invalidResumeData)
        /// A ``RequestAdapter`` refused the request; nothing was sent.
        public static let adaptationFailed = Code(.adaptationFailed)
        /// A redirect was not followed: a scheme other than http/https, a loop, too many hops,
        /// or the redirect policy refused it.
        public static let redirectRefused = Code(.redirectRefused)

        /// The server's response contradicts itself or HTTP: a `Content-Length` or `Content-Range`
        /// that is not plain digits within range, a 206 longer than its range or answering a
        /// request that asked for none, partial answers that stop making progress, a body that
        /// ends short of the length announced. Nothing is published; a download keeps the bytes
        /// its headers proved (``resumeData``).
        public static let invalidResponse = Code(.invalidResponse)
        /// The task's whole-request deadline passed (``SessionManager/Configuration/deadline``,
        /// ``DownloadPolicy/deadline``). A download keeps its bytes for resuming (``resumeData``).
        public static let deadlineExceeded = Code(.deadlineExceeded)
        /// A streamed body's consumer fell more than ``StreamPolicy/bufferLimit`` bytes behind the
        /// network and the stream could not pause (``StreamPolicy/Overflow/fail``, or a byte
        /// resource without a strong validator). The bytes already held were delivered first.
        public static let bufferOverflow = Code(.bufferOverflow)
        /// A download queue store (``DownloadQueueStore``) refused an operation on a lease that is
        /// no longer this worker's: it expired, or another worker took the item over (its fencing
        /// token moved on). The worker must stop the item and publish nothing.
        public static let leaseLost = Code(.leaseLost)
        /// A download queue store could not be reached or used: its client library is missing
        /// (the message names the package to install), the server refused the connection or the
        /// credentials, or a statement failed. No secret of the connection string is in the message.
        public static let storeUnavailable = Code(.storeUnavailable)
        /// A download queue store holds data this version cannot use: a schema of a newer version,
        /// a damaged schema, or a row edited by hand into something the store never writes.
        public static let storeIncompatible = Code(.storeIncompatible)

        /// The code's name, e.g. `timedOut`.
        public var description: String { kind.rawValue }

        /// Whether the code is one of the transport codes (see ``CourierError/isTransport``).
        public var isTransport: Bool {
            switch kind {
            case .network, .dnsFailed, .connectionRefused, .connectionLost, .tlsFailed, .noResponse, .networkUnreachable: return true
            case .tlsPinMismatch, .tlsCertificateUntrusted, .tlsCertificateExpired, .tlsHostNameMismatch,
                .tlsClientCertificateRequired:
                return true
            default: return false
            }
        }

        /// Whether the code is about TLS: ``tlsFailed`` and the precise TLS codes (a pin, trust,
        /// expiry, host name, client certificate, a policy that cannot be enforced).
        public var isTLS: Bool {
            switch kind {
            case .tlsFailed, .tlsPinMismatch, .tlsCertificateUntrusted, .tlsCertificateExpired, .tlsHostNameMismatch,
                .tlsClientCertificateRequired, .tlsPolicyUnenforceable:
                return true
            default: return false
            }
        }

        /// Whether a later attempt of the same request may succeed where this one failed: the one
        /// definition of "transient" that request retries (``RetryPolicy``), download retries
        /// (``DownloadPolicy/retry``), event-stream reconnection (``EventStream``) and the download
        /// queue's ``DownloadQueue/Failure/isRetryable`` all use.
        ///
        /// True for ``timedOut``, ``connectionRefused``, ``connectionLost``, ``noResponse`` and
        /// ``network``; false for every other code. Why each undecided case falls where it does:
        /// - ``dnsFailed``: false. A name that did not resolve is almost always a typo or a
        ///   configuration problem, and asking again a moment later gets the same answer (libcurl
        ///   does not tell a lasting "no such name" from a resolver hiccup).
        /// - ``tlsFailed``: false. An untrusted, expired or mismatched certificate, or a plain-HTTP
        ///   server on an https URL, fails the same way on every attempt.
        /// - ``deadlineExceeded``: false. The deadline bounds the whole task, every attempt
        ///   included; once it has passed, no attempt of that task is left. (The download queue
        ///   tries such an item again on a later run, with a fresh deadline: a named condition of
        ///   its own, not a second meaning of transient.)
        /// - ``timedOut``: true. The server was silent for one request timeout; it may answer the next.
        /// - ``network``: true. It is the transport failure no precise code describes — mostly
        ///   libcurl text Courier does not classify ("Weird server reply", Docs/Platform.md §2.12),
        ///   `notConnectedToInternet`, `cannotParseResponse`. The code cannot tell the rare lasting
        ///   one apart, and one bounded retry costs less than giving up on the common passing one.
        ///
        /// A status (``unacceptableStatusCode``) is never transient by its code: which statuses are
        /// worth another try is ``RetryPolicy/retryableStatusCodes``' decision.
        public var isTransient: Bool {
            switch kind {
            case .timedOut, .connectionRefused, .connectionLost, .noResponse, .network: return true
            case .dnsFailed, .tlsFailed, .deadlineExceeded, .networkUnreachable: return false
            // A certificate or a pin fails the same way on every attempt.
            case .tlsPinMismatch, .tlsCertificateUntrusted, .tlsCertificateExpired, .tlsHostNameMismatch,
                .tlsClientCertificateRequired, .tlsPolicyUnenforceable:
                return false
            case .sessionInvalidated, .cancelled, .invalidRequest, .responseTooLarge, .unacceptableStatusCode,
                .unacceptableContentType, .unacceptableResponse, .emptyResponse, .decodingFailed, .destinationFailed, .fileSystem,
                .uploadSourceFailed, .integrityFailed, .invalidResumeData, .adaptationFailed, .redirectRefused,
                .invalidResponse, .bufferOverflow, .leaseLost, .storeUnavailable, .storeIncompatible:
                return false
            }
        }
    }

    /// What kind of failure this is.
    public let code: Code
    /// A sentence for people: what happened, and where. Any `scheme://…` URL in it has been
    /// through ``Redaction/default`` (``Redaction/redactingURLs(in:)``), whatever text it was
    /// created with.
    public let message: String
    /// The request URL, when known, **in clear**: user info and query parameters as requested,
    /// for code that needs them (to retry, to refresh a presigned URL). Never print or log it as
    /// it is: ``description`` shows it through ``Redaction/default``, and ``Redaction/url(_:)``
    /// through any redaction.
    public var url: URL?
    /// The HTTP response, when one arrived (also for network errors after the head).
    public var response: HTTPURLResponse?
    /// The response body received, when there was one (for HTTP status failures, the error page).
    public var body: Data?
    /// The error this one wraps (`URLError`, `DecodingError`, `POSIXError`…).
    public var underlyingError: (any Error)?
    /// For a download that failed after receiving some bytes: what is needed to continue it
    /// with ``SessionManager/downloadTask(resumingFrom:request:to:policy:validation:queue:progress:completion:)``.
    public var resumeData: ResumeData?

    /// Creates an error; Courier's own code uses the static factories. The URLs in `message`
    /// are masked (``Redaction/default``) before it is kept.
    public init(
        code: Code, message: String, url: URL? = nil, response: HTTPURLResponse? = nil,
        body: Data? = nil, underlyingError: (any Error)? = nil
    ) {
        self.code = code
        // Masked here, once, so that no message can carry a secret whatever built it: libcurl's
        // text, a refusal naming a Location, a wrapped error's description.
        self.message = Redaction.default.redactingURLs(in: message)
        self.url = url
        self.response = response
        self.body = body
        self.underlyingError = underlyingError
    }

    /// The HTTP status code of ``response``, if any.
    public var statusCode: Int? { response?.statusCode }

    /// Whether this error means the caller cancelled the task.
    public var isCancellation: Bool { code == .cancelled }

    /// Whether this is a transport failure: ``Code-swift.struct/network``,
    /// ``Code-swift.struct/dnsFailed``, ``Code-swift.struct/connectionRefused``,
    /// ``Code-swift.struct/connectionLost``, ``Code-swift.struct/tlsFailed`` or
    /// ``Code-swift.struct/noResponse`` — everything that used to be `network` alone. Not
    /// ``Code-swift.struct/timedOut``, which never was.
    public var isTransport: Bool { code.isTransport }

    /// `"<code>: <message> (<url>)"`, plus the underlying error, with the URL and every URL in
    /// the underlying error's text (a `URLError` names the failing URL) through
    /// ``Redaction/default``.
    public var description: String {
        let redaction = Redaction.default
        var text = "\(code): \(message)"
        if let url { text += " (\(redaction.url(url)))" }
        if let underlyingError { text += " [underlying: \(redaction.redactingURLs(in: String(describing: underlyingError)))]" }
        return text
    }

    /// The same error with response context filled in where it was missing.
    func adding(url: URL?, response: HTTPURLResponse?, body: Data?) -> CourierError {
        var copy = self
        if copy.url == nil { copy.url = url ?? response?.url }
        if copy.response == nil { copy.response = response }
        if copy.body == nil, let body, !body.isEmpty { copy.body = body }
        return copy
    }
}
