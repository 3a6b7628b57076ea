import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One event in a task's life, as one value: what ``ClosureEventMonitor/onEvent`` receives and
/// what ``LoggingMonitor`` writes. Each case matches one ``EventMonitor`` method.
public enum TaskEvent: Sendable {
    /// ``EventMonitor/taskDidCreate(_:)``.
    case created
    /// ``EventMonitor/taskDidResume(_:)``.
    case resumed
    /// ``EventMonitor/taskDidSuspend(_:)``.
    case suspended
    /// ``EventMonitor/taskDidAdaptRequest(_:event:)``.
    case adapted(TaskAdaptationEvent)
    /// ``EventMonitor/taskDidStartAttempt(_:event:)``.
    case attemptStarted(TaskAttemptEvent)
    /// ``EventMonitor/taskWillContinue(_:event:)``.
    case continuing(TaskContinuationEvent)
    /// ``EventMonitor/taskDidRedirect(_:event:)``.
    case redirected(TaskRedirectEvent)
    /// ``EventMonitor/taskDidAnswerChallenge(_:event:)``.
    case challenge(TaskChallengeEvent)
    /// ``EventMonitor/taskDidReceiveResponse(_:response:)``.
    case response(HTTPURLResponse)
    /// ``EventMonitor/taskWillRetry(_:event:)``.
    case retrying(TaskRetryEvent)
    /// ``EventMonitor/taskDidPause(_:event:)``.
    case paused(TaskPauseEvent)
    /// ``EventMonitor/taskDidEndPause(_:event:)``.
    case pauseEnded(TaskPauseEvent)
    /// ``EventMonitor/taskDidUpdateConnections(_:event:)``.
    case connections(TaskConnectionsEvent)
    /// ``EventMonitor/taskDidPublishDownload(_:file:)``.
    case published(URL)
    /// ``EventMonitor/taskDidComplete(_:event:)``.
    case completed(TaskCompletionEvent)

    /// A short name for logs: `created`, `attempt`, `response`, `retry`, `completed`…
    public var name: String {
        switch self {
        case .created: return "created"
        case .resumed: return "resumed"
        case .suspended: return "suspended"
        case .adapted: return "adapted"
        case .attemptStarted: return "attempt"
        case .continuing: return "continue"
        case .redirected: return "redirect"
        case .challenge: return "challenge"
        case .response: return "response"
        case .retrying: return "retry"
        case .paused: return "pause"
        case .pauseEnded: return "pause-ended"
        case .connections: return "connections"
        case .published: return "published"
        case .completed: return "completed"
        }
    }
}

extension EventMonitor {
    /// Calls the method that matches `event`.
    public func receive(_ event: TaskEvent, for task: any SessionTask) {
        switch event {
        case .created: taskDidCreate(task)
        case .resumed: taskDidResume(task)
        case .suspended: taskDidSuspend(task)
        case .adapted(let event): taskDidAdaptRequest(task, event: event)
        case .attemptStarted(let event): taskDidStartAttempt(task, event: event)
        case .continuing(let event): taskWillContinue(task, event: event)
        case .redirected(let event): taskDidRedirect(task, event: event)
        case .challenge(let event): taskDidAnswerChallenge(task, event: event)
        case .response(let response): taskDidReceiveResponse(task, response: response)
        case .retrying(let event): taskWillRetry(task, event: event)
        case .paused(let event): taskDidPause(task, event: event)
        case .pauseEnded(let event): taskDidEndPause(task, event: event)
        case .connections(let event): taskDidUpdateConnections(task, event: event)
        case .published(let file): taskDidPublishDownload(task, file: file)
        case .completed(let event): taskDidComplete(task, event: event)
        }
    }
}

/// A request the interceptor's adapters changed.
public struct TaskAdaptationEvent: Sendable {
    /// The request before the adapters.
    public let original: URLRequest
    /// The request they produced, which is sent.
    public let adapted: URLRequest
    /// Which attempt (0 for the first request, then per retry).
    public let attempt: Int
}

/// A request handed to URLSession.
public struct TaskAttemptEvent: Sendable {
    /// 0 for the task's first request, then 1, 2, … (the attempt's number in ``TaskMetrics/attempts``).
    public let number: Int
    /// Why it was made.
    public let kind: TaskMetrics.Attempt.Kind
    /// The request as sent (after adapters).
    public let request: URLRequest
    /// The TLS policy the platform kit puts on this attempt, or `nil` for the system's trust (or
    /// plain http). ``TLSPolicy/isInsecure`` says when verification is off: ``LoggingMonitor``
    /// logs such an attempt as a warning.
    public let tlsPolicy: TLSPolicy?

