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
    /// What this task stores in the response cache (``ResponseCacher``); `nil`: the rules of RFC 9111.
    var responseCacher: ResponseCacher? = nil

    /// The same options with the interceptor's adapters, and of its retriers only those that
    /// retry only refusals (``RequestRetrier/retriesOnlyRefusals``: an authentication challenge
    /// answered): for a task whose other retries are someone else's (an event stream's
    /// connection: the stream reconnects). A refused request goes through the one retry path
    /// whatever the task's kind; anything else is the stream's to retry.
    var keepingOnlyRefusalRetriers: TaskOptions {
        var options = self
        options.interceptor = interceptor?.keepingOnlyRefusalRetriers
        return options
    }
}
