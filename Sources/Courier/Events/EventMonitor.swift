import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Observes what a manager's tasks do, from creation to completion: a typed alternative to the
/// `NotificationCenter` notifications (Linux has no method swizzling, so Courier's task handles
/// report these events themselves), and what ``LoggingMonitor`` is built on.
///
/// **Where monitors run.** Every event is handed to the manager's own serial event queue
/// (labelled `<label>.events`) and the monitors are called there, one event after another, in
/// the order the events happened. A monitor never runs under a Courier lock and never on the
/// queues that move bytes: a slow monitor delays the monitors, not the transfer (its events
/// wait in the queue). Hop to your own queue for long work. ``taskDidComplete(_:event:)`` is
/// queued before the task's completion handler is dispatched, but the two run on different
/// queues. With no monitor and notifications off, no event is even made. Every method has an
/// empty default.
///
/// The order of one task's events: ``taskDidCreate(_:)``, ``taskDidResume(_:)``, then per
/// request ``taskDidAdaptRequest(_:event:)`` (with adapters), ``taskDidStartAttempt(_:event:)``,
/// ``taskWillContinue(_:event:)`` (a `Range` continuation), ``taskDidRedirect(_:event:)`` and
/// ``taskDidAnswerChallenge(_:event:)`` as they happen, ``taskDidReceiveResponse(_:response:)``,
/// then ``taskWillRetry(_:event:)`` or ``taskDidPause(_:event:)``/``taskDidEndPause(_:event:)``
/// between attempts, ``taskDidPublishDownload(_:file:)`` for a download, and
/// ``taskDidComplete(_:event:)`` once, last. An event stream's reconnections, which tie several
/// connection tasks together, are ``eventStreamWillReconnect(_:)``.
public protocol EventMonitor: Sendable {
    /// A task was created (before its first `resume()`).
    func taskDidCreate(_ task: any SessionTask)
    /// A task started or continued transferring (its first `resume()`, or one after `suspend()`).
    func taskDidResume(_ task: any SessionTask)
    /// A task was paused by `suspend()` (its transfer stopped).
    func taskDidSuspend(_ task: any SessionTask)
    /// The interceptor's adapters changed a request before it was sent.
    func taskDidAdaptRequest(_ task: any SessionTask, event: TaskAdaptationEvent)
    /// A request went to URLSession: the first, a redirect hop, an authentication follow-up, a
    /// retry or a continuation. A hop comes right after its ``taskDidRedirect(_:event:)``
    /// (URLSession follows most redirects on the same connection; Courier re-sends a 307/308
    /// with a body itself).
    func taskDidStartAttempt(_ task: any SessionTask, event: TaskAttemptEvent)
    /// A request asks for the rest of a body with `Range` (after a retry, a body that ended
    /// short, a pause, or `resume()`).
    func taskWillContinue(_ task: any SessionTask, event: TaskContinuationEvent)
    /// A redirect was followed or refused.
    func taskDidRedirect(_ task: any SessionTask, event: TaskRedirectEvent)
    /// A 401 challenge was answered with the credential, or could not be.
    func taskDidAnswerChallenge(_ task: any SessionTask, event: TaskChallengeEvent)
    /// A final response head arrived (1xx excluded), before its body.
    func taskDidReceiveResponse(_ task: any SessionTask, response: HTTPURLResponse)
    /// A task's attempt failed and another one starts after ``TaskRetryEvent/delay``: called once
    /// per retry, when it is decided, before the delay. Not called for the continuations a
    /// download makes after a body that ended short without an error, nor for its pauses for a
    /// slow disk: neither is a retry.
    func taskWillRetry(_ task: any SessionTask, event: TaskRetryEvent)
    /// The transfer stopped because the disk or a stream's consumer fell behind (back-pressure).
    func taskDidPause(_ task: any SessionTask, event: TaskPauseEvent)
    /// A back-pressure pause ended: the next request continues the body.
    func taskDidEndPause(_ task: any SessionTask, event: TaskPauseEvent)
    /// A download's file was published at its destination (just before ``taskDidComplete(_:event:)``).
    func taskDidPublishDownload(_ task: any SessionTask, file: URL)
    /// A split download's connections changed, or were measured again (``TaskConnectionsEvent``).
    func taskDidUpdateConnections(_ task: any SessionTask, event: TaskConnectionsEvent)
    /// A task finished; called once per task, last of its events, with its ``TaskMetrics``.
    func taskDidComplete(_ task: any SessionTask, event: TaskCompletionEvent)
    /// The manager's session was invalidated (by `invalidate(cancelingTasks:)` or release).
    func sessionDidInvalidate(error: (any Error)?)
    /// An ``EventStream`` of this manager is about to reconnect: called once per reconnection,
    /// when it is decided, before its wait. Each connection is a task of its own, with its own
    /// events; this one ties them together.
    func eventStreamWillReconnect(_ event: EventStreamReconnectEvent)
}

