/// The schedule of a body paced at a rate (`rate=R`): a write may go out once the bytes it ends
/// at are due, counted from the response's start. Each write's time is measured from the start,
/// not from the previous write, so timer slack and slow `send`s do not add up: over the whole
/// response the rate is R. A rate divided part-way (`slow_at`) applies from that write on.
struct RatePacer: Sendable, Equatable {
    /// Bytes per second before any division.
    let bytesPerSecond: Int
    /// Seconds from the start at which the bytes scheduled so far are due.
    private(set) var dueSeconds: Double = 0

    /// A pacer at `bytesPerSecond` (at least 1).
    init(bytesPerSecond: Int) {
        self.bytesPerSecond = max(1, bytesPerSecond)
    }

    /// The size of each paced write: about 1/64 s of data, between 1 KiB and 64 KiB, so a
    /// fast rate costs few wake-ups and a slow one still moves steadily.
    static func writeSize(bytesPerSecond: Int) -> Int {
        min(64 * 1024, max(1024, bytesPerSecond / 64))
    }

    /// Schedules the next `bytes` at the rate divided by `divisor`; returns when, in seconds
    /// from the start, they may be sent (when their last byte is due).
    mutating func schedule(_ bytes: Int, divisor: Int = 1) -> Double {
        dueSeconds += Double(bytes) * Double(max(1, divisor)) / Double(bytesPerSecond)
        return dueSeconds
    }
}
