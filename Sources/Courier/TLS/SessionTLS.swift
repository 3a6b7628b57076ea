import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A manager's TLS policies as one of its URLSessions applies them: whether the session was bound
/// to the manager's one policy when it was made (``TLSEnforcer/makeSession(_:)``) decides whether
/// its requests need the private header at all.
struct SessionTLS: Sendable {
    let enforcer: TLSEnforcer
    /// The session's multi handle carries the manager's one policy: its requests go without the header.
    let isBound: Bool

    init(_ enforcer: TLSEnforcer, isBound: Bool = false) {
        self.enforcer = enforcer
        self.isBound = isBound
    }

    /// `request` as this session must send it (``TLSEnforcer/stamped(_:sessionBound:)``).
    func stamped(_ request: URLRequest) throws(CourierError) -> URLRequest {
        try enforcer.stamped(request, sessionBound: isBound)
    }

    /// The policy the kit puts on `request` (the manager's rule, ``TLSPolicies/policy(for:)``).
    func policy(for request: URLRequest) -> TLSPolicy? {
        request.url.flatMap(enforcer.policies.policy(for:))
    }

    /// The server `url` names and the policy it gets: what a TLS error says.
    func context(for url: URL?) -> TLSContext? { enforcer.context(for: url) }
}