extension EventMonitor {
    /// Does nothing.
    public func taskDidCreate(_ task: any SessionTask) {}
    /// Does nothing.
    public func taskDidResume(_ task: any SessionTask) {}
    /// Does nothing.
    public func taskDidSuspend(_ task: any SessionTask) {}
    /// Does nothing.
    public func taskDidAdaptRequest(_ task: any SessionTask, event: TaskAdaptationEvent) {}
    /// Does nothing.
    public func taskDidStartAttempt(_ task: any SessionTask, event: TaskAttemptEvent) {}
    /// Does nothing.
    public func taskWillContinue(_ task: any SessionTask, event: TaskContinuationEvent) {}
    /// Does nothing.
    public func taskDidRedirect(_ task: any SessionTask, event: TaskRedirectEvent) {}
    /// Does nothing.
    public func taskDidAnswerChallenge(_ task: any SessionTask, event: TaskChallengeEvent) {}
    /// Does nothing.
    public func taskDidReceiveResponse(_ task: any SessionTask, response: HTTPURLResponse) {}
    /// Does nothing.
    public func taskWillRetry(_ task: any SessionTask, event: TaskRetryEvent) {}
    /// Does nothing.
    public func taskDidPause(_ task: any SessionTask, event: TaskPauseEvent) {}
    /// Does nothing.
    public func taskDidEndPause(_ task: any SessionTask, event: TaskPauseEvent) {}
    /// Does nothing.
    public func taskDidPublishDownload(_ task: any SessionTask, file: URL) {}
    /// Does nothing.
    public func taskDidUpdateConnections(_ task: any SessionTask, event: TaskConnectionsEvent) {}
    /// Does nothing.
    public func taskDidComplete(_ task: any SessionTask, event: TaskCompletionEvent) {}
    /// Does nothing.
    public func sessionDidInvalidate(error: (any Error)?) {}
    /// Does nothing.
    public func eventStreamWillReconnect(_ event: EventStreamReconnectEvent) {}
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
    /// The task's timeline (``TaskMetrics/completedAt`` is set).
    public let metrics: TaskMetrics

    /// Creates an event; Courier creates them, tests of monitors may too.
    public init(
        response: HTTPURLResponse?, data: Data?, value: (any Sendable)?, fileURL: URL?, error: CourierError?,
        metrics: TaskMetrics
    ) {
        self.response = response
        self.data = data
        self.value = value
        self.fileURL = fileURL
        self.error = error
        self.metrics = metrics
    }
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
    /// How many retries are allowed in all: the limit of the task's own policy (a download's
    /// ``DownloadPolicy/retry``); `nil` when an interceptor's retrier decides (it alone knows its limit).
    public let retryLimit: Int?
    /// How long until the next attempt starts (a `Retry-After` the server sent, or backoff).
    public let delay: Duration
    /// Body bytes the task held when the attempt failed (for a download: in its partial file).
    public let bytesReceived: Int64
    /// Where the next attempt's body starts: ``bytesReceived`` when it continues with `Range`, 0
    /// when it starts over (no strong validator, or not a download).
    public let continuesFrom: Int64
    /// Who retries: the task's attempt retry (``RetryOwner/attempt``), or a split download's
    /// connection whose range another connection continues (``RetryOwner/splitConnection``:
    /// ``retry`` then counts the connections' failures in a row, ``retryLimit`` is how many end
    /// the split, and the task's attempt goes on).
    public let owner: RetryOwner

    /// Creates an event; Courier creates them, tests of monitors may too.
    public init(
        error: CourierError, retry: Int, retryLimit: Int?, delay: Duration, bytesReceived: Int64, continuesFrom: Int64,
        owner: RetryOwner = .attempt
    ) {
        self.owner = owner
        self.error = error
        self.retry = retry
        self.retryLimit = retryLimit
        self.delay = delay
        self.bytesReceived = bytesReceived
        self.continuesFrom = continuesFrom
    }
}

/// An ``EventMonitor`` made of closures, for when a conforming type is more than you need.
/// ``onEvent`` sees every event; the others only theirs.
public struct ClosureEventMonitor: EventMonitor {
    /// Called for every event, before the closure for that event (if any).
    public var onEvent: (@Sendable (any SessionTask, TaskEvent) -> Void)?
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
    /// Called for ``EventMonitor/eventStreamWillReconnect(_:)``.
    public var onStreamReconnect: (@Sendable (EventStreamReconnectEvent) -> Void)?

