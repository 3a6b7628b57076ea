import Foundation
internal import CourierSupport

/// Which ``TLSPolicy`` applies to which server: one for every https host, and others for
/// particular hosts (Alamofire's `ServerTrustManager`). Set on
/// ``SessionManager/Configuration/tls``.
///
/// The rule (``policy(for:)``), one place for every request and every redirect: an `https` URL
/// gets the policy of its `host:port` if there is one, else that of its host, else ``default``;
/// `nil` means the system's trust with nothing added. A plain `http` URL gets none (there is no
/// TLS to apply it to). Host names compare case-insensitively; IPv6 addresses are written in
/// brackets (`[::1]:8443`).
public struct TLSPolicies: Sendable, Hashable {
    /// The policy for every https host the ``hosts`` do not name; `nil` for the system's trust.
    public var `default`: TLSPolicy?
    /// Policies for particular hosts, by `host` or `host:port`.
    public var hosts: [String: TLSPolicy] {
        get { byKey }
        set { byKey = Dictionary(newValue.map { (Self.normalized($0.key), $0.value) }, uniquingKeysWith: { _, last in last }) }
    }
    private var byKey: [String: TLSPolicy] = [:]

    /// A policy for every host, others for the hosts named.
    public init(default: TLSPolicy? = nil, hosts: [String: TLSPolicy] = [:]) {
        self.default = `default`
        self.hosts = hosts
    }

    /// Whether any host has a policy of its own (else every https request gets ``default``).
    var hasHostPolicies: Bool { !byKey.isEmpty }

    /// Whether no policy is set: every request gets the system's trust.
    public var isEmpty: Bool { self.default == nil && byKey.isEmpty }

    /// The policy for a request to `url`, or `nil` for the system's trust (always `nil` for
    /// plain http).
    public func policy(for url: URL) -> TLSPolicy? {
        guard !isEmpty, let scheme = url.scheme, Self.isHTTPS(scheme), let rawHost = url.host, !rawHost.isEmpty else { return nil }
        // Every request asks (TLSEnforcer.stamped): with no host keys there is nothing to build.
        if byKey.isEmpty { return self.default }
        // A URL's host has no white space to trim (Foundation's trimming is most of the cost).
        let host = rawHost.lowercased()
        let port = url.port ?? 443
        let bracketed = host.contains(":") ? "[\(host)]" : host
        return byKey["\(bracketed):\(port)"] ?? byKey[bracketed] ?? byKey[host] ?? self.default
    }

    /// `scheme` is "https" in any case, without making a lowercased copy.
    private static func isHTTPS(_ scheme: String) -> Bool {
        ASCIICase.equals(scheme, "https")
    }

    /// Lower case, and an IPv6 literal in brackets kept as written.
    private static func normalized(_ key: String) -> String {
        key.lowercased().trimmingCharacters(in: .whitespaces)
    }
}
