import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A credential an ``Authenticator`` applies to requests: an OAuth2 access token with its refresh
/// token and expiry, a session key… Courier never prints it: no message, log or error holds it.
public protocol AuthenticationCredential: Sendable {
    /// Whether the credential must be refreshed before it is used again. Return `true` a little
    /// before it really expires (a minute, say), so that a request does not leave with a token that
    /// dies on the way.
    var requiresRefresh: Bool { get }
}

/// What ``AuthenticationInterceptor`` needs to know about one kind of credential: how to put it on
/// a request, how to get a new one, and how to read a failure.
///
/// The interceptor calls these methods without holding its lock, from Courier's queues; keep
/// `apply`, `didRequest` and `isRequest` quick and free of blocking work.
public protocol Authenticator: Sendable {
    /// The credential this authenticator works with.
    associatedtype Credential: AuthenticationCredential

    /// Puts `credential` on `request` (usually an `Authorization` header).
    func apply(_ credential: Credential, to request: inout URLRequest)

    /// Gets a new credential to replace `credential` (for example from a token endpoint, with its
    /// refresh token). The interceptor runs at most one refresh at a time; every request that needs
    /// a credential meanwhile waits for this one. Throw to fail all of them
    /// (``AuthenticationError/Code-swift.struct/refreshFailed``).
    func refresh(_ credential: Credential) async throws -> Credential

    /// Gets a first credential when the interceptor holds none (it was made without one, or its
    /// `credential` was set to `nil`): a login, a client-credentials grant. It runs as a refresh
    /// does — once, however many requests wait for it, within the same timeout — and counts
    /// toward no ``RefreshWindow``. The default throws
    /// ``AuthenticationError/Code-swift.struct/missingCredential`` to every waiting request.
    func obtainCredential() async throws -> Credential

    /// Whether `request` failed because its credential was refused. The default is a 401. When
    /// `apply` leaves some hosts alone, check the host here too: another host's 401 must not
    /// refresh the credential.
    func didRequest(
        _ request: URLRequest, with response: HTTPURLResponse, failDueToAuthenticationError error: CourierError
    ) -> Bool

    /// Whether `request` carries `credential` (and not an older one). The default applies
    /// `credential` to a copy of `request` and compares the URL and the headers: they are the same
    /// only when `request` already carried it.
    func isRequest(_ request: URLRequest, authenticatedWith credential: Credential) -> Bool
}

extension Authenticator {
    /// Throws ``AuthenticationError/Code-swift.struct/missingCredential``: this authenticator
    /// only refreshes a credential it was given.
    public func obtainCredential() async throws -> Credential {
        throw AuthenticationError.missingCredential
    }

    /// A 401: the server refused the credential.
    public func didRequest(
        _ request: URLRequest, with response: HTTPURLResponse, failDueToAuthenticationError error: CourierError
    ) -> Bool {
        response.statusCode == 401
    }

    /// Applies `credential` to a copy of `request`: the request carried it when nothing changes.
    public func isRequest(_ request: URLRequest, authenticatedWith credential: Credential) -> Bool {
        var copy = request
        apply(credential, to: &copy)
        return copy.url == request.url && copy.allHTTPHeaderFields == request.allHTTPHeaderFields
    }
}
