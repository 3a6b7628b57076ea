import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One attempt's redirects: how many were followed, which URLs they went through, and the one
/// decision for each redirect URLSession proposes.
///
/// A pure value: `TransferTask` keeps one per attempt (a retry starts a new one), asks it under
/// its lock, and performs what it says (records, events, the user's closure) itself. The rules:
/// - only `http` and `https` targets are followed (the raw `Location` is read: URLSession on Linux
///   rewrites `file://…` into a same-origin URL, Docs/Platform.md §2.3);
/// - at most ``RedirectPolicy/maximumHops`` redirects;
/// - a URL may come back once (A → B → A, as sign-in flows do), a third visit is a loop;
/// - credentials and secret headers never go to another origin (URLSession on Linux forwards them);
/// - 303 (but not for HEAD), and 301/302 after a POST, become a GET without a body (RFC 9110 §15.4);
///   307/308 keep the method, and a body is re-sent by Courier, because URLSession drops it.
struct RedirectState: Sendable, Equatable {
    /// Redirects followed (or refused for the hop limit) in this attempt.
    private(set) var count = 0
    /// URLs this attempt went through, with how often.
    private(set) var visited: [String: Int] = [:]

    /// What to do with a proposed redirect.
    enum Decision: Equatable {
        /// Stop at the 3xx response, which becomes the task's response (the policy, or its
        /// closure, refuses the redirect to `target`): not a failure.
        case stop(reason: String, target: URL?)
        /// Refuse it: the attempt fails with ``CourierError/Code-swift.struct/redirectRefused``,
        /// "refused a redirect " + `what`.
        case fail(what: String, target: URL?)
        /// Follow `next`. `resend`: Courier sends it itself with a new task (a 307/308 with a
        /// body); `stripped`: the header names removed because the origin changes.
        case follow(URLRequest, resend: Bool, stripped: [String])
    }

    /// The decision for the redirect `response` answers `current` with, URLSession proposing
    /// `proposed`. `secretHeaders` (lower case) are removed when the origin changes; `hasBody`
    /// says whether `current` carries a body (an upload's is not in `httpBody`).
    mutating func decide(
        _ response: HTTPURLResponse, proposed: URLRequest, current: URLRequest, policy: RedirectPolicy,
        secretHeaders: Set<String>, hasBody: Bool
    ) -> Decision {
        if case .refuse = policy.action { return .stop(reason: "the redirect policy refuses redirects", target: nil) }
        let location = response.value(forHTTPHeaderField: "Location")
        let resolved = location.flatMap { URL(string: $0, relativeTo: response.url)?.absoluteURL }
        guard let target = resolved, Self.isFollowable(target) else {
            return .fail(what: "to \(location ?? "no Location"): only http and https redirects are followed", target: resolved)
        }
        count += 1
        guard count <= policy.maximumHops else { return .fail(what: "after \(policy.maximumHops) redirects", target: target) }
        if let from = current.url, visited[from.absoluteString] == nil { visited[from.absoluteString] = 1 }
        guard visited[target.absoluteString, default: 0] < 2 else {
            return .fail(what: "to \(target.absoluteString): a redirect loop", target: target)
        }
        visited[target.absoluteString, default: 0] += 1
        var next = proposed
        next.url = target
        let stripped = Self.stripSecrets(from: &next, leaving: current, secretHeaders: secretHeaders)
        let method = (current.httpMethod ?? "GET").uppercased()
        var resend = false
        switch response.statusCode {
        case 303 where method != "HEAD", 301 where method == "POST", 302 where method == "POST":
            next.httpMethod = "GET"
            next.httpBody = nil
            next.setValue(nil, forHTTPHeaderField: "Content-Type")
            next.setValue(nil, forHTTPHeaderField: "Content-Length")
        case 307, 308:
            next.httpMethod = method
            if hasBody {
                next.httpBody = current.httpBody
                resend = true
            }
        default:
            break
        }
        return .follow(next, resend: resend, stripped: stripped)
    }

    /// What a ``RedirectPolicy/modify(maximumHops:_:)`` closure returned for `offered` (a
    /// ``Decision/follow(_:resend:stripped:)``'s request), given the same checks as any redirect:
    /// `nil` stops at the 3xx; a target that is not http or https fails; secrets are removed again
    /// when the closure changed the origin. `stripped` is what ``decide`` removed.
    static func vet(
        _ decided: URLRequest?, offered: URLRequest, leaving current: URLRequest, secretHeaders: Set<String>, resend: Bool,
        stripped: [String]
    ) -> Decision {
        guard var decided else { return .stop(reason: "the redirect policy's closure refused it", target: offered.url) }
        guard let url = decided.url, isFollowable(url) else {
            return .fail(what: "to \(decided.url?.absoluteString ?? "no URL"): only http and https are followed", target: decided.url)
        }
        let alsoStripped = stripSecrets(from: &decided, leaving: current, secretHeaders: secretHeaders)
        return .follow(decided, resend: resend, stripped: stripped + alsoStripped)
    }

    /// The headers removed on a cross-origin redirect: the credential headers, the policy's
    /// sensitive headers and the task's, all lower case.
    static func secretHeaders(_ policy: RedirectPolicy, taskSensitiveHeaders: Set<String>) -> Set<String> {
        RedirectPolicy.credentialHeaders.union(policy.sensitiveHeaders.map { $0.lowercased() }).union(taskSensitiveHeaders)
    }

    private static func isFollowable(_ url: URL) -> Bool {
        let scheme = url.scheme?.lowercased()
        return scheme == "http" || scheme == "https"
    }

    /// Removes `secretHeaders` from `next` when it goes to another origin than `current`; returns
    /// the names removed, sorted.
    private static func stripSecrets(from next: inout URLRequest, leaving current: URLRequest, secretHeaders: Set<String>) -> [String] {
        guard RedirectPolicy.origin(of: current.url) != RedirectPolicy.origin(of: next.url) else { return [] }
        var stripped: [String] = []
        for name in (next.allHTTPHeaderFields ?? [:]).keys where secretHeaders.contains(name.lowercased()) {
            next.setValue(nil, forHTTPHeaderField: name)
            stripped.append(name)
        }
        return stripped.sorted()
    }
}