    /// Creates a monitor from the closures given; the others do nothing.
    public init(
        onResume: (@Sendable (any SessionTask) -> Void)? = nil,
        onSuspend: (@Sendable (any SessionTask) -> Void)? = nil,
        onComplete: (@Sendable (any SessionTask, TaskCompletionEvent) -> Void)? = nil,
        onInvalidate: (@Sendable ((any Error)?) -> Void)? = nil,
        onRetry: (@Sendable (any SessionTask, TaskRetryEvent) -> Void)? = nil,
        onEvent: (@Sendable (any SessionTask, TaskEvent) -> Void)? = nil,
        onStreamReconnect: (@Sendable (EventStreamReconnectEvent) -> Void)? = nil
    ) {
        self.onResume = onResume
        self.onSuspend = onSuspend
        self.onComplete = onComplete
        self.onInvalidate = onInvalidate
        self.onRetry = onRetry
        self.onEvent = onEvent
        self.onStreamReconnect = onStreamReconnect
    }

    /// Calls ``onEvent``, then the closure for this event.
    public func receive(_ event: TaskEvent, for task: any SessionTask) {
        onEvent?(task, event)
        switch event {
        case .resumed: onResume?(task)
        case .suspended: onSuspend?(task)
        case .retrying(let retry): onRetry?(task, retry)
        case .completed(let completion): onComplete?(task, completion)
        default: break
        }
    }

    /// Passes `.created` to `receive(_:for:)`.
    public func taskDidCreate(_ task: any SessionTask) { receive(.created, for: task) }
    /// Passes `.resumed` to `receive(_:for:)`, which calls `onResume`.
    public func taskDidResume(_ task: any SessionTask) { receive(.resumed, for: task) }
    /// Passes `.suspended` to `receive(_:for:)`, which calls `onSuspend`.
    public func taskDidSuspend(_ task: any SessionTask) { receive(.suspended, for: task) }
    /// Passes `.adapted` to `receive(_:for:)`.
    public func taskDidAdaptRequest(_ task: any SessionTask, event: TaskAdaptationEvent) { receive(.adapted(event), for: task) }
    /// Passes `.attemptStarted` to `receive(_:for:)`.
    public func taskDidStartAttempt(_ task: any SessionTask, event: TaskAttemptEvent) {
        receive(.attemptStarted(event), for: task)
    }
    /// Passes `.continuing` to `receive(_:for:)`.
    public func taskWillContinue(_ task: any SessionTask, event: TaskContinuationEvent) {
        receive(.continuing(event), for: task)
    }
    /// Passes `.redirected` to `receive(_:for:)`.
    public func taskDidRedirect(_ task: any SessionTask, event: TaskRedirectEvent) { receive(.redirected(event), for: task) }
    /// Passes `.challenge` to `receive(_:for:)`.
    public func taskDidAnswerChallenge(_ task: any SessionTask, event: TaskChallengeEvent) {
        receive(.challenge(event), for: task)
    }
    /// Passes `.response` to `receive(_:for:)`.
    public func taskDidReceiveResponse(_ task: any SessionTask, response: HTTPURLResponse) {
        receive(.response(response), for: task)
    }
    /// Passes `.retrying` to `receive(_:for:)`, which calls `onRetry`.
    public func taskWillRetry(_ task: any SessionTask, event: TaskRetryEvent) { receive(.retrying(event), for: task) }
    /// Passes `.paused` to `receive(_:for:)`.
    public func taskDidPause(_ task: any SessionTask, event: TaskPauseEvent) { receive(.paused(event), for: task) }
    /// Passes `.pauseEnded` to `receive(_:for:)`.
    public func taskDidEndPause(_ task: any SessionTask, event: TaskPauseEvent) { receive(.pauseEnded(event), for: task) }
    /// Passes `.published` to `receive(_:for:)`.
    public func taskDidPublishDownload(_ task: any SessionTask, file: URL) { receive(.published(file), for: task) }
    /// Passes `.connections` to `receive(_:for:)`.
    public func taskDidUpdateConnections(_ task: any SessionTask, event: TaskConnectionsEvent) {
        receive(.connections(event), for: task)
    }
    /// Passes `.completed` to `receive(_:for:)`, which calls `onComplete`.
    public func taskDidComplete(_ task: any SessionTask, event: TaskCompletionEvent) { receive(.completed(event), for: task) }
    /// Calls `onInvalidate`, if set.
    public func sessionDidInvalidate(error: (any Error)?) { onInvalidate?(error) }
    /// Calls `onStreamReconnect`, if set.
    public func eventStreamWillReconnect(_ event: EventStreamReconnectEvent) { onStreamReconnect?(event) }
}
