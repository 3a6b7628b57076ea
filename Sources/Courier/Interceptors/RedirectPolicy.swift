import Foundation
internal import CourierSupport
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What to do with a redirect (per manager, or per task with ``CourierTask/redirect(using:)``).
///
/// Whatever the policy, Courier refuses redirects to schemes other than http and https (read from
/// the raw `Location` header: URLSession on Linux rewrites `file://…` into a same-origin http URL),
/// detects loops, and strips credentials when the origin changes.
public struct RedirectPolicy: Sendable {
    enum Action: Sendable {
        case follow
        case refuse
        case modify(@Sendable (URLRequest, HTTPURLResponse) -> URLRequest?)
    }
    let action: Action
    /// The most redirects followed for one request; one more is ``CourierError/Code-swift.struct/redirectRefused``.
    public var maximumHops: Int
    /// Header names (any case) removed when a redirect changes scheme, host or port, besides
    /// `Authorization`, `Proxy-Authorization` and `Cookie`.
    public var sensitiveHeaders: Set<String>

    /// Follow up to `maximumHops` redirects.
    public static func follow(maximumHops: Int = 10, sensitiveHeaders: Set<String> = []) -> RedirectPolicy {
        RedirectPolicy(action: .follow, maximumHops: maximumHops, sensitiveHeaders: sensitiveHeaders)
    }
    /// Follow up to 10 redirects.
    public static let follow = RedirectPolicy.follow()
    /// Never follow: the 3xx response is the task's response.
    public static let refuse = RedirectPolicy(action: .refuse, maximumHops: 0, sensitiveHeaders: [])
    /// Decide per redirect: return the request to send (changed as you like), or `nil` to stop at
    /// the 3xx response. Credentials are stripped across origins before `decide` sees the request.
    public static func modify(
        maximumHops: Int = 10, _ decide: @escaping @Sendable (URLRequest, HTTPURLResponse) -> URLRequest?
    ) -> RedirectPolicy {
        RedirectPolicy(action: .modify(decide), maximumHops: maximumHops, sensitiveHeaders: [])
    }

    /// Headers always removed on a cross-origin redirect, in lower case.
    static let credentialHeaders: Set<String> = ["authorization", "proxy-authorization", "cookie"]

    /// Scheme, host and port (with the scheme's default port) of `url`, in lower case.
    static func origin(of url: URL?) -> String? {
        guard let url, let rawScheme = url.scheme, let rawHost = url.host else { return nil }
        // Asked for every request (the per-host cap's key): no lowercased copies where the URL
        // is already in lower case, as it nearly always is.
        let scheme =
            ASCIICase.equals(rawScheme, "https")
            ? "https"
            : ASCIICase.equals(rawScheme, "http") ? "http" : rawScheme.lowercased()
        let host = rawHost.utf8.contains { $0 >= 0x80 || $0 != ASCIICase.folded($0) } ? rawHost.lowercased() : rawHost
        let port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : -1)
        // One buffer sized up front: four `+` reallocated as the key grew (callgrind: ~2k per request).
        var origin = ""
        origin.reserveCapacity(scheme.utf8.count + host.utf8.count + 10)
        origin += scheme
        origin += "://"
        origin += host
        origin += ":"
        origin += String(port)
        return origin
    }
}

/// A user name and password for HTTP authentication (Basic or Digest). Never written to disk.
public struct Credential: Sendable, Equatable {
    /// The user name.
    public var user: String
    /// The password.
    public var password: String

    /// A credential.
    public init(user: String, password: String) {
        self.user = user
        self.password = password
    }

    /// `Basic <base64(user:password)>` (RFC 7617).
    public var basicAuthorization: String {
        "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }
}
