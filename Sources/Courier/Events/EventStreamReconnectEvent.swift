import Foundation

/// An event stream is about to reconnect, as reported to
/// ``EventMonitor/eventStreamWillReconnect(_:)``: why its connection ended, which reconnection
/// this is, how long it waits first, and the `Last-Event-ID` it sends. Announced once per
/// reconnection, when it is decided, before the wait.
public struct EventStreamReconnectEvent: Sendable {
    /// The stream's request URL (in clear: print it through a ``Redaction``).
    public let url: URL?
    /// Which reconnection this is: 1 for the first, counting every reconnection of the stream.
    public let reconnection: Int
    /// Reconnections in a row that failed before this one (no connection, or one that ended
    /// before an event); the stream gives up past ``ReconnectPolicy/maximumAttempts``.
    public let failuresInARow: Int
    /// Why the last connection ended: the error, or `nil` when the server ended the response normally.
    public let reason: CourierError?
    /// How long the stream waits before connecting again (the server's `retry:` or the policy's
    /// delay, with backoff and the rate limit applied).
    public let delay: Duration
    /// The `Last-Event-ID` the reconnection sends; `nil` before any event had an id.
    public let lastEventID: String?
    /// Who reconnects: always ``RetryOwner/reconnect`` (Docs/Retries.md), named so that every
    /// "try again" event carries its owner.
    public var owner: RetryOwner { .reconnect }

    /// Creates an event; Courier creates them, tests of monitors may too.
    public init(
        url: URL?, reconnection: Int, failuresInARow: Int, reason: CourierError?, delay: Duration, lastEventID: String?
    ) {
        self.url = url
        self.reconnection = reconnection
        self.failuresInARow = failuresInARow
        self.reason = reason
        self.delay = delay
        self.lastEventID = lastEventID
    }
}
