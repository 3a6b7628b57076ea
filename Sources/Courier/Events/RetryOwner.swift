/// Who decided a retry (Docs/Retries.md, "Who retries what"): the row of the retry table a
/// ``TaskRetryEvent`` comes from.
///
/// A struct with static members rather than an enum, so that more owners can be named without
/// breaking a `switch` in code that reads them.
public struct RetryOwner: Hashable, Sendable, CustomStringConvertible {
    /// The owner's name in logs: `attempt`, `split-connection`.
    public let name: String

    private init(_ name: String) { self.name = name }

    /// The task's attempt retry: its retry policy or its interceptor's retriers sent the whole
    /// request again (a refusal retry included).
    public static let attempt = RetryOwner("attempt")
    /// A split download's connection failed (a reset, a refusal, a short answer) and its crew
    /// handed the rest of its range to another connection (Docs/SegmentedDownloads.md, "Failures").
    public static let splitConnection = RetryOwner("split-connection")

    /// The owner's name.
    public var description: String { name }
}
