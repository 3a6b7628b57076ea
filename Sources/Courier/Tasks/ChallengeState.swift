import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One attempt's answer to `401 Unauthorized`: Courier answers a Basic or Digest challenge itself,
/// once, and only for the origin the task was made for (URLSession on Linux answers neither
/// reliably, Docs/Platform.md §2.4).
///
/// A pure value: `TransferTask` keeps one per attempt (a retry starts a new one) and performs what
/// ``decide(_:credential:request:originalURL:)`` says.
struct ChallengeState: Sendable, Equatable {
    /// The credential was sent in this attempt: a second 401 is refused, not answered again.
    private(set) var answered = false
    /// URLSession's own challenge for the current request was rejected (its task then ends as
    /// cancelled, which really means "401").
    var rejectedBySession = false

    /// What to do with a 401.
    enum Decision: Equatable {
        /// Send the request again with this `Authorization` value.
        case answer(authorization: String, scheme: String)
        /// Deliver the 401 as it is; `reason` says why it was not answered.
        case refuse(reason: String, scheme: String?)
    }

    /// Whether ``decide(_:credential:request:originalURL:)`` would answer this 401 (nothing changes).
    func wouldAnswer(_ response: HTTPURLResponse, credential: Credential?, request: URLRequest, originalURL: URL?) -> Bool {
        var copy = self
        if case .answer = copy.decide(response, credential: credential, request: request, originalURL: originalURL) { return true }
        return false
    }

    /// The decision for the 401 `response` to `request`, for a task made for `originalURL`.
    mutating func decide(_ response: HTTPURLResponse, credential: Credential?, request: URLRequest, originalURL: URL?) -> Decision {
        let header = response.value(forHTTPHeaderField: "WWW-Authenticate")
        let challenge = header.flatMap(AuthenticationChallenge.init(header:))
        guard let credential else { return .refuse(reason: "no credential is configured", scheme: challenge?.scheme) }
        guard !answered else { return .refuse(reason: "the credential was already sent and refused", scheme: challenge?.scheme) }
        guard let challenge else {
            return .refuse(
                reason: header == nil ? "the 401 has no WWW-Authenticate challenge" : "no supported challenge (Basic or Digest)",
                scheme: nil)
        }
        // Only the origin the task was made for gets the credential, never one a redirect led to.
        guard RedirectPolicy.origin(of: request.url) == RedirectPolicy.origin(of: originalURL) else {
            return .refuse(reason: "the credential is only sent to the origin the task was made for", scheme: challenge.scheme)
        }
        guard let authorization = challenge.authorization(for: request, credential: credential) else {
            return .refuse(reason: "the challenge could not be answered with this credential", scheme: challenge.scheme)
        }
        answered = true
        return .answer(authorization: authorization, scheme: challenge.scheme)
    }
}
