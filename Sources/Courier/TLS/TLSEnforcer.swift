import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
internal import CCourierPlatformFixes

/// A manager's TLS policies, handed to the platform kit (Docs/TLS.md).
///
/// Made once per manager: each distinct policy is turned into libcurl options (CA files read
/// now) and registered with the kit under a random token. ``stamped(_:sessionBound:)`` is the one
/// place a request gets its policy: it names the token in a private header (``headerName``) that
/// the kit takes out of the list libcurl sends, and it refuses — before anything is sent — a
/// request whose policy cannot be enforced. Every attempt (TransferTask.createAttempt) and every
/// redirect URLSession follows (TransferTask+FollowUps.swift) goes through it.
///
/// A manager whose every https request gets one policy (a default and no host policies) needs no
/// header: ``makeSession(_:)`` binds each of its URLSessions to that policy as the session is made,
/// and the kit puts it on every transfer of a bound session. Setting the header cost ~6 % of a
/// small request (FoundationNetworking copies and validates the headers); the header stays for
/// host policies and for a session whose binding the kit could not confirm.
final class TLSEnforcer: Sendable {
    /// The private header that carries a policy's token to the kit; never sent.
    static let headerName = COURIER_TLS_HEADER

    let policies: TLSPolicies
    /// Each policy's token, or why it cannot be registered (a CA file that cannot be read…).
    private let registrations: [TLSPolicy: Result<TLSRegistry.Entry, CourierError>]
    /// The default policy's registration, found without hashing a policy per request.
    private let defaultRegistration: Result<TLSRegistry.Entry, CourierError>?

    init(_ policies: TLSPolicies) {
        self.policies = policies
        var registrations: [TLSPolicy: Result<TLSRegistry.Entry, CourierError>] = [:]
        for policy in [policies.default].compactMap({ $0 }) + Array(policies.hosts.values) where registrations[policy] == nil {
            registrations[policy] = TLSRegistry.register(policy)
        }
        self.registrations = registrations
        defaultRegistration = policies.default.flatMap { registrations[$0] }
        // One policy for every request, registered and enforceable: sessions can carry it.
        if policies.default != nil, !policies.hasHostPolicies, case .success(let entry)? = defaultRegistration,
            Self.unenforceableReason(needing: entry.options) == nil
        {
            sessionToken = entry.token
        } else {
            sessionToken = nil
        }
    }

    /// The token of the one policy every request gets, when sessions can be bound to it.
    private let sessionToken: String?

    /// The URLSession `make` returns, bound to the manager's one policy when there is one; `bound`
    /// is `true` only when the kit confirms that the session's multi handle carries it (URLSession
    /// makes its multi handle in its initializer, on this thread). Unbound, every request of the
    /// session carries the header.
    func makeSession(_ make: () -> URLSession) -> (session: URLSession, bound: Bool) {
        guard let sessionToken else { return (make(), false) }
        courier_tls_bind_begin(sessionToken)
        let session = make()
        return (session, courier_tls_bind_end() == 1)
    }

    /// `request` with its policy's token, or without any token when no policy applies or when
    /// `sessionBound` (the session it goes to carries the manager's one policy: ``makeSession(_:)``).
    /// Throws ``CourierError/Code-swift.struct/tlsPolicyUnenforceable`` when a policy applies and
    /// cannot be enforced: the request must not be sent.
    func stamped(_ request: URLRequest, sessionBound: Bool = false) throws(CourierError) -> URLRequest {
        // Most managers have no policy: nothing to look at. A bound session needs no header (its
        // one policy was found enforceable when the manager was made).
        guard !policies.isEmpty, !(sessionBound && sessionToken != nil), let url = request.url else { return request }
        var request = request
        guard let token = try token(for: url) else {
            if request.value(forHTTPHeaderField: Self.headerName) != nil { request.setValue(nil, forHTTPHeaderField: Self.headerName) }
            return request
        }
        request.setValue(token, forHTTPHeaderField: Self.headerName)
        return request
    }

    /// The token of the policy `url` gets, `nil` when none applies; throws
    /// ``CourierError/Code-swift.struct/tlsPolicyUnenforceable`` when the policy cannot be enforced.
    /// The one rule for a request (``stamped(_:sessionBound:)``) and for a connection Courier
    /// makes with libcurl itself (`CurlByteStream`, wss://).
    func token(for url: URL) throws(CourierError) -> String? {
        guard !policies.isEmpty, let policy = policies.policy(for: url) else { return nil }
        let entry: TLSRegistry.Entry
        let registration = policies.hasHostPolicies ? registrations[policy] : defaultRegistration
        switch registration ?? TLSRegistry.register(policy) {
        case .success(let registered): entry = registered
        case .failure(let error): throw error.adding(url: url, response: nil, body: nil)
        }
        if let reason = Self.unenforceableReason(needing: entry.options) {
            throw CourierError(
                code: .tlsPolicyUnenforceable,
                message: "the TLS policy for \(TLSContext.hostAndPort(url)) cannot be enforced: \(reason); nothing was sent "
                    + "[TLS policy: \(policy)]",
                url: url)
        }
        return entry.token
    }

    /// Why the kit cannot enforce a policy needing `options` (the kit's COURIER_TLS_OPTION_ bits)
    /// in this process, or `nil` when it can.
    static func unenforceableReason(needing options: UInt32) -> String? {
        let supported = UInt32(courier_tls_supported())
        if supported == 0 {
            let status = PlatformFixes.status
            switch status.state {
            case .disabled:
                return
                    "Courier's platform kit is turned off (\(status.reason ?? PlatformFixes.environmentVariable)), and only the kit can apply it"
            case .inert:
                return "Courier's platform kit is inert here (\(status.reason ?? "unknown")), and only the kit can apply it"
            case .notInstalled:
                return "Courier's platform kit is not installed"
            case .active:
                return "the kit's wrappers for curl_easy_setopt, curl_multi_add_handle and curl_easy_cleanup are not in place"
            }
        }
        return missingOptions(needing: options, supported: supported)
    }

    /// "this libcurl does not support …" for the options in `needed` that `supported` lacks (the
    /// kit's COURIER_TLS_OPTION_ bits), or `nil`: a pure function, tested without a libcurl that
    /// lacks them.
    static func missingOptions(needing needed: UInt32, supported: UInt32) -> String? {
        let missing = TLSRegistry.optionNames.filter { needed & $0.bit != 0 && supported & $0.bit == 0 }.map(\.name)
        guard missing.isEmpty else { return "this libcurl does not support \(missing.joined(separator: ", "))" }
        return nil
    }

    /// The server `url` names and the policy it gets: what a TLS error says.
    func context(for url: URL?) -> TLSContext? {
        guard let url, url.scheme?.lowercased() == "https" else { return nil }
        return TLSContext(host: TLSContext.hostAndPort(url), policy: policies.policy(for: url))
    }
}

/// The server a TLS error happened with, and its policy, as an error message says them.
struct TLSContext: Sendable, CustomStringConvertible {
    var host: String
    var policy: TLSPolicy?

    /// "host 127.0.0.1:8443; TLS policy: pins sha256//…" — never a key password.
    var description: String {
        "host \(host); " + (policy.map { "TLS policy: \($0)" } ?? "no TLS policy: system trust")
    }

    static func hostAndPort(_ url: URL) -> String {
        let host = url.host ?? "?"
        let port = url.port ?? (url.scheme?.lowercased() == "http" ? 80 : 443)
        return (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
    }
}
