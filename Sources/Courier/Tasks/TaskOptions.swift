import Foundation

/// Per-task behaviour that can be set on the handle before it starts: taken from the manager's
/// configuration, then changed by ``CourierTask/redirect(using:)``,
/// ``CourierTask/authenticate(with:)`` and ``CourierTask/intercept(with:)``.
struct TaskOptions: Sendable {
    var interceptor: Interceptor?
    var redirectPolicy: RedirectPolicy
    var credential: Credential?
    /// Headers (lower case) stripped on cross-origin redirects, besides the credential headers.
    var sensitiveHeaders: Set<String>
    /// The whole-task deadline, counted from the first `resume()`.
    var deadline: Duration?
}
