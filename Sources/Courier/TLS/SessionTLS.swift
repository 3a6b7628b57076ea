import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A manager's TLS policies as one of its URLSessions applies them: whether the session was bound
/// to the manager's one policy when it was made (``TLSEnforcer/makeSession(_:)``) decides whether
/// its requests need the private header at all. It also knows whether the session's requests ask
/// the kit for the header diet: both are marks the kit reads from a request's header list.
struct SessionTLS: Sendable {
    let enforcer: TLSEnforcer
    /// The session's multi handle carries the manager's one policy: its requests go without the header.
    let isBound: Bool
    /// The session's requests are marked for the header diet (``HeadDiet/marked(_:)``).
    let headerDiet: Bool

    init(_ enforcer: TLSEnforcer, isBound: Bool = false, headerDiet: Bool = false) {
        self.enforcer = enforcer
        self.isBound = isBound
        self.headerDiet = headerDiet
    }

    /// `request` as this session must send it (``TLSEnforcer/stamped(_:sessionBound:)``).
    func stamped(_ request: URLRequest) throws(CourierError) -> URLRequest {
        try enforcer.stamped(request, sessionBound: isBound)
    }

    /// `request` as it is handed to FoundationNetworking (a task made, a redirect followed): with
    /// the header diet's mark when this session's requests carry it. Courier's own records — events,
    /// timelines, the request a redirect decision sees — keep it without (``HeadDiet/unmarked(_:)``).
    func handedOver(_ request: URLRequest) -> URLRequest {
        headerDiet ? HeadDiet.marked(request) : request
    }

    /// The policy the kit puts on `request` (the manager's rule, ``TLSPolicies/policy(for:)``).
    func policy(for request: URLRequest) -> TLSPolicy? {
        request.url.flatMap(enforcer.policies.policy(for:))
    }

    /// The server `url` names and the policy it gets: what a TLS error says.
    func context(for url: URL?) -> TLSContext? { enforcer.context(for: url) }
}
