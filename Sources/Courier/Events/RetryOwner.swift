/// Who decided to try again (Docs/Retries.md, "Who retries what"): one row of the retry table.
/// Every place in Courier that sends a request again, or starts a process again, names its owner
/// here, and the event it announces itself with carries it: ``TaskRetryEvent/owner``,
/// ``TaskContinuationEvent/owner``, ``TaskPauseEvent/owner``, ``EventStreamReconnectEvent/owner``,
/// ``DownloadQueue/Change/retry``.
///
/// A struct with static members rather than an enum, so that more owners can be named without
/// breaking a `switch` in code that reads them.
public struct RetryOwner: Hashable, Sendable, CustomStringConvertible {
    /// The owner's name in logs and in Docs/Retries.md: `attempt`, `split-connection`, …
    public let name: String

    private init(_ name: String) { self.name = name }

    /// The task's attempt retry: its retry policy or its interceptor's retriers sent the whole
    /// request again after a transient failure or a retryable status.
    public static let attempt = RetryOwner("attempt")
    /// A refusal retry: a retrier that retries only refusals (``AuthenticationInterceptor``)
    /// refreshed the credential after a 401 and sent the request again.
    public static let refresh = RetryOwner("refresh")
    /// A split download's connection failed (a reset, a refusal, a short answer) and its crew
    /// handed the rest of its range to another connection (Docs/SegmentedDownloads.md, "Failures").
    public static let splitConnection = RetryOwner("split-connection")
    /// A body that ended short of its announced length without an error, continued with `Range`.
    /// Not a retry: it spends none (``TaskContinuationEvent``).
    public static let continuation = RetryOwner("continuation")
    /// A transfer that stopped because the disk or the stream's consumer fell behind, continued
    /// with `Range` once it caught up (``TaskPauseEvent``). Not a retry.
    public static let pause = RetryOwner("pause")
    /// A transport failure while the host had no route, sent again once the route is back
    /// (`waitsForConnectivity`, Docs/Reachability.md). Spends no retry (``TaskPauseEvent``,
    /// reason `connectivity`).
    public static let routeWait = RetryOwner("route-wait")
    /// An event stream's reconnection (``ReconnectPolicy``, ``EventStreamReconnectEvent``).
    public static let reconnect = RetryOwner("reconnect")
    /// A download queue asked its refresher for a new URL after a status suggesting the old one
    /// expired (``DownloadQueue/Configuration/refresher``, ``DownloadQueue/Change/retry``).
    public static let queueRefresh = RetryOwner("queue-refresh")
    /// `courier get`'s supervisor started its child process again after a FoundationNetworking
    /// trap: the loop is ``ProcessSupervisor/run(arguments:environment:input:killingAt:restart:)``,
    /// whose `restart` is the caller's policy (the command line tool's; it prints a line for each).
    public static let crashRestart = RetryOwner("crash-restart")

    /// Every owner, in the order of Docs/Retries.md's table.
    public static let all: [RetryOwner] = [
        .attempt, .refresh, .splitConnection, .continuation, .pause, .routeWait, .reconnect, .queueRefresh,
        .crashRestart,
    ]

    /// The owner's name.
    public var description: String { name }
}
