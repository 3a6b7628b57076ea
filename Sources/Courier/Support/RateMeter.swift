import Foundation

/// The transfer rate over the last few seconds, from (time, bytes done) samples: what
/// ``ProgressFormat``'s lines show as the rate. The time is an argument (seconds on any monotonic
/// clock), so the meter reads no clock.
public struct RateMeter: Sendable {
    /// How far back the rate looks, in seconds.
    public let window: Double
    /// The shortest span worth computing a rate over; shorter spans give wild numbers.
    public let minimumSpan: Double
    private var samples: [(time: Double, bytes: Int64)] = []

    /// A meter looking `window` seconds back, giving no rate over less than `minimumSpan`.
    public init(window: Double = 5, minimumSpan: Double = 0.25) {
        self.window = window
        self.minimumSpan = minimumSpan
    }

    /// Records that `bytes` were done at `time` (seconds on a monotonic clock).
    public mutating func add(bytes: Int64, at time: Double) {
        // Fewer bytes than before means the download started over: the old samples mean nothing.
        if let last = samples.last, bytes < last.bytes || time < last.time { samples.removeAll() }
        samples.append((time, bytes))
        // Keep one sample at or before the window's start, so the span covers the whole window.
        while samples.count > 2, samples[1].time <= time - window { samples.removeFirst() }
    }

    /// Bytes per second over the window, or `nil` until the samples span `minimumSpan`.
    public var bytesPerSecond: Double? {
        guard let first = samples.first, let last = samples.last, last.time - first.time >= minimumSpan else {
            return nil
        }
        return Double(last.bytes - first.bytes) / (last.time - first.time)
    }
}
