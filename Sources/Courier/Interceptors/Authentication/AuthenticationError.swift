/// Why ``AuthenticationInterceptor`` could not authenticate a request.
///
/// It reaches the task the way every adapter's refusal does: the task completes with
/// ``CourierError/Code-swift.struct/adaptationFailed``, this error as
/// ``CourierError/underlyingError``, and nothing sent. Every request that waited for one refresh
/// gets the same error. Its text never holds the credential: for a refresh that threw, it names
/// the thrown error's type only (the full error is ``underlyingError``), or — for a
/// ``CourierError`` from the token endpoint, whose text is already redacted — its description.
public struct AuthenticationError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is. Compare with the static members.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Kind: String, Sendable {
            case missingCredential, refreshFailed, refreshTimedOut, excessiveRefresh
        }
        private let kind: Kind
        private init(_ kind: Kind) { self.kind = kind }

        /// The interceptor holds no credential, and its authenticator cannot obtain one (its
        /// ``Authenticator/obtainCredential()`` is the default).
        public static let missingCredential = Code(.missingCredential)
        /// ``Authenticator/refresh(_:)`` threw; ``AuthenticationError/underlyingError`` is what it threw.
        public static let refreshFailed = Code(.refreshFailed)
        /// The refresh did not finish within ``AuthenticationInterceptor``'s `refreshTimeout`.
        public static let refreshTimedOut = Code(.refreshTimedOut)
        /// The server refused the credential again, and the refresh that would answer it would
        /// exceed the ``RefreshWindow``: a refresh loop.
        public static let excessiveRefresh = Code(.excessiveRefresh)

        /// The code's name, e.g. `refreshFailed`.
        public var description: String { kind.rawValue }
    }

    /// What kind of failure this is.
    public let code: Code
    /// A sentence for people, without the credential.
    public let message: String
    /// What ``Authenticator/refresh(_:)`` threw, for ``Code-swift.struct/refreshFailed``.
    public let underlyingError: (any Error)?

    private init(code: Code, message: String, underlyingError: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.underlyingError = underlyingError
    }

    /// `"<code>: <message>"`.
    public var description: String { "\(code): \(message)" }

    static let missingCredential = AuthenticationError(
        code: .missingCredential,
        message: "the authentication interceptor has no credential to send, and its authenticator cannot obtain one")

    static func refreshFailed(_ error: any Error) -> AuthenticationError {
        // Only a CourierError's text is known to be safe (it is redacted); another error's text
        // might hold the refresh token it was sending, so only its type is named.
        let cause = (error as? CourierError)?.description ?? "\(type(of: error)) thrown by the authenticator"
        return AuthenticationError(
            code: .refreshFailed, message: "the credential refresh failed: \(cause)", underlyingError: error)
    }

    static func refreshTimedOut(after timeout: Duration) -> AuthenticationError {
        AuthenticationError(code: .refreshTimedOut, message: "the credential refresh did not finish within \(timeout)")
    }

    static func excessiveRefresh(_ window: RefreshWindow) -> AuthenticationError {
        AuthenticationError(
            code: .excessiveRefresh,
            message: "the server refused the credential \(window.maximumAttempts) times within \(window.interval), "
                + "each time refreshed; no further refresh is started (RefreshWindow)")
    }
}
