import Foundation
import CourierSupport

/// A monotonic clock for the timings: wall-clock time can jump (NTP), this cannot.
enum MonotonicClock {
    /// Seconds since an arbitrary fixed point (`CLOCK_MONOTONIC`).
    static func seconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}

/// Measures the timed part of a run: wall time on the monotonic clock, and the CPU time the
/// process spent in between (a difference, so setup and warm-up are not counted).
struct Stopwatch {
    private let usage = ResourceUsage.now()
    private let start = MonotonicClock.seconds()

    /// What the span from creation to `end` (a `MonotonicClock` reading) cost.
    func stop(at end: Double) -> (seconds: Double, cpuSeconds: Double, maxRSSKiB: Int) {
        let now = ResourceUsage.now()
        return (end - start, now.cpuSeconds - usage.cpuSeconds, now.maxRSSKiB)
    }
}

/// `--timeout` as the deadline of the whole run, fixed when the run starts.
struct Deadline {
    let seconds: Double
    private let end: DispatchTime

    init(seconds: Double) {
        self.seconds = seconds
        end = .now() + seconds
    }

    /// Waits for `semaphore`; `false` when the deadline passed first.
    func wait(for semaphore: DispatchSemaphore) -> Bool {
        semaphore.wait(timeout: end) == .success
    }

    /// Whether the deadline has passed (for work that cannot be waited on with a timeout).
    var hasPassed: Bool { DispatchTime.now() >= end }

    /// The error for a run that did not finish in time; `progress` says how far it got.
    func exceeded(_ progress: String) -> BenchFailure {
        BenchFailure("did not finish within --timeout \(ResultLine.seconds(seconds)) s (\(progress))")
    }
}

/// The result of one request, and when it arrived, handed from the client's queue to the
/// waiting main thread.
final class Arrival<Value: Sendable>: Sendable {
    private let value = Locked<(value: Value, at: Double)?>(nil)
    private let arrived = DispatchSemaphore(value: 0)

    /// Stores `value` with the time it arrived; call once.
    func deliver(_ value: Value) {
        let now = MonotonicClock.seconds()
        self.value.withLock { $0 = (value, now) }
        arrived.signal()
    }

    /// The value and its arrival time, or `nil` when `deadline` passed first.
    func wait(until deadline: Deadline) -> (value: Value, at: Double)? {
        guard deadline.wait(for: arrived) else { return nil }
        return value.withLock { $0 }
    }
}
