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

    /// The same options with the interceptor's adapters only: for a task whose retries are
    /// someone else's (an event stream's connection: the stream reconnects).
    var withoutRetriers: TaskOptions {
        var options = self
        options.interceptor = interceptor.map { Interceptor(adapters: $0.adapters) }
        return options
    }
}
