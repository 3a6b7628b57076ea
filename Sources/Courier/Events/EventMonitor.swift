import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Observes what a manager's tasks do: a typed alternative to the `NotificationCenter`
/// notifications (Linux has no method swizzling, so Courier's task handles report these
/// events themselves).
///
/// Monitors are called synchronously on Courier's own queues, never while Courier holds a lock.
/// Keep them quick; hop to your own queue for real work. Every method has an empty default.
public protocol EventMonitor: Sendable {
    /// A task started or continued transferring.
    func taskDidResume(_ task: any SessionTask)
    /// A task was paused by Courier (its transfer stopped).
    func taskDidSuspend(_ task: any SessionTask)
    /// A task's attempt failed and another one starts after ``TaskRetryEvent/delay``: called once
    /// per retry, when it is decided, before the delay. Not called for the continuations a
    /// download makes after a body that ended short without an error, nor for its pauses for a
    /// slow disk: neither is a retry.
    func taskWillRetry(_ task: any SessionTask, event: TaskRetryEvent)
    /// A task finished; called once per task, just before its completion handler is dispatched.
    func taskDidComplete(_ task: any SessionTask, event: TaskCompletionEvent)
    /// The manager's session was invalidated (by `invalidate(cancelingTasks:)` or release).
    func sessionDidInvalidate(error: (any Error)?)
}

extension EventMonitor {
    /// Does nothing.
    public func taskDidResume(_ task: any SessionTask) {}
    /// Does nothing.
    public func taskDidSuspend(_ task: any SessionTask) {}
    /// Does nothing.
    public func taskWillRetry(_ task: any SessionTask, event: TaskRetryEvent) {}
    /// Does nothing.
    public func taskDidComplete(_ task: any SessionTask, event: TaskCompletionEvent) {}
    /// Does nothing.
    public func sessionDidInvalidate(error: (any Error)?) {}
}

/// What a task ended with, as reported to monitors and in `courierTaskDidComplete` notifications.
public struct TaskCompletionEvent: Sendable {
    /// The final HTTP response, if one arrived.
    public let response: HTTPURLResponse?
    /// The response body held in memory (data and upload tasks).
    public let data: Data?
    /// The serialized value, when serialization succeeded.
    public let value: (any Sendable)?
    /// Where a download task's file was published.
    public let fileURL: URL?
    /// The error, when the task failed.
    public let error: CourierError?
}

/// A failed attempt that is about to be retried, as reported to
/// ``EventMonitor/taskWillRetry(_:event:)`` and in `courierTaskWillRetry` notifications: enough to
/// tell a person what failed, how far the task had come, and when and how it goes on.
public struct TaskRetryEvent: Sendable {
    /// Why the attempt failed: a transient network error or timeout, or a retryable status (with
    /// its response, so `Retry-After` can be read).
    public let error: CourierError
    /// Which retry this is: 1 for the first.
    public let retry: Int
    /// How many retries are allowed in all: a download's ``DownloadPolicy/retryLimit``; `nil` when
    /// an interceptor's retrier decides (it alone knows its limit).
    public let retryLimit: Int?
    /// How long until the next attempt starts (a `Retry-After` the server sent, or backoff).
    public let delay: Duration
    /// Body bytes the task held when the attempt failed (for a download: in its partial file).
    public let bytesReceived: Int64
    /// Where the next attempt's body starts: ``bytesReceived`` when it continues with `Range`, 0
    /// when it starts over (no strong validator, or not a download).
    public let continuesFrom: Int64

    /// Creates an event; Courier creates them, tests of monitors may too.
    public init(
        error: CourierError, retry: Int, retryLimit: Int?, delay: Duration, bytesReceived: Int64, continuesFrom: Int64
    ) {
        self.error = error
        self.retry = retry
        self.retryLimit = retryLimit
        self.delay = delay
        self.bytesReceived = bytesReceived
        self.continuesFrom = continuesFrom
    }
}

/// An ``EventMonitor`` made of closures, for when a conforming type is more than you need.
public struct ClosureEventMonitor: EventMonitor {
    /// Called for ``EventMonitor/taskDidResume(_:)``.
    public var onResume: (@Sendable (any SessionTask) -> Void)?
    /// Called for ``EventMonitor/taskDidSuspend(_:)``.
    public var onSuspend: (@Sendable (any SessionTask) -> Void)?
    /// Called for ``EventMonitor/taskWillRetry(_:event:)``.
    public var onRetry: (@Sendable (any SessionTask, TaskRetryEvent) -> Void)?
    /// Called for ``EventMonitor/taskDidComplete(_:event:)``.
    public var onComplete: (@Sendable (any SessionTask, TaskCompletionEvent) -> Void)?
    /// Called for ``EventMonitor/sessionDidInvalidate(error:)``.
    public var onInvalidate: (@Sendable ((any Error)?) -> Void)?

    /// Creates a monitor from the closures given; the others do nothing.
    public init(
        onResume: (@Sendable (any SessionTask) -> Void)? = nil,
        onSuspend: (@Sendable (any SessionTask) -> Void)? = nil,
        onComplete: (@Sendable (any SessionTask, TaskCompletionEvent) -> Void)? = nil,
        onInvalidate: (@Sendable ((any Error)?) -> Void)? = nil,
        onRetry: (@Sendable (any SessionTask, TaskRetryEvent) -> Void)? = nil
    ) {
        self.onResume = onResume
        self.onSuspend = onSuspend
        self.onComplete = onComplete
        self.onInvalidate = onInvalidate
        self.onRetry = onRetry
    }

    public func taskDidResume(_ task: any SessionTask) { onResume?(task) }
    public func taskDidSuspend(_ task: any SessionTask) { onSuspend?(task) }
    public func taskWillRetry(_ task: any SessionTask, event: TaskRetryEvent) { onRetry?(task, event) }
    public func taskDidComplete(_ task: any SessionTask, event: TaskCompletionEvent) { onComplete?(task, event) }
    public func sessionDidInvalidate(error: (any Error)?) { onInvalidate?(error) }
}