    init(number: Int, kind: TaskMetrics.Attempt.Kind, request: URLRequest, tlsPolicy: TLSPolicy? = nil) {
        self.number = number
        self.kind = kind
        self.request = request
        self.tlsPolicy = tlsPolicy
    }
}

/// A request that continues a body with `Range`.
public struct TaskContinuationEvent: Sendable {
    /// The first byte asked for: the bytes held before it are kept.
    public let offset: Int64
    /// The `If-Range` validator sent with it (`nil`: none, when a download policy resumes without one).
    public let validator: String?
    /// Why the body continues (the attempt's kind: retry, continuation after a short body or a
    /// pause, or `resume()` after `suspend()`).
    public let kind: TaskMetrics.Attempt.Kind
    /// Who continues it (Docs/Retries.md): ``RetryOwner/attempt`` or ``RetryOwner/refresh`` for a
    /// retry, ``RetryOwner/continuation`` after a short body, ``RetryOwner/pause`` after a
    /// back-pressure pause, ``RetryOwner/routeWait`` after a wait for a route; `nil` for `resume()`.
    public let owner: RetryOwner?

    init(offset: Int64, validator: String?, kind: TaskMetrics.Attempt.Kind, owner: RetryOwner? = nil) {
        self.offset = offset
        self.validator = validator
        self.kind = kind
        self.owner = owner
    }
}

/// A redirect response and what Courier did with it.
public struct TaskRedirectEvent: Sendable {
    /// The 3xx response.
    public let response: HTTPURLResponse
    /// Where it led (`nil` when its `Location` was missing or unusable).
    public let target: URL?
    /// Whether it is followed.
    public let followed: Bool
    /// Why it was refused, when it was: a loop, too many hops, a scheme other than http(s), the policy.
    public let refusal: String?
    /// Header names removed from the next request because it goes to another origin.
    public let strippedHeaders: [String]
    /// The method of the next request (a 303 turns a POST into a GET).
    public let method: String?
}

/// A 401 challenge and whether the task's credential answered it.
public struct TaskChallengeEvent: Sendable {
    /// The 401 response.
    public let response: HTTPURLResponse
    /// The challenge's scheme (`Basic`, `Digest`), when one was read.
    public let scheme: String?
    /// Whether the request is sent again with the credential.
    public let answered: Bool
    /// Why it was not answered: no credential, another origin, the credential already refused,
    /// no usable challenge.
    public let reason: String?
}

/// A back-pressure pause: the transfer stopped because the disk or the stream's consumer fell
/// behind, and continues with `Range` once it has caught up.
public struct TaskPauseEvent: Sendable {
    /// What fell behind.
    public let reason: TaskMetrics.Pause.Reason
    /// Body bytes held (on disk, or delivered to the consumer) when it paused.
    public let bytesHeld: Int64
    /// For ``EventMonitor/taskDidEndPause(_:event:)``: how long the pause lasted.
    public let duration: Duration?

    /// Who continues the transfer after it (Docs/Retries.md): ``RetryOwner/pause`` when the disk
    /// or the consumer fell behind, ``RetryOwner/routeWait`` for a wait for a route; `nil` for
    /// `suspend()` (the caller's `resume()` continues it).
    public var owner: RetryOwner? {
        switch reason {
        case .disk, .consumer: return .pause
        case .connectivity: return .routeWait
        case .suspended: return nil
        }
    }
}

/// For ``EventMonitor/taskDidUpdateConnections(_:event:)``: a split download's connections now
/// (``DownloadPolicy/split``), a few times a second while they work and whenever one starts or stops.
public struct TaskConnectionsEvent: Sendable {
    /// One connection and the range it works on.
    public struct Connection: Sendable, Equatable {
        /// The connection's number within the download (1 is the first request's).
        public let id: Int
        /// The bytes of the file its range covers (start inclusive, end exclusive).
        public let range: Range<Int64>
        /// Bytes of that range written so far.
        public let written: Int64
        /// Its throughput over the last measured window, when measured.
        public let bytesPerSecond: Double?
        /// In the end game, the connection whose range's tail this one fetches too (the first to
        /// finish completes it); `nil` otherwise. Only such ranges overlap.
        public let racing: Int?
    }

    /// The connections working now, by number.
    public let connections: [Connection]
    /// The connections wanted now (the fixed split's count, or the automatic count).
    public let wanted: Int
    /// Bytes of the file written so far, by every connection.
    public let bytesWritten: Int64
    /// The file's length.
    public let length: Int64
}
