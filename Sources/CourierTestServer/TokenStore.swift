import CourierSupport
/// The bearer token `/authorized/…` accepts: one at a time, as an API that revokes a token when
/// it issues the next one (``TestServer/issueToken()``, ``TestServer/revokeToken()``).
final class TokenStore: Sendable {
    private struct State {
        var issued = 0
        var current: String?
    }
    private let state = Locked(State())

    /// A new token, `token-<n>`, which from now on is the only one accepted.
    func issue() -> String {
        state.withLock { state in
            state.issued += 1
            let token = "token-\(state.issued)"
            state.current = token
            return token
        }
    }

    /// No token is accepted until the next ``issue()``.
    func revoke() {
        state.withLock { $0.current = nil }
    }

    /// The token accepted now, if any.
    var current: String? { state.withLock { $0.current } }
}
