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

/// An ``EventMonitor`` made of closures, for when a conforming type is more than you need.
public struct ClosureEventMonitor: EventMonitor {
    /// Called for ``EventMonitor/taskDidResume(_:)``.
    public var onResume: (@Sendable (any SessionTask) -> Void)?
    /// Called for ``EventMonitor/taskDidSuspend(_:)``.
    public var onSuspend: (@Sendable (any SessionTask) -> Void)?
    /// Called for ``EventMonitor/taskDidComplete(_:event:)``.
    public var onComplete: (@Sendable (any SessionTask, TaskCompletionEvent) -> Void)?
    /// Called for ``EventMonitor/sessionDidInvalidate(error:)``.
    public var onInvalidate: (@Sendable ((any Error)?) -> Void)?

    /// Creates a monitor from the closures given; the others do nothing.
    public init(
        onResume: (@Sendable (any SessionTask) -> Void)? = nil,
        onSuspend: (@Sendable (any SessionTask) -> Void)? = nil,
        onComplete: (@Sendable (any SessionTask, TaskCompletionEvent) -> Void)? = nil,
        onInvalidate: (@Sendable ((any Error)?) -> Void)? = nil
    ) {
        self.onResume = onResume
        self.onSuspend = onSuspend
        self.onComplete = onComplete
        self.onInvalidate = onInvalidate
    }

    public func taskDidResume(_ task: any SessionTask) { onResume?(task) }
    public func taskDidSuspend(_ task: any SessionTask) { onSuspend?(task) }
    public func taskDidComplete(_ task: any SessionTask, event: TaskCompletionEvent) { onComplete?(task, event) }
    public func sessionDidInvalidate(error: (any Error)?) { onInvalidate?(error) }
}
