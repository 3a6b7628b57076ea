import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A way Courier sends a request again by itself, without the caller asking for that send.
///
/// ``isAllowed(_:for:optedIn:)`` is the one rule for it. A request that is not safe to repeat is
/// never sent again automatically: an LLM's `POST /v1/chat/completions` sent twice is two
/// answers paid for, and an event stream that sent it again after every normal end paid forever
/// (issue 20). Retries are the other kind of re-send, and the caller configures them
/// (``RetryPolicy/retryableMethods``, or a retrier of its own), so they are decided there. A
/// request the server refused unprocessed — a 401 an ``AuthenticationInterceptor`` answers with a
/// new credential — is sent again whatever its method and task kind, a `POST` stream included:
/// nothing was processed, so nothing is repeated (``RequestRetrier/retriesOnlyRefusals``).
enum AutomaticResend: Sendable, Equatable {
    /// The whole request again: an event stream reconnecting after its response ended or dropped.
    case reconnection
    /// The rest of a body with `Range`/`If-Range`: a stream continuing after a pause for its
    /// consumer, a retry or `resume()` after bytes were delivered, a download resuming.
    case rangeContinuation

    /// Whether `request` may be sent again this way. `optedIn` says the caller declared repeating
    /// it harmless (``ReconnectPolicy/reconnectsAnyMethod``).
    ///
    /// - A reconnection: GET or HEAD, whose repeat costs only the transfer; any other method only
    ///   when the caller opted in.
    /// - A `Range` continuation: GET only, opted in or not. Range is defined for GET alone (RFC 9110
    ///   §14.2), so a server answers any other method whole or not at all: a POST is never continued.
    static func isAllowed(_ resend: AutomaticResend, for request: URLRequest, optedIn: Bool = false) -> Bool {
        let method = (request.httpMethod ?? "GET").uppercased()
        switch resend {
        case .reconnection: return method == "GET" || method == "HEAD" || optedIn
        case .rangeContinuation: return method == "GET"
        }
    }
}
