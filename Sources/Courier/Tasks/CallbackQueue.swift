import Dispatch

/// Where Courier calls a task's completion and progress handlers.
///
/// Never the main queue by default: a Linux service usually has no main run loop, so work sent
/// there would never run.
public enum CallbackQueue: Sendable {
    /// The manager's completion queue (its own serial queue unless the configuration names one).
    case `default`
    /// A queue of your choice.
    case on(DispatchQueue)
    /// Directly on Courier's processing thread, with no extra hop. The handler must be quick and
    /// thread-safe; the async APIs use this to resume their continuations.
    case immediate
}
